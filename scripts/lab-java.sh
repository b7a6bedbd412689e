# shellcheck shell=bash
# The Java back end of the lab: `scripts/lab.sh up|down|status|fetch --backend java`. Sourced
# by scripts/lab.sh (never run on its own): it uses lab.sh's helpers (die, alive, port_open,
# need, tls) and replaces its up/down/status. A file of its own because it has its own parts
# (Tomcat, AJP, HAProxy) beside the embedded lab's.
#
# A real Java cluster behind the access paths of the seed study, all on loopback
# (B = LAB_JAVA_BASE_PORT, default 19000, so it runs beside the embedded lab's 18000):
#   node1, node2   Apache Tomcat 9.0.98 (own CATALINA_BASE each, jvmRoute node1/node2), each
#                  with an HTTP connector (B+81, B+91) and an AJP connector (B+9, B+19), each
#                  running the Apache Chemistry OpenCMIS FileShare repository (1.0.0 war; CMIS
#                  1.1 browser binding at /fileshare/browser, repository "lab", user admin,
#                  password admin, document type ComplexType) over ONE directory ($LAB/store):
#                  what one node stores the other reads, as two Alfresco nodes share one
#                  content store and database. Every answer names its node in
#                  X-Ingestbench-Node (scripts/lab-java/NodeHeaderFilter.java).
#   Apache httpd   mod_jk (JkMount /* to an lb worker over the nodes' AJP ports) and mod_proxy
#   HAProxy        round robin over the nodes' HTTP connectors
# Access methods (CMIS; files in access-methods/lab-java/):
#   https-lb        httpd HTTPS + mod_jk lb over both nodes (the seed's day-to-day path)  B+443
#   http-lb         httpd HTTP  + mod_jk lb over both nodes                               B+80
#   direct          node 1's own Tomcat HTTP connector                                    B+81
#   https-proxy     httpd HTTPS + mod_proxy to node 1 (no balancing)                      B+444
#   http-proxy      httpd HTTP  + mod_proxy to node 1                                     B+82
#   haproxy-https   HAProxy HTTPS round robin over both nodes                             B+445
#   haproxy-http    HAProxy HTTP  round robin over both nodes                             B+83
#   https-lb-1node  httpd HTTPS + mod_jk lb worker with node 1 as its only member         B+446
#   https-lb-2node  httpd HTTPS + mod_jk lb worker with both members                      B+447
#   http-lb-1node   httpd HTTP  + mod_jk, the same lb worker as https-lb-1node             B+84
#   http-lb-2node   httpd HTTP  + mod_jk, the same lb worker as https-lb-2node             B+85
# (https-lb-1node and -2node differ only in the member list, so one sweep over both is the
# seed's "one node against two" chart; the http-lb-Nnode methods are the same workers without
# TLS, so a node what-if is checked over plain mod_jk too.)
# With --nodes 3 or 4, node3 (HTTP B+101, AJP B+29) and node4 (B+111, B+39) join: https-lb,
# http-lb and HAProxy balance over all of them, and https-lb-3node (B+448) and https-lb-4node
# (B+449) are lb workers of 3 and 4 members, so "beyond two" has a truth to meet; http-lb-3node
# (B+86) and http-lb-4node (B+87) are the same workers over HTTP.
#
# Environment: LAB_JAVA_DIR (default .lab-java), LAB_JAVA_BASE_PORT (default 19000),
# LAB_JAVA_METHODS_DIR (default access-methods/lab-java), LAB_JAVA_CACHE (downloads, default
# ~/.cache/ingestbench/lab-java), LAB_JAVA_HEAP (per node, default 1g), LAB_JAVA_OPTS (more
# JVM options per node, e.g. -XX:TieredStopAtLevel=1, C1 only: slower code, compiled sooner;
# the estimate's CI gate uses it).
# Downloads (Maven Central, once): org.apache.tomcat:tomcat:9.0.98:zip and
# org.apache.chemistry.opencmis:chemistry-opencmis-server-fileshare:1.0.0:war.

