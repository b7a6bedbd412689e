#!/usr/bin/env bash
# The verdict against known causes (docs/demands.md, "The verdict"): the embedded target
# built to be limited by one thing, swept over threads N times, and the verdict of each
# sweep's fastest cell tallied against the cause it was built with:
#   serializing      USL contention σ 0.4 on 2 ms, 64 slots, resources idle
#   serializing-k    σ 0.1 and coherency κ 0.01 on 2 ms (a peak near 9 threads, then a fall)
#   latency          40 ms per request, 256 slots: more threads help all the way
#   cpu              --cpu-per-doc-ms 4: the server's CPU (or this host's, which it fills)
#
#   scripts/known-causes.sh [--causes serializing,serializing-k,latency,cpu] [--sweeps 10]
#                           [--threads 1,2,4,8,16] [--runs 3] [--duration 1s] [--keep DIR]
# One line per sweep (cause, sweep, fastest cell's threads and docs/s, verdict, right), then
# per cause how many of its sweeps were called right. A fresh target per cause. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=known-causes.sh
. scripts/lib/common.sh
causes=serializing,serializing-k,latency,cpu sweeps=10 threads=1,2,4,8,16 runs=3 duration=1s keep=
while [ $# -gt 0 ]; do
  takes_value "$@"
  case "$1" in
    --causes) causes=$2; shift 2 ;;
    --sweeps) sweeps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --keep) keep=$(realpath -m "$2"); shift 2 ;;
    *) usage_error "unknown option $1" ;;
  esac
done
[[ "$sweeps" =~ ^[1-9][0-9]*$ ]] || usage_error "--sweeps $sweeps: give a whole number, 1 or more"
bin=$(ingestbench_bin)
work=$(mktemp -d)
tpid=""
cleanup() {
  [ -n "$tpid" ] && kill "$tpid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
out=${keep:-$work/keep}
mkdir -p "$out" "$work/methods"
rows="$out/known-causes.tsv"
printf 'cause\tsweep\tthreads\tdocs_per_sec\tverdict\tright\tload\n' > "$rows"
flags_of() {
  case $1 in
    serializing) echo "--service-time-ms 2 --contention 0.4 --max-concurrent 64" ;;
    serializing-k) echo "--service-time-ms 2 --contention 0.1 --coherency 0.01 --max-concurrent 64" ;;
    latency) echo "--service-time-ms 40 --max-concurrent 256" ;;
    cpu) echo "--cpu-per-doc-ms 4" ;;
    *) echo "known-causes.sh: --causes: $1 is not one of serializing, serializing-k, latency, cpu" >&2; exit 2 ;;
  esac
}
right_of() {
  case $1 in
    serializing*) echo "serializing" ;;
    latency) echo "latency" ;;
    cpu) echo "server_cpu host_cpu cpu_quota" ;;
  esac
}
IFS=, read -ra CS <<< "$causes"
for c in "${CS[@]}"; do flags_of "$c" >/dev/null; done
for c in "${CS[@]}"; do
  rm -rf "$work/store" "$work/port"
  # shellcheck disable=SC2046
  "$bin" target --data-dir "$work/store" --port-file "$work/port" $(flags_of "$c") 2>"$work/target.log" &
  tpid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || { echo "the target did not start: $(cat "$work/target.log")" >&2; exit 1; }
  printf 'name = "direct"\nurl = "http://127.0.0.1:%s"\n' "$(head -n1 "$work/port")" > "$work/methods/direct.toml"
  for s in $(seq "$sweeps"); do
    d="$out/$c-$s"
    load=$(cut -d' ' -f1 /proc/loadavg)
    INGESTBENCH_PASSWORD=admin "$bin" sweep --quiet --access-methods direct --access-methods-dir "$work/methods" \
      --threads "$threads" --sizes small --runs "$runs" --duration "$duration" --profile basic \
      --results-dir "$d" >/dev/null 2>"$work/sweep.log" \
      || { echo "sweep $c $s failed: $(tail -n3 "$work/sweep.log")" >&2; continue; }
    python3 - "$(ls "$d"/*/summary.json | head -n1)" "$c" "$s" "$(right_of "$c")" "$load" <<'EOF' | tee -a "$rows"
import json, sys
path, cause, sweep, right, load = sys.argv[1:]
cells = json.load(open(path))['cells']
c = max(cells, key=lambda c: c['docs_per_sec'])
kind = (c.get('verdict') or {}).get('kind', 'none')
print('\t'.join([cause, sweep, str(c['threads']), str(round(c['docs_per_sec'])), kind,
                 'yes' if kind in right.split() else 'no', load]))
EOF
  done
  kill "$tpid" 2>/dev/null || true; wait "$tpid" 2>/dev/null || true; tpid=""
done
awk -F'\t' 'NR > 1 { n[$1]++; if ($6 == "yes") y[$1]++ } END { for (c in n) printf "%s: %d of %d sweeps called right\n", c, y[c], n[c] }' "$rows"
