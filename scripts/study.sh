#!/usr/bin/env bash
# The seed study, end to end, on the Java lab (scripts/lab.sh up --backend java: two Tomcat 9
# nodes running OpenCMIS FileShare over one shared directory, behind Apache httpd mod_jk /
# mod_proxy and HAProxy). Its two experiments:
#   1. Which access path: one thread, the seven methods (https-lb, http-lb, direct,
#      https-proxy, http-proxy, haproxy-https, haproxy-http) x small/average/large x 3 runs,
#      each method against direct, paired run by run (report: "Relative cost against direct").
#   2. One node against two: the same mod_jk balancer in HTTPS with one member
#      (https-lb-1node) or both (https-lb-2node), 1-10,15,20,30,50,70,90,100 threads, small
#      and average documents, 3 runs (report.html: docs/sec against threads, per size).
# Every cell shows both Tomcats' CPU (the methods list both node pids) and the front end's
# (found from its port) beside the client's. Runs are steady-state windows (--duration), so
# each run takes the same time whatever its throughput.
#
#   scripts/study.sh                 # about 25 minutes on the project's 2-core machine
#   scripts/study.sh --quick         # a smoke run of the same steps (about 3 minutes)
#
# Writes results/study-<UTC time>/ (exp1, exp2-small, exp2-average sweeps, each with
# report.md / report.html / summary.json; load.txt with `uptime` before and after) and prints
# the reports' paths. Between sweeps it deletes the stored documents from the lab's shared
# directory (FileShare keeps nothing else about them), so the disk holds one sweep at a time
# (exp2-average writes about 10 GB).
#
# Environment: STUDY_RUNS (3), STUDY_THREADS (1-10,15,20,30,50,70,90,100), INGESTBENCH_BIN
# (default: cargo build --release), STUDY_KEEP_LAB=1 (leave the lab up; by default the study
# stops it only if it started it), and the lab's LAB_JAVA_* variables (scripts/lab-java.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUNS=${STUDY_RUNS:-3}
THREADS=${STUDY_THREADS:-1-10,15,20,30,50,70,90,100}
W1=3s W2S=3s W2A=2s WARM=1s
if [ "${1:-}" = --quick ]; then
  RUNS=${STUDY_RUNS:-2} THREADS=${STUDY_THREADS:-1,4,16} W1=0.5s W2S=0.5s W2A=0.5s WARM=0.2s
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/study.sh [--quick]" >&2; exit 2
fi
LABDIR=$(realpath -m "${LAB_JAVA_DIR:-$ROOT/.lab-java}")
METHODS=$(realpath -m "${LAB_JAVA_METHODS_DIR:-$ROOT/access-methods/lab-java}")
OUT="$ROOT/results/study-$(date -u +%Y%m%dT%H%M%SZ)"

if [ -z "${INGESTBENCH_BIN:-}" ]; then
  cargo build --release --locked -q
  BIN="$ROOT/target/release/ingestbench"
else
  BIN=$INGESTBENCH_BIN
fi
[ -x "$BIN" ] || { echo "study: INGESTBENCH_BIN=$BIN is not an executable" >&2; exit 2; }
export INGESTBENCH_PASSWORD=admin INGESTBENCH_BIN="$BIN"

started=""
if ! scripts/lab.sh status --backend java | grep -q 'lab: up'; then started=1; fi
scripts/lab.sh up --backend java >/dev/null
stop_lab() { [ -n "$started" ] && [ "${STUDY_KEEP_LAB:-}" != 1 ] && scripts/lab.sh down --backend java >/dev/null; true; }
trap stop_lab EXIT
mkdir -p "$OUT"
T0=$(date +%s)
{ echo "before: $(uptime)"; } >"$OUT/load.txt"

# A sweep through the Java lab's methods, CMIS with the ten typed properties of ComplexType.
sweep() { # results-subdir args...
  local dir="$OUT/$1"; shift
  echo "study: $(date -u +%H:%M:%S) sweep $(basename "$dir")" >&2
  local rc=0
  "$BIN" sweep --quiet --protocol cmis --profile opencmis --access-methods-dir "$METHODS" \
    --results-dir "$dir" --runs "$RUNS" --warmup "$WARM" "$@" || rc=$?
  # 1 = finished with failed uploads: counted in the report, and the study goes on.
  [ "$rc" -le 1 ] || { echo "study: sweep $(basename "$dir") failed (exit $rc)" >&2; exit "$rc"; }
  [ "$rc" = 0 ] || echo "study: some uploads of $(basename "$dir") failed; see its report" >&2
  # The sweep directory is the one entry of $dir; FileShare's documents are only files.
  rm -rf "$LABDIR/store/ingestbench"
}

sweep exp1 --access-methods https-lb,http-lb,direct,https-proxy,http-proxy,haproxy-https,haproxy-http \
  --baseline direct --threads 1 --sizes small,average,large --duration "$W1"
sweep exp2-small --access-methods https-lb-1node,https-lb-2node --baseline https-lb-2node \
  --threads "$THREADS" --sizes small --duration "$W2S"
sweep exp2-average --access-methods https-lb-1node,https-lb-2node --baseline https-lb-2node \
  --threads "$THREADS" --sizes average --duration "$W2A"

echo "after: $(uptime)" >>"$OUT/load.txt"
echo "study: done in $(( ($(date +%s) - T0) / 60 )) min; $(tr '\n' ' ' <"$OUT/load.txt")" >&2
for d in "$OUT"/*/sweep-*; do echo "  $d/report.html"; done