LAB=$(realpath -m "${LAB_JAVA_DIR:-$ROOT/.lab-java}")
METHODS=$(realpath -m "${LAB_JAVA_METHODS_DIR:-$ROOT/access-methods/lab-java}")
BASE=${LAB_JAVA_BASE_PORT:-19000}
JCACHE=$(realpath -m "${LAB_JAVA_CACHE:-$HOME/.cache/ingestbench/lab-java}")
HEAP=${LAB_JAVA_HEAP:-1g}
TOMCAT_V=9.0.98
TOMCAT="$JCACHE/apache-tomcat-$TOMCAT_V"
FILESHARE_WAR="$JCACHE/chemistry-opencmis-server-fileshare-1.0.0.war"
ASSETS="$ROOT/scripts/lab-java"
MODJK=/usr/lib/apache2/modules/mod_jk.so
J_HTTPS_LB=$((BASE + 443)) J_HTTP_LB=$((BASE + 80)) J_DIRECT=$((BASE + 81)) J_NODE2=$((BASE + 91))
J_AJP1=$((BASE + 9)) J_AJP2=$((BASE + 19)) J_HTTPS_PROXY=$((BASE + 444)) J_HTTP_PROXY=$((BASE + 82))
J_HA_HTTPS=$((BASE + 445)) J_HA_HTTP=$((BASE + 83)) J_LB1=$((BASE + 446)) J_LB2=$((BASE + 447))
NODES=${NODES:-2}
case "$NODES" in 2|3|4) ;; *) die "--nodes $NODES: the Java lab runs 2, 3 or 4 nodes" ;; esac
# Node k's HTTP and AJP ports, and every node of this lab.
node_http() { echo $((BASE + 71 + 10 * $1)); }
node_ajp() { echo $((BASE - 1 + 10 * $1)); }
NODE_NAMES=$(seq -f 'node%g' 1 "$NODES" | tr '\n' ' ')
J_LB3=$((BASE + 448)) J_LB4=$((BASE + 449))
# The lb worker of k members over plain HTTP (http-lb-Nnode).
http_lb_port() { echo $((BASE + 83 + $1)); }
HTTPD_PORTS="$J_HTTPS_LB $J_HTTP_LB $J_HTTPS_PROXY $J_HTTP_PROXY $J_LB1 $J_LB2 $(http_lb_port 1) $(http_lb_port 2)"
[ "$NODES" -ge 3 ] && HTTPD_PORTS="$HTTPD_PORTS $J_LB3 $(http_lb_port 3)"
[ "$NODES" -ge 4 ] && HTTPD_PORTS="$HTTPD_PORTS $J_LB4 $(http_lb_port 4)"
HAPROXY_PORTS="$J_HA_HTTPS $J_HA_HTTP"
CMIS_PATH=/fileshare/browser

mvn_fetch() { # groupId:artifactId:version:packaging
  local a v p
  a=$(echo "$1" | cut -d: -f2); v=$(echo "$1" | cut -d: -f3); p=$(echo "$1" | cut -d: -f4)
  [ -s "$JCACHE/$a-$v.$p" ] && return 0
  mkdir -p "$JCACHE"
  mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy "-Dartifact=$1" "-DoutputDirectory=$JCACHE" \
    >"$JCACHE/mvn.log" 2>&1 || die "could not fetch $1 from Maven Central (is mvn configured for it?); see $JCACHE/mvn.log"
}

# Downloads and builds what the nodes run, into the cache; idempotent.
java_fetch() {
  need java default-jdk-headless
  need javac default-jdk-headless
  need jar default-jdk-headless
  need mvn maven
  need unzip unzip
  need curl curl
  mvn_fetch "org.apache.tomcat:tomcat:$TOMCAT_V:zip"
  mvn_fetch org.apache.chemistry.opencmis:chemistry-opencmis-server-fileshare:1.0.0:war
  # JavaBeans Activation, gone from the JDK since Java 11: OpenCMIS's MimeTypes needs it
  # (without it every read of a document's properties is a 500 ClassNotFoundException).
  mvn_fetch com.sun.activation:javax.activation:1.2.0:jar
  if [ ! -f "$TOMCAT/lib/catalina.jar" ]; then
    rm -rf "$TOMCAT"
    unzip -q -o "$JCACHE/tomcat-$TOMCAT_V.zip" -d "$JCACHE" || die "cannot unpack $JCACHE/tomcat-$TOMCAT_V.zip"
  fi
  # The node header filter, compiled against Tomcat's servlet API; rebuilt when its source changes.
  local sum; sum=$(sha256sum "$ASSETS/NodeHeaderFilter.java" | cut -c1-12)
  FILTER_JAR="$JCACHE/node-header-filter-$sum.jar"
  if [ ! -s "$FILTER_JAR" ]; then
    local work; work=$(mktemp -d)
    javac -nowarn --release 8 -cp "$TOMCAT/lib/servlet-api.jar" -d "$work" "$ASSETS/NodeHeaderFilter.java" 2>"$work/err" \
      || die "javac NodeHeaderFilter.java failed: $(cat "$work/err")"
    jar cf "$FILTER_JAR.tmp" -C "$work" ingestbench && mv "$FILTER_JAR.tmp" "$FILTER_JAR"
    rm -rf "$work"
  fi
}

