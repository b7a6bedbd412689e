#!/usr/bin/env bash
# A local lab of real access paths on loopback: two embedded target nodes sharing one store
# (a two-node cluster, each naming itself in x-ingestbench-node), a local CA and server
# certificate, and in front of them real nginx (default) or Apache httpd (mod_proxy_balancer +
# mod_ssl):
#   https-lb    HTTPS + round-robin load balancer over both nodes   127.0.0.1:$BASE+443
#   http-lb     HTTP  + round-robin load balancer over both nodes   127.0.0.1:$BASE+80
#   direct      node 1 itself                                       127.0.0.1:$BASE+81
#   https-proxy HTTPS plain reverse proxy to node 1                 127.0.0.1:$BASE+444
#   http-proxy  HTTP  plain reverse proxy to node 1                 127.0.0.1:$BASE+82
# (node 2 listens on $BASE+91). Writes matching access-method files (pointing at the lab CA)
# to access-methods/lab/ and prints them.
#
#   scripts/lab.sh up [--frontend nginx|httpd]    # idempotent
#   scripts/lab.sh status
#   scripts/lab.sh down                           # stops everything it started, by pid
#
# With --backend java (up|down|status|fetch), a real Java cluster instead: two Tomcat 9 nodes
# running the OpenCMIS FileShare repository over one shared directory, behind Apache httpd
# (mod_jk over AJP, mod_proxy) and HAProxy, on its own ports (LAB_JAVA_BASE_PORT, default
# 19000), writing CMIS access methods to access-methods/lab-java/; see scripts/lab-java.sh.
#
# Environment: LAB_DIR (default .lab), LAB_BASE_PORT (default 18000), LAB_METHODS_DIR
# (default access-methods/lab), INGESTBENCH_BIN (default: cargo build --release).
# Servers run with private configs under $LAB_DIR; nothing in /etc is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
LAB=$(realpath -m "${LAB_DIR:-$ROOT/.lab}")
METHODS=$(realpath -m "${LAB_METHODS_DIR:-$ROOT/access-methods/lab}")
BASE=${LAB_BASE_PORT:-18000}
P_HTTPS_LB=$((BASE + 443)) P_HTTP_LB=$((BASE + 80)) P_NODE1=$((BASE + 81)) P_NODE2=$((BASE + 91))
P_HTTPS_PROXY=$((BASE + 444)) P_HTTP_PROXY=$((BASE + 82))

die() { echo "lab: $*" >&2; exit 2; }
# Running, and not a zombie (a killed server whose parent has not reaped it yet).
alive() {
  [ -f "$1" ] || return 1
  local pid; pid=$(cat "$1")
  kill -0 "$pid" 2>/dev/null || return 1
  [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
  for _ in $(seq 200); do port_open "$1" && return 0; sleep 0.05; done
  die "nothing answers on 127.0.0.1:$1 after 10 s ($2); see $LAB/logs/"
}

need() { # command package
  command -v "$1" >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] || die "$1 is missing: install the Debian package $2 (as root: apt-get install $2)"
  echo "lab: installing $2" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "$2" >/dev/null
}

