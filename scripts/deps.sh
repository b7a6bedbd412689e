#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, idempotently. Root installs what is
# missing; non-root only checks and names what is missing. Safe to run again and again.
#   scripts/deps.sh           # test dependencies
# Also fetches, once, what the Java lab runs (Tomcat 9 and OpenCMIS FileShare from Maven
# Central, into ~/.cache/ingestbench/lab-java; scripts/lab.sh fetch --backend java) and the
# OpenCMIS InMemory server (into ~/.cache/ingestbench/cmis; scripts/cmis.sh fetch): fetched
# here, before the tests, several tests starting their own server at once never fetch into
# one cache side by side (a jar half written by one is not read by another).
set -euo pipefail

# command -> Debian package
declare -A NEED=(
  [pdfinfo]=poppler-utils
  [chromium]=chromium
  [nginx]=nginx
  [apache2]=apache2
  [openssl]=openssl
  [curl]=curl
  [mvn]=maven
  [jar]=default-jdk-headless
  [prometheus-node-exporter]=prometheus-node-exporter
  [parallel]=parallel
  [man]=man-db
  [jq]=jq
  [prometheus]=prometheus
  [ssh]=openssh-client
  [sshd]=openssh-server
  [haproxy]=haproxy
  [javac]=default-jdk-headless
  [unzip]=unzip
)
# sshd lives in /usr/sbin, which a non-root PATH may leave out.
PATH=$PATH:/usr/sbin

# Go (the Kubernetes manifest test decodes it with k8s.io/api, which needs Go 1.22+; this
# machine kind ships Go 1.26 in /usr/local/go, Debian 12's golang-go is 1.19): checked, not
# installed. Its modules come from the Go module proxy on first use (go.sum pins them).
PATH=$PATH:/usr/local/go/bin
if ! go version 2>/dev/null | grep -qE 'go1\.(2[2-9]|[3-9][0-9])'; then
  echo "deps: Go 1.22 or later is needed (found: $(go version 2>/dev/null || echo none)); install it from https://go.dev/dl" >&2
  [ "${CI:-}" = true ] && exit 1
fi
(cd "$(dirname "$0")/kubernetes/validate" && go mod download) || echo "deps: could not fetch the Go modules of scripts/kubernetes/validate" >&2

# Node.js 20 or later (WebSocket, for scripts/watch-page.mjs, which a dashboard test runs: a
# browser on the live page mid-run); this machine kind ships it, Debian 12's nodejs is 18.
if ! node --version 2>/dev/null | grep -qE '^v(2[0-9]|[3-9][0-9])\.'; then
  echo "deps: Node.js 20 or later is needed (found: $(node --version 2>/dev/null || echo none)); install it from https://nodejs.org" >&2
  [ "${CI:-}" = true ] && exit 1
fi

missing=()
for cmd in "${!NEED[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${NEED[$cmd]}")
done
# A module, not a command: Apache httpd's mod_jk (AJP load balancing) for the Java lab.
[ -f /usr/lib/apache2/modules/mod_jk.so ] || missing+=(libapache2-mod-jk)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  apt-get clean  # the downloaded packages are not needed once installed: CI's disk is small
fi
bash "$(dirname "$0")/lab.sh" fetch --backend java >/dev/null
bash "$(dirname "$0")/cmis.sh" fetch >/dev/null