# The exploded FileShare war both nodes run (one copy, read-only for them): our web.xml, our
# repository.properties (the shared store, user admin) and the node header filter.
java_webapp() {
  local app="$LAB/webapp"
  if [ ! -f "$app/WEB-INF/lib/chemistry-opencmis-server-fileshare-1.0.0.jar" ]; then
    rm -rf "$app"; mkdir -p "$app"
    unzip -q -o "$FILESHARE_WAR" -d "$app" || die "cannot unpack $FILESHARE_WAR"
  fi
  rm -f "$app"/WEB-INF/lib/node-header-filter-*.jar
  cp "$FILTER_JAR" "$JCACHE/javax.activation-1.2.0.jar" "$app/WEB-INF/lib/"
  cp "$ASSETS/web.xml" "$app/WEB-INF/web.xml"
  cp "$ASSETS/complex-type.xml" "$LAB/complex-type.xml"
  cat >"$app/WEB-INF/classes/repository.properties" <<PROPS
# Written by scripts/lab.sh up (Java back end): one repository over the directory both nodes share.
class=org.apache.chemistry.opencmis.fileshare.FileShareCmisServiceFactory
login.1 = admin:admin
type.1 = $LAB/complex-type.xml
repository.lab = $LAB/store
repository.lab.readwrite = admin
PROPS
}

node_base() { # name http-port ajp-port
  local b="$LAB/$1"
  rm -rf "$b/logs" "$b/work" # a fresh start: wait_tomcat reads these logs for failures
  mkdir -p "$b/conf/Catalina/localhost" "$b/logs" "$b/temp" "$b/work" "$b/webapps"
  cp "$TOMCAT/conf/web.xml" "$TOMCAT/conf/logging.properties" "$TOMCAT/conf/catalina.properties" "$b/conf/"
  # maxKeepAliveRequests=-1: a keep-alive connection is never closed by the node after N
  # requests, as httpd (MaxKeepAliveRequests 0) and HAProxy in front of it, so `reuse` means
  # the same thing on every path. No access log valve: its cost is not part of the question.
  cat >"$b/conf/server.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by scripts/lab.sh up (Java back end). No shutdown port: stopped by pid. -->
<Server port="-1" shutdown="SHUTDOWN">
  <Service name="Catalina">
    <Connector address="127.0.0.1" port="$2" protocol="HTTP/1.1" connectionTimeout="20000"
               maxKeepAliveRequests="-1" maxPostSize="-1" maxSwallowSize="-1"/>
    <!-- Tomcat >= 9.0.31 refuses an AJP connector without a secret unless told so; it listens on loopback only. -->
    <Connector address="127.0.0.1" port="$3" protocol="AJP/1.3" secretRequired="false" maxPostSize="-1"/>
    <Engine name="Catalina" defaultHost="localhost" jvmRoute="$1">
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"/>
    </Engine>
  </Service>
</Server>
XML
  cat >"$b/conf/Catalina/localhost/fileshare.xml" <<XML
<Context docBase="$LAB/webapp" reloadable="false">
  <!-- Nothing in the war needs jar scanning (no TLDs, no web fragments): a faster start. -->
  <JarScanner scanManifest="false">
    <JarScanFilter defaultTldScan="false" defaultPluggabilityScan="false"/>
  </JarScanner>
</Context>
XML
}