pidfiles() { ls "$LAB"/run/*.pid 2>/dev/null || true; }

status() {
  [ -d "$LAB/run" ] || { echo "lab: down (no $LAB)"; return 0; }
  local any=0
  for p in $(pidfiles); do
    if alive "$p"; then echo "  $(basename "$p" .pid): running, pid $(cat "$p")"; any=1
    else echo "  $(basename "$p" .pid): not running (stale pid file)"; fi
  done
  [ "$any" = 1 ] && echo "lab: up ($(cat "$LAB/run/frontend" 2>/dev/null || echo '?')), methods in $METHODS" || echo "lab: down"
}

down() {
  [ -d "$LAB/run" ] || { echo "lab: down"; return 0; }
  local fe; fe=$(cat "$LAB/run/frontend" 2>/dev/null || true)
  if alive "$LAB/run/frontend.pid"; then
    case "$fe" in
      nginx) nginx -p "$LAB/nginx" -c "$LAB/nginx/nginx.conf" -s stop 2>/dev/null || true ;;
      httpd) apache2 -f "$LAB/httpd/httpd.conf" -k stop 2>/dev/null || true ;;
    esac
  fi
  for p in $(pidfiles); do
    alive "$p" && kill "$(cat "$p")" 2>/dev/null || true
  done
  for p in $(pidfiles); do
    for _ in $(seq 100); do alive "$p" || break; sleep 0.05; done
    if alive "$p"; then kill -9 "$(cat "$p")" 2>/dev/null || true; sleep 0.1; fi
    alive "$p" && die "could not stop pid $(cat "$p") ($p)"
    rm -f "$p"
  done
  # Apache children outlive the parent for a moment: wait until none holds a lab port.
  for port in $P_HTTPS_LB $P_HTTP_LB $P_HTTPS_PROXY $P_HTTP_PROXY $P_NODE1 $P_NODE2; do
    for _ in $(seq 100); do port_open "$port" || break; sleep 0.05; done
    port_open "$port" && die "something still listens on 127.0.0.1:$port"
  done
  rm -f "$LAB/run/frontend"
  echo "lab: down"
}

tls() {
  mkdir -p "$LAB/tls"
  [ -s "$LAB/tls/server.pem" ] && return 0
  need openssl openssl
  ( cd "$LAB/tls"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30 -subj "/CN=ingestbench lab CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > ext.cnf
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 30 -extfile ext.cnf 2>/dev/null )
}

# --node-cpus: puts pid $2 (all its threads) under a CPU quota of $NODE_CPUS CPUs in a cgroup
# of its own, as a container's CPU limit would: v1 `cpu` under /sys/fs/cgroup/cpu, else v2
# `cpu.max` where the cpu controller is available. Dies naming the cause when neither can be
# written. `down` removes the groups.
cpu_quota() { # name pid
  [ -n "${NODE_CPUS:-}" ] || return 0
  local q g root
  q=$(awk -v c="$NODE_CPUS" 'BEGIN { if (c + 0 < 0.01) exit 1; printf "%d", c * 100000 }') \
    || die "--node-cpus $NODE_CPUS: a number of CPUs of at least 0.01 (e.g. 0.5)"
  g=/sys/fs/cgroup/cpu/ingestbench-lab-$1
  if [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] \
    && { mkdir -p "$g" && echo 100000 >"$g/cpu.cfs_period_us" && echo "$q" >"$g/cpu.cfs_quota_us" \
      && echo "$2" >"$g/cgroup.procs"; } 2>/dev/null; then
    echo "lab: $1 (pid $2) under a CPU quota of $NODE_CPUS CPUs ($g)"
    return 0
  fi
  for root in /sys/fs/cgroup/unified /sys/fs/cgroup; do
    grep -qw cpu "$root/cgroup.controllers" 2>/dev/null || continue
    echo +cpu >"$root/cgroup.subtree_control" 2>/dev/null || true
    g=$root/ingestbench-lab-$1
    if { mkdir -p "$g" && echo "$q 100000" >"$g/cpu.max" && echo "$2" >"$g/cgroup.procs"; } 2>/dev/null; then
      echo "lab: $1 (pid $2) under a CPU quota of $NODE_CPUS CPUs ($g)"
      return 0
    fi
  done
  die "--node-cpus $NODE_CPUS: cannot write a cgroup for $1 (neither v1 /sys/fs/cgroup/cpu nor a v2 hierarchy with the cpu controller is writable here); run as root or drop --node-cpus"
}

# Removes the lab's quota groups (their processes are gone).
cpu_quota_down() {
  local g
  for g in /sys/fs/cgroup/cpu/ingestbench-lab-* /sys/fs/cgroup/unified/ingestbench-lab-* /sys/fs/cgroup/ingestbench-lab-*; do
    [ -d "$g" ] && rmdir "$g" 2>/dev/null || true
  done
}

start_node() { # name port
  local pidf="$LAB/run/$1.pid"
  alive "$pidf" && return 0
  port_open "$2" && die "port $2 (for $1) is in use; set LAB_BASE_PORT to move the lab"
  rm -f "$LAB/run/$1.port"
  # --node-cpus: the target puts itself under the quota (and says why not, exit 2).
  nohup "$BIN" target --listen "127.0.0.1:$2" --data-dir "$LAB/store" --node-name "$1" \
    --port-file "$LAB/run/$1.port" ${NODE_CPUS:+--node-cpus "$NODE_CPUS"} >"$LAB/logs/$1.log" 2>&1 &
  echo $! >"$pidf"
  wait_port "$2" "target $1"
}

nginx_conf() {
  mkdir -p "$LAB/nginx/tmp" "$LAB/nginx/logs"
  cat >"$LAB/nginx/nginx.conf" <<CONF
user root;
worker_processes 2;
pid $LAB/run/frontend.pid;
error_log $LAB/logs/nginx-error.log warn;
events { worker_connections 2048; }
http {
  access_log off;
  client_body_temp_path $LAB/nginx/tmp/body;
  proxy_temp_path $LAB/nginx/tmp/proxy;
  fastcgi_temp_path $LAB/nginx/tmp/fastcgi;
  uwsgi_temp_path $LAB/nginx/tmp/uwsgi;
  scgi_temp_path $LAB/nginx/tmp/scgi;
  client_max_body_size 0;
  client_body_buffer_size 1m;
  keepalive_requests 100000;
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host \$host:\$server_port;
  proxy_read_timeout 300s;
  proxy_send_timeout 300s;
  # A zone shares the round-robin position between the worker processes.
  upstream nodes { zone nodes 64k; server 127.0.0.1:$P_NODE1; server 127.0.0.1:$P_NODE2; keepalive 128; }
  upstream node1 { zone node1 64k; server 127.0.0.1:$P_NODE1; keepalive 128; }
  server {
    listen 127.0.0.1:$P_HTTPS_LB ssl http2;
    ssl_certificate $LAB/tls/server.pem; ssl_certificate_key $LAB/tls/server.key;
    location / { proxy_pass http://nodes; }
  }
  server { listen 127.0.0.1:$P_HTTP_LB; location / { proxy_pass http://nodes; } }
  server {
    listen 127.0.0.1:$P_HTTPS_PROXY ssl http2;
    ssl_certificate $LAB/tls/server.pem; ssl_certificate_key $LAB/tls/server.key;
    location / { proxy_pass http://node1; }
  }
  server { listen 127.0.0.1:$P_HTTP_PROXY; location / { proxy_pass http://node1; } }
}
CONF
}

httpd_conf() {
  mkdir -p "$LAB/httpd"
  local m=/usr/lib/apache2/modules
  cat >"$LAB/httpd/httpd.conf" <<CONF
ServerRoot "$LAB/httpd"
ServerName localhost
PidFile $LAB/run/frontend.pid
DefaultRuntimeDir $LAB/httpd
ErrorLog $LAB/logs/httpd-error.log
LogLevel warn
User nobody
Group nogroup
LoadModule mpm_event_module $m/mod_mpm_event.so
LoadModule authz_core_module $m/mod_authz_core.so
LoadModule headers_module $m/mod_headers.so
LoadModule proxy_module $m/mod_proxy.so
LoadModule proxy_http_module $m/mod_proxy_http.so
LoadModule proxy_balancer_module $m/mod_proxy_balancer.so
LoadModule slotmem_shm_module $m/mod_slotmem_shm.so
LoadModule lbmethod_byrequests_module $m/mod_lbmethod_byrequests.so
LoadModule socache_shmcb_module $m/mod_socache_shmcb.so
LoadModule ssl_module $m/mod_ssl.so
LimitRequestBody 0
Timeout 300
KeepAlive On
MaxKeepAliveRequests 0
SSLSessionCache shmcb:$LAB/httpd/ssl_scache(512000)
Listen 127.0.0.1:$P_HTTPS_LB https
Listen 127.0.0.1:$P_HTTP_LB http
Listen 127.0.0.1:$P_HTTPS_PROXY https
Listen 127.0.0.1:$P_HTTP_PROXY http
<Proxy "balancer://nodes">
  BalancerMember "http://127.0.0.1:$P_NODE1"
  BalancerMember "http://127.0.0.1:$P_NODE2"
  ProxySet lbmethod=byrequests
</Proxy>
<VirtualHost 127.0.0.1:$P_HTTPS_LB>
  SSLEngine on
  SSLCertificateFile $LAB/tls/server.pem
  SSLCertificateKeyFile $LAB/tls/server.key
  ProxyPass "/" "balancer://nodes/"
</VirtualHost>
<VirtualHost 127.0.0.1:$P_HTTP_LB>
  ProxyPass "/" "balancer://nodes/"
</VirtualHost>
<VirtualHost 127.0.0.1:$P_HTTPS_PROXY>
  SSLEngine on
  SSLCertificateFile $LAB/tls/server.pem
  SSLCertificateKeyFile $LAB/tls/server.key
  ProxyPass "/" "http://127.0.0.1:$P_NODE1/"
</VirtualHost>
<VirtualHost 127.0.0.1:$P_HTTP_PROXY>
  ProxyPass "/" "http://127.0.0.1:$P_NODE1/"
</VirtualHost>
CONF
}

method() { # name description url node...
  local tls="" pids=""
  for n in "${@:4}"; do pids="$pids${pids:+, }$(cat "$LAB/run/$n.pid")"; done
  case "$3" in https:*) tls=$'\n[tls]\nca_cert = "ca.pem"\ninsecure = false' ;; esac
  cat >"$METHODS/$1.toml" <<TOML
# Written by scripts/lab.sh up ($FRONTEND); the lab CA is ca.pem beside this file.
name = "$1"
description = "$2"
url = "$3"
connection = "reuse"
node_header = "x-ingestbench-node"
# The nodes' CPU and memory are read over every run's measured window (the frontend's from its port).
server_pids = [$pids]$tls
TOML
}

up() {
  mkdir -p "$LAB/run" "$LAB/logs" "$LAB/store"
  if alive "$LAB/run/frontend.pid"; then
    local running; running=$(cat "$LAB/run/frontend")
    [ "$running" = "$FRONTEND" ] || die "the lab is up with $running; run 'scripts/lab.sh down' first"
  fi
  case "$FRONTEND" in
    nginx) need nginx nginx ;;
    httpd) need apache2 apache2 ;;
    *) die "--frontend $FRONTEND: use nginx or httpd" ;;
  esac
  if [ -z "${INGESTBENCH_BIN:-}" ]; then
    cargo build --release --locked -q
    BIN="$ROOT/target/release/ingestbench"
  else
    BIN=$INGESTBENCH_BIN
  fi
  [ -x "$BIN" ] || die "INGESTBENCH_BIN=$BIN is not an executable"
  tls
  start_node node1 "$P_NODE1"
  start_node node2 "$P_NODE2"
  if ! alive "$LAB/run/frontend.pid"; then
    for port in $P_HTTPS_LB $P_HTTP_LB $P_HTTPS_PROXY $P_HTTP_PROXY; do
      port_open "$port" && die "port $port is in use; set LAB_BASE_PORT to move the lab"
    done
    case "$FRONTEND" in
      nginx) nginx_conf; nginx -p "$LAB/nginx" -c "$LAB/nginx/nginx.conf" 2>>"$LAB/logs/nginx-error.log" ;;
      httpd) httpd_conf; apache2 -f "$LAB/httpd/httpd.conf" -k start 2>>"$LAB/logs/httpd-error.log" ;;
    esac
    echo "$FRONTEND" >"$LAB/run/frontend"
    for port in $P_HTTPS_LB $P_HTTP_LB $P_HTTPS_PROXY $P_HTTP_PROXY; do wait_port "$port" "$FRONTEND"; done
  fi
  mkdir -p "$METHODS"
  cp "$LAB/tls/ca.pem" "$METHODS/ca.pem"
  method https-lb "HTTPS via $FRONTEND load balancer (2 nodes)" "https://localhost:$P_HTTPS_LB" node1 node2
  method http-lb "HTTP via $FRONTEND load balancer (2 nodes)" "http://127.0.0.1:$P_HTTP_LB" node1 node2
  method direct "HTTP direct to node 1" "http://127.0.0.1:$P_NODE1" node1
  method https-proxy "HTTPS via $FRONTEND reverse proxy to node 1" "https://localhost:$P_HTTPS_PROXY" node1
  method http-proxy "HTTP via $FRONTEND reverse proxy to node 1" "http://127.0.0.1:$P_HTTP_PROXY" node1
  echo "lab: up with $FRONTEND; access methods in $METHODS:"
  for f in "$METHODS"/*.toml; do echo "  $(basename "$f" .toml): $(grep '^url' "$f" | cut -d'"' -f2)"; done
  echo "lab: try  ingestbench sweep --access-methods-dir $METHODS --threads 1,4 --sizes small --docs 100"
}

CMD=${1:-}
shift || true
FRONTEND=nginx FRONTEND_SET="" BACKEND=embedded NODE_CPUS= NODES=
USAGE="usage: scripts/lab.sh up|down|status [--frontend nginx|httpd] [--backend embedded|java] [--node-cpus CPUS] (java also: fetch, --nodes 2|3|4)"
while [ $# -gt 0 ]; do
  case "$1" in
    --frontend) FRONTEND=${2:-}; FRONTEND_SET=1; shift 2 ;;
    --frontend=*) FRONTEND=${1#*=}; FRONTEND_SET=1; shift ;;
    --backend) BACKEND=${2:-}; shift 2 ;;
    --backend=*) BACKEND=${1#*=}; shift ;;
    --node-cpus) NODE_CPUS=${2:-}; shift 2 ;;
    --node-cpus=*) NODE_CPUS=${1#*=}; shift ;;
    --nodes) NODES=${2:-}; shift 2 ;;
    --nodes=*) NODES=${1#*=}; shift ;;
    *) die "unknown argument $1 ($USAGE)" ;;
  esac
done
case "$BACKEND" in
  embedded)
    [ "$CMD" = fetch ] && die "fetch is for --backend java"
    [ -n "$NODES" ] && die "--nodes is for --backend java (the embedded lab runs 2 nodes)" ;;
  # Two Tomcat nodes running OpenCMIS FileShare behind httpd mod_jk/mod_proxy and HAProxy:
  # its own directory, ports and methods; replaces up, down and status.
  java)
    # shellcheck source=scripts/lab-java.sh
    . "$ROOT/scripts/lab-java.sh" ;;
  *) die "--backend $BACKEND: use embedded or java" ;;
esac
case "$CMD" in
  up) up ;;
  down) down ;;
  status) status ;;
  fetch) fetch ;;
  *) die "$USAGE" ;;
esac
