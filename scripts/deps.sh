#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, idempotently. Root installs what is
# missing; non-root only checks and names what is missing. Safe to run again and again.
#   scripts/deps.sh           # test dependencies
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
  [go]=golang-go
)

missing=()
for cmd in "${!NEED[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${NEED[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "deps: missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