# What this `up` started, stopped again if it fails: a failed `up` leaves nothing running.
STARTED=()
stop_started() {
  local p
  for p in "${STARTED[@]}"; do
    if alive "$LAB/run/$p.pid"; then kill -9 "$(cat "$LAB/run/$p.pid")" 2>/dev/null || true; fi
    rm -f "$LAB/run/$p.pid"
  done
}

start_tomcat() { # name http-port ajp-port
  local pidf="$LAB/run/$1.pid"
  alive "$pidf" && return 0
  STARTED+=("$1")
  node_base "$@"
  # catalina.sh run execs java: the pid is the JVM's. It adds the --add-opens Java 17 needs.
  CATALINA_HOME="$TOMCAT" CATALINA_BASE="$LAB/$1" CATALINA_PID="" \
    JAVA_OPTS="-Xms$HEAP -Xmx$HEAP -DjvmRoute=$1 -Djava.awt.headless=true ${LAB_JAVA_OPTS:-}" \
    nohup bash "$TOMCAT/bin/catalina.sh" run >"$LAB/logs/$1.log" 2>&1 &
  echo $! >"$pidf"
}

# Waits until the node's repository answers with its name and knows ComplexType.
wait_tomcat() { # name http-port
  local url="http://127.0.0.1:$2$CMIS_PATH" code
  for _ in $(seq 360); do
    alive "$LAB/run/$1.pid" || die "$1 (Tomcat) exited while starting; see $LAB/logs/$1.log and $LAB/$1/logs/:
$(tail -n 15 "$LAB/logs/$1.log" 2>/dev/null)"
    # A context that failed to deploy leaves Tomcat answering 404: stop at its log line.
    grep -q 'startup failed due to previous errors\|listeners failed to start' "$LAB/$1"/logs/*.log 2>/dev/null \
      && die "$1: the FileShare web application failed to start; see $LAB/$1/logs/:
$(grep -h -A3 SEVERE "$LAB/$1"/logs/*.log | head -n 20)"
    code=$(curl -s -o /dev/null -w '%{http_code}' -u admin:admin --max-time 5 "$url" 2>/dev/null || true)
    case "$code" in
      200) break ;;
      404|503) ;; # the context is not deployed yet
      000) ;;
      *) die "$1: $url answers $code; see $LAB/$1/logs/localhost.*.log" ;;
    esac
    sleep 0.5
  done
  [ "$code" = 200 ] || die "$1 (Tomcat) did not serve $url within 180 s; see $LAB/logs/$1.log"
  local h
  h=$(curl -s -D - -o /dev/null -u admin:admin --max-time 10 "$url/lab?cmisselector=typeDefinition&typeId=ComplexType")
  echo "$h" | head -1 | grep -q ' 200' \
    || die "$1: FileShare has no type ComplexType ($LAB/complex-type.xml did not load); see $LAB/logs/$1.log"
  echo "$h" | tr -d '\r' | grep -qi "^x-ingestbench-node: $1\$" \
    || die "$1: answers without 'X-Ingestbench-Node: $1' (node header filter not active)"
}

# A document created through node 1 is read, then deleted, through node 2: the store is shared.
check_shared() {
  local name n1="http://127.0.0.1:$J_DIRECT$CMIS_PATH/lab/root" n2="http://127.0.0.1:$J_NODE2$CMIS_PATH/lab/root" code
  name="lab-check-$$-$RANDOM.txt"
  code=$(curl -s -o /dev/null -w '%{http_code}' -u admin:admin --max-time 20 \
    -F cmisaction=createDocument -F 'propertyId[0]=cmis:objectTypeId' -F 'propertyValue[0]=cmis:document' \
    -F 'propertyId[1]=cmis:name' -F "propertyValue[1]=$name" -F "content=@$LAB/complex-type.xml;type=text/xml" "$n1" || true)
  [ "$code" = 201 ] || die "node1 did not store a test document (HTTP $code); see $LAB/node1/logs/"
  code=$(curl -s -o /dev/null -w '%{http_code}' -u admin:admin --max-time 20 "$n2/$name?cmisselector=object" || true)
  [ "$code" = 200 ] || die "node2 cannot read what node1 stored (HTTP $code): the nodes do not share $LAB/store"
  code=$(curl -s -o /dev/null -w '%{http_code}' -u admin:admin --max-time 20 "$n2/$name" -d cmisaction=delete || true)
  [ "$code" = 200 ] || die "node2 cannot delete what node1 stored (HTTP $code); see $LAB/node2/logs/"
}

java_httpd_conf() {
  mkdir -p "$LAB/httpd"
  local m=/usr/lib/apache2/modules
  # mod_jk: an ajp13 worker per node, an lb worker over both (the seed's setup) and an lb
  # worker with node 1 only. Members of different lb workers are separate workers with the
  # same route. Default lb method (by requests); no sticky session is ever sent by the tool.
  # With more nodes, `lball` (https-lb, http-lb) takes them all, and lb3/lb4 are workers of
  # 3 and 4 members of their own (m3_1 … with the nodes' routes).
  local k j all=lb2 list=lb2,lb1
  [ "$NODES" -ge 3 ] && all=lball
  cat >"$LAB/httpd/workers.properties" <<PROPS
worker.template.type=ajp13
worker.template.host=127.0.0.1
worker.node1.reference=worker.template
worker.node1.port=$J_AJP1
worker.node2.reference=worker.template
worker.node2.port=$J_AJP2
worker.solo1.reference=worker.template
worker.solo1.port=$J_AJP1
worker.solo1.route=node1
worker.lb2.type=lb
worker.lb2.balance_workers=node1,node2
worker.lb1.type=lb
worker.lb1.balance_workers=solo1
PROPS
  if [ "$NODES" -ge 3 ]; then
    for k in $(seq 3 "$NODES") all; do
      local n=$k members=""
      [ "$k" = all ] && n=$NODES
      for j in $(seq 1 "$n"); do
        printf 'worker.m%s_%s.reference=worker.template\nworker.m%s_%s.port=%s\nworker.m%s_%s.route=node%s\n' \
          "$k" "$j" "$k" "$j" "$(node_ajp "$j")" "$k" "$j" "$j" >>"$LAB/httpd/workers.properties"
        members="$members${members:+,}m${k}_$j"
      done
      printf 'worker.lb%s.type=lb\nworker.lb%s.balance_workers=%s\n' "$k" "$k" "$members" >>"$LAB/httpd/workers.properties"
      list="$list,lb$k"
    done
  fi
  echo "worker.list=$list" >>"$LAB/httpd/workers.properties"
  local lbn_listen="" lbn_hosts=""
  for k in $(seq 1 "$NODES"); do
    lbn_listen="${lbn_listen}Listen 127.0.0.1:$(http_lb_port "$k") http
"
    lbn_hosts="${lbn_hosts}<VirtualHost 127.0.0.1:$(http_lb_port "$k")>
  JkMount /* lb$k
</VirtualHost>
"
  done
  for k in $(seq 3 "$NODES"); do
    local port=$((BASE + 445 + k))
    lbn_listen="${lbn_listen}Listen 127.0.0.1:$port https
"
    lbn_hosts="${lbn_hosts}<VirtualHost 127.0.0.1:$port>
  SSLEngine on
  SSLCertificateFile $LAB/tls/server.pem
  SSLCertificateKeyFile $LAB/tls/server.key
  JkMount /* lb$k
</VirtualHost>
"
  done
  local tls="SSLEngine on
  SSLCertificateFile $LAB/tls/server.pem
  SSLCertificateKeyFile $LAB/tls/server.key"
  cat >"$LAB/httpd/httpd.conf" <<CONF
ServerRoot "$LAB/httpd"
ServerName localhost
PidFile $LAB/run/httpd.pid
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
LoadModule socache_shmcb_module $m/mod_socache_shmcb.so
LoadModule ssl_module $m/mod_ssl.so
LoadModule jk_module $MODJK
# Threads for 100 client connections on each of two vhosts without forking during a run.
StartServers 4
ServerLimit 4
ThreadsPerChild 64
MaxRequestWorkers 256
MinSpareThreads 64
MaxSpareThreads 256
LimitRequestBody 0
Timeout 300
KeepAlive On
MaxKeepAliveRequests 0
SSLSessionCache shmcb:$LAB/httpd/ssl_scache(512000)
JkWorkersFile $LAB/httpd/workers.properties
JkShmFile $LAB/httpd/jk-runtime-status
JkLogFile $LAB/logs/mod_jk.log
JkLogLevel error
Listen 127.0.0.1:$J_HTTPS_LB https
Listen 127.0.0.1:$J_HTTP_LB http
Listen 127.0.0.1:$J_HTTPS_PROXY https
Listen 127.0.0.1:$J_HTTP_PROXY http
Listen 127.0.0.1:$J_LB1 https
Listen 127.0.0.1:$J_LB2 https
$lbn_listen<VirtualHost 127.0.0.1:$J_HTTPS_LB>
  $tls
  JkMount /* $all
</VirtualHost>
<VirtualHost 127.0.0.1:$J_HTTP_LB>
  JkMount /* $all
</VirtualHost>
$lbn_hosts<VirtualHost 127.0.0.1:$J_LB2>
  $tls
  JkMount /* lb2
</VirtualHost>
<VirtualHost 127.0.0.1:$J_LB1>
  $tls
  JkMount /* lb1
</VirtualHost>
# mod_proxy keeps the client's Host; the repository learns the scheme from X-Forwarded-Proto
# (OpenCMIS's ProxyFilter) so that its rootFolderUrl is the URL the client used.
<VirtualHost 127.0.0.1:$J_HTTPS_PROXY>
  $tls
  ProxyPreserveHost On
  RequestHeader set X-Forwarded-Proto https
  ProxyPass "/" "http://127.0.0.1:$J_DIRECT/"
</VirtualHost>
<VirtualHost 127.0.0.1:$J_HTTP_PROXY>
  ProxyPreserveHost On
  ProxyPass "/" "http://127.0.0.1:$J_DIRECT/"
</VirtualHost>
CONF
}

java_haproxy_conf() {
  mkdir -p "$LAB/haproxy"
  cat "$LAB/tls/server.pem" "$LAB/tls/server.key" >"$LAB/tls/combined.pem"
  cat >"$LAB/haproxy/haproxy.cfg" <<CONF
# Written by scripts/lab.sh up --backend java.
global
    maxconn 4096
    nbthread 2
    pidfile $LAB/run/haproxy.pid
    daemon
defaults
    mode http
    timeout connect 5s
    timeout client 300s
    timeout server 300s
    timeout http-keep-alive 300s
frontend fe_https
    bind 127.0.0.1:$J_HA_HTTPS ssl crt $LAB/tls/combined.pem alpn http/1.1
    http-request set-header X-Forwarded-Proto https
    default_backend nodes
frontend fe_http
    bind 127.0.0.1:$J_HA_HTTP
    http-request set-header X-Forwarded-Proto http
    default_backend nodes
backend nodes
    balance roundrobin
$(for k in $(seq 1 "$NODES"); do echo "    server node$k 127.0.0.1:$(node_http "$k")"; done)
CONF
}

java_method() { # name description url
  local tls=""
  case "$3" in https:*) tls=$'\n[tls]\nca_cert = "ca.pem"\ninsecure = false' ;; esac
  cat >"$METHODS/$1.toml" <<TOML
# Written by scripts/lab.sh up --backend java; the lab CA is ca.pem beside this file.
name = "$1"
description = "$2"
protocol = "cmis"
url = "$3$CMIS_PATH"
connection = "reuse"
node_header = "x-ingestbench-node"
# Every Tomcat node's CPU and memory are read over every run's measured window (the front end's from its port).
server_pids = [$(for n in $NODE_NAMES; do cat "$LAB/run/$n.pid"; done | paste -sd, | sed 's/,/, /g')]$tls
TOML
}

# Every method answers the service document through its own path, and names a node.
check_method() { # name url
  local h
  h=$(curl -s -D - -o /dev/null -u admin:admin --max-time 20 --cacert "$LAB/tls/ca.pem" "$2$CMIS_PATH") \
    || die "$1: no answer from $2$CMIS_PATH; see $LAB/logs/"
  echo "$h" | head -1 | grep -q ' 200' || die "$1: $2$CMIS_PATH answers '$(echo "$h" | head -1 | tr -d '\r')'; see $LAB/logs/"
  echo "$h" | tr -d '\r' | grep -qi '^x-ingestbench-node: node[1-4]$' || die "$1: the answer through $2 names no node"
}

up() {
  [ -n "$FRONTEND_SET" ] && die "--frontend is for the embedded lab; the Java lab runs httpd (mod_jk, mod_proxy) and HAProxy"
  mkdir -p "$LAB/run" "$LAB/logs" "$LAB/store"
  need apache2 apache2
  need haproxy haproxy
  need openssl openssl
  if [ ! -f "$MODJK" ]; then
    [ "$(id -u)" = 0 ] || die "$MODJK is missing: install the Debian package libapache2-mod-jk (as root: apt-get install libapache2-mod-jk)"
    echo "lab: installing libapache2-mod-jk" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libapache2-mod-jk >/dev/null
  fi
  java_fetch
  # Every port of a part that is not running yet must be free before anything starts.
  local part port
  local parts=("httpd:$HTTPD_PORTS" "haproxy:$HAPROXY_PORTS") k
  for k in $(seq 1 "$NODES"); do parts+=("node$k:$(node_http "$k") $(node_ajp "$k")"); done
  for part in "${parts[@]}"; do
    alive "$LAB/run/${part%%:*}.pid" && continue
    for port in ${part#*:}; do
      port_open "$port" && die "port $port (for ${part%%:*}) is in use; set LAB_JAVA_BASE_PORT to move the Java lab"
    done
  done
  tls
  java_webapp
  trap stop_started EXIT
  for k in $(seq 1 "$NODES"); do start_tomcat "node$k" "$(node_http "$k")" "$(node_ajp "$k")"; done
  # --node-cpus: each JVM under its own quota from its first instruction (JIT included).
  for k in $(seq 1 "$NODES"); do cpu_quota "node$k" "$(cat "$LAB/run/node$k.pid")"; done
  for k in $(seq 1 "$NODES"); do wait_tomcat "node$k" "$(node_http "$k")"; done
  check_shared
  if ! alive "$LAB/run/httpd.pid"; then
    java_httpd_conf
    apache2 -f "$LAB/httpd/httpd.conf" -t 2>"$LAB/logs/httpd-check.log" \
      || die "Apache httpd rejects its configuration: $(cat "$LAB/logs/httpd-check.log")"
    STARTED+=(httpd)
    apache2 -f "$LAB/httpd/httpd.conf" -k start 2>>"$LAB/logs/httpd-error.log" || die "Apache httpd did not start; see $LAB/logs/httpd-error.log"
    for port in $HTTPD_PORTS; do wait_port "$port" "httpd"; done
  fi
  if ! alive "$LAB/run/haproxy.pid"; then
    java_haproxy_conf
    haproxy -c -q -f "$LAB/haproxy/haproxy.cfg" 2>"$LAB/logs/haproxy-check.log" \
      || die "HAProxy rejects its configuration: $(cat "$LAB/logs/haproxy-check.log")"
    STARTED+=(haproxy)
    haproxy -f "$LAB/haproxy/haproxy.cfg" 2>>"$LAB/logs/haproxy.log" || die "HAProxy did not start; see $LAB/logs/haproxy.log"
    for port in $HAPROXY_PORTS; do wait_port "$port" "haproxy"; done
  fi
  mkdir -p "$METHODS"
  cp "$LAB/tls/ca.pem" "$METHODS/ca.pem"
  local h=https://localhost p=http://127.0.0.1
  java_method https-lb "HTTPS via Apache httpd + mod_jk (AJP) load balancer over $NODES Tomcat nodes" "$h:$J_HTTPS_LB"
  java_method http-lb "HTTP via Apache httpd + mod_jk (AJP) load balancer over $NODES Tomcat nodes" "$p:$J_HTTP_LB"
  java_method direct "HTTP direct to Tomcat node 1's HTTP connector" "$p:$J_DIRECT"
  java_method https-proxy "HTTPS via Apache httpd mod_proxy to Tomcat node 1" "$h:$J_HTTPS_PROXY"
  java_method http-proxy "HTTP via Apache httpd mod_proxy to Tomcat node 1" "$p:$J_HTTP_PROXY"
  java_method haproxy-https "HTTPS via HAProxy round robin over $NODES Tomcat nodes" "$h:$J_HA_HTTPS"
  java_method haproxy-http "HTTP via HAProxy round robin over $NODES Tomcat nodes" "$p:$J_HA_HTTP"
  java_method https-lb-1node "HTTPS via httpd + mod_jk, lb worker with 1 member (node 1)" "$h:$J_LB1"
  java_method https-lb-2node "HTTPS via httpd + mod_jk, lb worker with 2 members" "$h:$J_LB2"
  java_method http-lb-1node "HTTP via httpd + mod_jk, lb worker with 1 member (node 1)" "$p:$(http_lb_port 1)"
  java_method http-lb-2node "HTTP via httpd + mod_jk, lb worker with 2 members" "$p:$(http_lb_port 2)"
  rm -f "$METHODS"/http{,s}-lb-[34]node.toml
  for k in $(seq 3 "$NODES"); do
    java_method "https-lb-${k}node" "HTTPS via httpd + mod_jk, lb worker with $k members" "$h:$((BASE + 445 + k))"
    java_method "http-lb-${k}node" "HTTP via httpd + mod_jk, lb worker with $k members" "$p:$(http_lb_port "$k")"
  done
  for f in "$METHODS"/*.toml; do
    check_method "$(basename "$f" .toml)" "$(grep '^url' "$f" | cut -d'"' -f2 | sed "s|$CMIS_PATH\$||")"
  done
  trap - EXIT
  echo "lab: up (Java: $NODES Tomcat nodes with OpenCMIS FileShare, httpd mod_jk/mod_proxy, HAProxy); access methods in $METHODS:"
  for f in "$METHODS"/*.toml; do echo "  $(basename "$f" .toml): $(grep '^url' "$f" | cut -d'"' -f2)"; done
  echo "lab: try  INGESTBENCH_PASSWORD=admin ingestbench sweep --protocol cmis --profile opencmis --access-methods-dir $METHODS --threads 1,4 --sizes small --docs 100"
}

down() {
  [ -d "$LAB/run" ] || { echo "lab: down"; return 0; }
  alive "$LAB/run/httpd.pid" && { apache2 -f "$LAB/httpd/httpd.conf" -k stop 2>/dev/null || true; }
  local p port
  for p in haproxy httpd node1 node2 node3 node4; do
    if alive "$LAB/run/$p.pid"; then kill "$(cat "$LAB/run/$p.pid")" 2>/dev/null || true; fi
  done
  for p in haproxy httpd node1 node2 node3 node4; do
    p="$LAB/run/$p.pid"
    [ -f "$p" ] || continue
    # Tomcat's shutdown hook undeploys the repository: give it up to 20 s.
    for _ in $(seq 200); do alive "$p" || break; sleep 0.1; done
    if alive "$p"; then kill -9 "$(cat "$p")" 2>/dev/null || true; sleep 0.2; fi
    alive "$p" && die "could not stop pid $(cat "$p") ($p)"
    rm -f "$p"
  done
  # httpd children outlive the parent for a moment: wait until none holds a lab port.
  for port in $HTTPD_PORTS $J_LB3 $J_LB4 $HAPROXY_PORTS $(for k in 1 2 3 4; do echo "$(node_http "$k") $(node_ajp "$k")"; done); do
    for _ in $(seq 100); do port_open "$port" || break; sleep 0.05; done
    port_open "$port" && die "something still listens on 127.0.0.1:$port"
  done
  cpu_quota_down
  echo "lab: down"
}

status() {
  [ -d "$LAB/run" ] || { echo "lab: down (no $LAB)"; return 0; }
  local any=0 p
  for p in node1 node2 node3 node4 httpd haproxy; do
    [ -f "$LAB/run/$p.pid" ] || continue
    if alive "$LAB/run/$p.pid"; then echo "  $p: running, pid $(cat "$LAB/run/$p.pid")"; any=1
    else echo "  $p: not running (stale pid file)"; fi
  done
  if [ "$any" = 1 ]; then echo "lab: up (Java), methods in $METHODS"; else echo "lab: down"; fi
}

fetch() { java_fetch; echo "lab: Tomcat $TOMCAT_V, OpenCMIS FileShare 1.0.0 and the node header filter are in $JCACHE"; }
