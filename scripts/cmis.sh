#!/usr/bin/env bash
# A real CMIS 1.1 repository on loopback: the Apache Chemistry OpenCMIS InMemory server
# (org.apache.chemistry.opencmis:chemistry-opencmis-server-inmemory:1.1.0:war) under
# jetty-runner 9.4, both from Maven Central, fetched once into a cache.
#
#   scripts/cmis.sh up       # idempotent; prints the browser-binding service URL
#   scripts/cmis.sh status
#   scripts/cmis.sh down     # stops it by pid
#
# On Java 17 the WAR needs: the javax API jars on jetty's classpath,
# --add-opens java.base/java.lang=ALL-UNNAMED, and in WEB-INF/classes/repository.properties
# InMemoryServer.EncryptTempFiles=false (else uploads over 4 MiB fail with 500) and a larger
# InMemoryServer.MaxSize. It accepts any user and password but requires one.
#
# Environment: CMIS_DIR (runtime dir, default .cmis), CMIS_CACHE (downloads, default
# ~/.cache/ingestbench/cmis), CMIS_PORT (default 18090), CMIS_HEAP (default 2g), CMIS_JAVA_OPTS
# (more JVM options, split on spaces, e.g. "-Xlog:gc:file=/tmp/gc.log").
#
# Why 2g: the InMemory server keeps every document's content in its heap, which no production
# repository does. With 1g, an estimate trial (a 10 % sample of /usr/share/doc, then the whole
# import on top, ~0.5 GiB live) crosses G1's marking threshold (45 % of the heap) during the
# import: its GC log shows one concurrent marking cycle in the sample's 4 s and back-to-back
# cycles (8 in 4.5 s) through the import, CPU taken from the uploads on 2 cores, a step no
# sample taken before it can see. 2g keeps the server in one regime, as a repository sized
# for its content is.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUN=$(realpath -m "${CMIS_DIR:-$ROOT/.cmis}")
CACHE=$(realpath -m "${CMIS_CACHE:-$HOME/.cache/ingestbench/cmis}")
PORT=${CMIS_PORT:-18090}
HEAP=${CMIS_HEAP:-2g}
JETTY=org.eclipse.jetty:jetty-runner:9.4.58.v20250814
WAR=org.apache.chemistry.opencmis:chemistry-opencmis-server-inmemory:1.1.0
EXTLIB="javax.xml.ws:jaxws-api:2.3.1 javax.xml.bind:jaxb-api:2.3.1 javax.xml.soap:javax.xml.soap-api:1.4.0
javax.annotation:javax.annotation-api:1.3.2 javax.activation:javax.activation-api:1.2.0 javax.jws:javax.jws-api:1.1
com.sun.xml.messaging.saaj:saaj-impl:1.5.3 org.jvnet.staxex:stax-ex:1.8.3"
URL="http://127.0.0.1:$PORT/cmis/browser"

die() { echo "cmis: $*" >&2; exit 2; }
alive() {
  [ -f "$RUN/cmis.pid" ] || return 1
  local pid; pid=$(cat "$RUN/cmis.pid")
  kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]
}
answers() { curl -s -o /dev/null -w '%{http_code}' -u probe:probe --max-time 5 "$URL" 2>/dev/null | grep -q '^200$'; }

fetch() { # groupId:artifactId:version[:packaging] destdir
  local coords=$1 dest=$2
  local a v p
  a=$(echo "$coords" | cut -d: -f2); v=$(echo "$coords" | cut -d: -f3); p=$(echo "$coords" | cut -d: -f4); p=${p:-jar}
  [ -s "$dest/$a-$v.$p" ] && return 0
  mkdir -p "$dest"
  mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy "-Dartifact=$coords" "-DoutputDirectory=$dest" \
    || die "could not fetch $coords from Maven Central (is mvn configured for it?)"
}

prepare() {
  command -v java >/dev/null || die "java is missing (OpenJDK 17 or later)"
  command -v mvn >/dev/null || die "mvn is missing (Debian package maven)"
  command -v jar >/dev/null || die "jar is missing (a JDK, not only a JRE)"
  fetch "$JETTY" "$CACHE"
  fetch "$WAR:war" "$CACHE"
  for a in $EXTLIB; do fetch "$a" "$CACHE/extlib"; done
  local patched="$CACHE/cmis-inmemory-patched.war"
  if [ ! -s "$patched" ]; then
    local work; work=$(mktemp -d)
    cp "$CACHE/chemistry-opencmis-server-inmemory-1.1.0.war" "$work/w.war"
    ( cd "$work" && unzip -q -o w.war WEB-INF/classes/repository.properties
      sed -i -e '/^InMemoryServer.EncryptTempFiles/d' -e '/^InMemoryServer.MaxSize/d' WEB-INF/classes/repository.properties
      printf '\nInMemoryServer.EncryptTempFiles=false\nInMemoryServer.MaxSize=4294967296\n' >> WEB-INF/classes/repository.properties
      jar uf w.war WEB-INF/classes/repository.properties )
    mv "$work/w.war" "$patched"
    rm -rf "$work"
  fi
}

up() {
  mkdir -p "$RUN"
  if alive && answers; then echo "cmis: up at $URL"; return 0; fi
  alive && { kill "$(cat "$RUN/cmis.pid")" 2>/dev/null || true; sleep 1; }
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && die "port $PORT is in use; set CMIS_PORT"
  prepare
  local jars=()
  for j in "$CACHE"/extlib/*.jar; do jars+=(--jar "$j"); done
  local opts=()
  read -r -a opts <<<"${CMIS_JAVA_OPTS:-}"
  nohup java "-Xmx$HEAP" "${opts[@]}" --add-opens java.base/java.lang=ALL-UNNAMED \
    -Dorg.eclipse.jetty.util.log.class=org.eclipse.jetty.util.log.StdErrLog \
    -jar "$CACHE/jetty-runner-9.4.58.v20250814.jar" --host 127.0.0.1 --port "$PORT" "${jars[@]}" \
    --path /cmis "$CACHE/cmis-inmemory-patched.war" >"$RUN/cmis.log" 2>&1 &
  echo $! >"$RUN/cmis.pid"
  for _ in $(seq 240); do
    answers && { echo "cmis: up at $URL"; return 0; }
    alive || die "the server exited; see $RUN/cmis.log"
    sleep 0.5
  done
  die "no answer from $URL after 120 s; see $RUN/cmis.log"
}

down() {
  if alive; then
    local pid; pid=$(cat "$RUN/cmis.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/cmis.pid"
  echo "cmis: down"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) if alive && answers; then echo "cmis: up at $URL (pid $(cat "$RUN/cmis.pid"))"; else echo "cmis: down"; fi ;;
  fetch) prepare ;;
  *) die "usage: scripts/cmis.sh up|down|status|fetch" ;;
esac
