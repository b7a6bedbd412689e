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
# (found from its port) beside the client's.
#
#   scripts/study.sh                 # 13 minutes on the project's 2-core machine
#   scripts/study.sh --quick         # the same steps with a tenth of the documents
#
# Writes results/study-<UTC time>/ (sweeps exp1-small, exp1-average, exp1-large, exp2-small,
# exp2-average, each with report.md / report.html / summary.json; load.txt with `uptime`
# before and after) and prints the reports' paths. Each sweep first checks the free space it
# needs (at most 10 GB, exp2-average); after each, the stored documents are deleted from the
# lab's shared directory, so the disk holds one sweep at a time.
#
# Environment: STUDY_RUNS (3), STUDY_THREADS (1-10,15,20,30,50,70,90,100), INGESTBENCH_BIN
# (default: cargo build --release), STUDY_KEEP_LAB=1 (leave the lab up; by default the study
# stops it only if it started it), and the lab's LAB_JAVA_* variables (scripts/lab-java.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUNS=${STUDY_RUNS:-3}
THREADS=${STUDY_THREADS:-1-10,15,20,30,50,70,90,100}
QUICK=""
if [ "${1:-}" = --quick ]; then
  QUICK=1 RUNS=${STUDY_RUNS:-2} THREADS=${STUDY_THREADS:-1,4,16}
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/study.sh [--quick]" >&2; exit 2
fi
# Documents per run (and warm-up documents before each run) by sweep: a fixed count, not a
# time window, so that what the shared directory must hold is known before a sweep starts
# (on loopback one thread stores ~300 MB/s of 3 MiB documents: 3 s windows of 21 large runs
# filled 33 GB). The counts make runs of one to a few seconds here. --quick divides them by 10.
n() { if [ -n "$QUICK" ]; then echo $(( ($1 + 9) / 10 )); else echo "$1"; fi; }
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
sweep() { # results-subdir GB-it-stores args...
  local dir="$OUT/$1" gb=$2; shift 2
  local free; free=$(df -Pk "$LABDIR/store" | awk 'NR==2 {print int($4 / 1048576)}')
  [ "$free" -gt $((gb + 5)) ] || { echo "study: $(basename "$dir") stores about $gb GB and needs 5 GB to spare; $LABDIR/store has $free GB free" >&2; exit 2; }
  echo "study: $(date -u +%H:%M:%S) sweep $(basename "$dir") (stores about $gb GB)" >&2
  local rc=0
  "$BIN" sweep --quiet --protocol cmis --profile opencmis --access-methods-dir "$METHODS" \
    --results-dir "$dir" --runs "$RUNS" "$@" || rc=$?
  # FileShare keeps nothing about a document but its files: removing them is a whole cleanup.
  rm -rf "$LABDIR/store/ingestbench"
  # 1 = finished with failed uploads: counted in the report, and the study goes on.
  [ "$rc" -le 1 ] || { echo "study: sweep $(basename "$dir") failed (exit $rc)" >&2; exit "$rc"; }
  [ "$rc" = 0 ] || echo "study: some uploads of $(basename "$dir") failed; see its report" >&2
}

SEVEN=https-lb,http-lb,direct,https-proxy,http-proxy,haproxy-https,haproxy-http
# The JVMs first: Tomcats just started run interpreted code until the JIT has compiled the
# upload path, and the seed's cluster had been up for days. Without this, every method's run 1
# of experiment 1 came out 20-75 % below its run 3 (direct 1521, 1949, 2288 docs/sec), the
# cold start landing on whichever method ran first. A throwaway sweep through all nine
# methods, one run at 4 threads per size (each Tomcat sees some 25,000 uploads, 2.5 GB in
# all); kept as warm-jvm-<size>/ to show it.
STUDY_RUNS_SET=$RUNS RUNS=1
for w in small:4000 average:400 large:40; do
  sweep "warm-jvm-${w%%:*}" 2 --access-methods "$SEVEN,https-lb-1node,https-lb-2node" \
    --baseline direct --threads 4 --sizes "${w%%:*}" --docs "$(n "${w##*:}")" --warmup 0
done
RUNS=$STUDY_RUNS_SET

# Experiment 1, one sweep per size class (each with its own document count): 7 methods x 3 runs.
sweep exp1-small 1 --access-methods "$SEVEN" --baseline direct --threads 1 --sizes small \
  --docs "$(n 2000)" --warmup "$(n 200)"
sweep exp1-average 6 --access-methods "$SEVEN" --baseline direct --threads 1 --sizes average \
  --docs "$(n 800)" --warmup "$(n 80)"
sweep exp1-large 9 --access-methods "$SEVEN" --baseline direct --threads 1 --sizes large \
  --docs "$(n 120)" --warmup "$(n 12)"
# Experiment 2: one member against two, 17 thread counts x 3 runs, per size class.
sweep exp2-small 8 --access-methods https-lb-1node,https-lb-2node --baseline https-lb-2node \
  --threads "$THREADS" --sizes small --docs "$(n 4000)" --warmup "$(n 400)"
sweep exp2-average 10 --access-methods https-lb-1node,https-lb-2node --baseline https-lb-2node \
  --threads "$THREADS" --sizes average --docs "$(n 300)" --warmup "$(n 30)"

echo "after: $(uptime)" >>"$OUT/load.txt"
echo "study: done in $(( ($(date +%s) - T0) / 60 )) min; $(tr '\n' ' ' <"$OUT/load.txt")" >&2
for d in "$OUT"/*/sweep-*; do echo "  $d/report.html"; done
