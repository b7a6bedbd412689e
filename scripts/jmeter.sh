#!/usr/bin/env bash
# JMeter 5.6.3 from Maven Central, for checking ingestbench's JTL files with JMeter's own
# dashboard generator. Idempotent: the first call builds a JMeter home with
# jmeter-maven-plugin 3.7.0 (scripts/jmeter/pom.xml; ~40 s, ~75 MB of jars into ~/.m2) and
# copies it to $JMETER_HOME (default ~/.cache/ingestbench/jmeter-5.6.3); later calls only
# print it.
#   scripts/jmeter.sh home                 # prints the JMeter home (installing it if needed)
#   scripts/jmeter.sh dashboard FILE DIR   # jmeter -g FILE -o DIR (DIR must not exist)
# Needs java and mvn (scripts/deps.sh installs them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
home=${JMETER_HOME:-$HOME/.cache/ingestbench/jmeter-5.6.3}
die() { echo "jmeter.sh: $*" >&2; exit 2; }
install() {
  [ -f "$home/bin/ApacheJMeter-5.6.3.jar" ] && return 0
  command -v mvn >/dev/null || die "mvn is missing: apt-get install maven (scripts/deps.sh does)"
  command -v java >/dev/null || die "java is missing: apt-get install default-jdk-headless (scripts/deps.sh does)"
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  cp "$root/scripts/jmeter/pom.xml" "$work/"
  (cd "$work" && mvn -B -q verify >"$work/mvn.log" 2>&1) || { tail -20 "$work/mvn.log" >&2; die "building the JMeter home failed"; }
  built=$(dirname "$(dirname "$(find "$work/target" -path '*/jmeter/bin/ApacheJMeter-5.6.3.jar' | head -1)")")
  [ -d "$built" ] || die "the JMeter home was not built (see jmeter-maven-plugin's output)"
  mkdir -p "$(dirname "$home")"
  rm -rf "$home.tmp" && cp -r "$built" "$home.tmp" && mv "$home.tmp" "$home"
}
case "${1:-home}" in
  home) install; echo "$home" ;;
  dashboard)
    [ $# -eq 3 ] || die "usage: scripts/jmeter.sh dashboard FILE.jtl OUTPUT_DIR"
    install
    java -Djava.awt.headless=true -jar "$home/bin/ApacheJMeter-5.6.3.jar" -g "$2" -o "$3" -j "$(mktemp)"
    ;;
  *) die "unknown command $1 (home, dashboard)" ;;
esac
