#!/usr/bin/env bash
# Held-out checks of the node what-ifs (docs/demands.md, "What would help"): on the Java lab
# (scripts/lab.sh --backend java, each Tomcat under a CPU quota), sweep an access path with
# fewer nodes and one with more in the same sweep, and compare each of the fewer-node cells'
# what-if for the larger node count with the peak the larger path measured. The quota is the
# known truth: k nodes of C CPUs have k times the capacity of one, less what the balancer,
# the client and the host they share take.
#
#   scripts/whatif-accuracy.sh [--quotas 0.3,0.6] [--pairs FROM:TO,...] [--repeats N]
#                              [--threads 1,2,4,8,16,30] [--runs 3] [--duration 3s]
#                              [--warm 60s] [--nodes 3] [--keep DIR]
# --pairs: access methods of access-methods/lab-java, FROM:TO with TO on more nodes (default
#   https-lb-1node:https-lb-2node,https-lb-2node:https-lb-3node,direct:http-lb). The node
#   counts come from the method files (server_pids are every node; the lb methods name
#   theirs; direct is node 1, http-lb and haproxy every node of the lab).
# --warm: load through every node before the first sweep of a quota (a JVM just started
#   runs at a fraction of its speed for a minute of load).
# One line per from-cell whose verdict named a saturated resource (the case the issue
# counts: a what-if is a conclusion only there), with the what-if's bound and interval,
# the measured peak of TO, and inside = lo <= peak <= hi ("declined" where the what-if says
# it is no conclusion, left out of the tally); then coverage and the median half-width. --keep DIR keeps each sweep's results. --rescore DIR scores the sweeps a
# --keep DIR holds again with this build (`ingestbench report` re-renders each summary from
# its runs): a change to the what-ifs judged on the same sweeps, not held out. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
quotas=0.3,0.6 pairs=https-lb-1node:https-lb-2node,https-lb-2node:https-lb-3node,direct:http-lb
repeats=1 threads=1,2,4,8,16,30 runs=3 duration=3s warm=60s nodes=3 keep= rescore=
while [ $# -gt 0 ]; do
  case "$1" in
    --quotas) quotas=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warm) warm=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --keep) keep=$(realpath -m "$2"); shift 2 ;;
    --rescore) rescore=$(realpath -m "$2"); shift 2 ;;
    *) echo "whatif-accuracy.sh: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[[ "$repeats" =~ ^[1-9][0-9]*$ ]] || { echo "whatif-accuracy.sh: --repeats $repeats: give a whole number, 1 or more" >&2; exit 2; }
if [ -n "${INGESTBENCH_BIN:-}" ]; then
  bin=$(realpath "$INGESTBENCH_BIN")
else
  cargo build --release --locked --quiet
  bin=$(realpath "${CARGO_TARGET_DIR:-target}/release/ingestbench")
fi
work=$(mktemp -d)
cleanup() {
  scripts/lab.sh down --backend java >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export INGESTBENCH_PASSWORD=admin
M=access-methods/lab-java
common=(--protocol cmis --profile opencmis --access-methods-dir "$M" --sizes small)
out=${keep:-$work}
mkdir -p "$out"
score() { # sweep-dir quota from to repeat load
  python3 - "$(ls "$1"/*/summary.json | head -n1)" "$2" "$3" "$4" "$5" "$6" "$M" <<'EOF'
import json, sys, re, os
path, q, frm, to, rep, load, mdir = sys.argv[1:]
s = json.load(open(path))
def node_count(m):
    t = open(os.path.join(mdir, m + '.toml')).read()
    g = re.search(r'(\d) members?', t)
    if g: return int(g.group(1))
    if m == 'direct' or 'proxy' in m: return 1
    return len(re.search(r'server_pids = \[([^\]]*)\]', t).group(1).split(','))
k = node_count(to)
change = {2: 'two_nodes', 3: 'three_nodes', 4: 'four_nodes'}[k]
cells = s['cells']
def dps(c): return c['docs_per_sec']
to_cells = [c for c in cells if c['method'] == to]
peak = max(to_cells, key=dps)
for c in cells:
    if c['method'] != frm: continue
    v = c.get('verdict') or {}
    if v.get('kind') in (None, 'serializing', 'latency', 'latency_or_serializing', 'unknown'): continue
    w = [w for w in v.get('what_if', []) if w['change'] == change]
    if not w: continue
    w = w[0]
    sh = w.get('same_host')
    b, lo, hi = (sh['docs_per_sec'], sh['docs_per_sec_lo'], sh['docs_per_sec_hi']) if sh else (w['bound_to_docs_per_sec'], w['bound_to_lo'], w['bound_to_hi'])
    inside = ('yes' if lo <= dps(peak) <= hi else 'no') if w.get('conclusive', True) else 'declined'
    print('\t'.join(str(x) for x in [q, frm, to, rep, c['threads'], round(dps(c), 1), v['kind'], v.get('resource', ''),
        v.get('utilization', ''), change, round(b), round(lo), round(hi), round(dps(peak)), peak['threads'],
        round(b / dps(peak), 3), inside, load]))
EOF
}
summarize() {
  python3 - "$rows" <<'EOF'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
declined = [r for r in rows if r['inside'] == 'declined']
rows = [r for r in rows if r['inside'] != 'declined']
if declined:
    print(f"{len(declined)} cases declined (the what-if said it is no conclusion), left out")
if not rows:
    print('no cell saturated a resource: nothing to check'); sys.exit(0)
inside = sum(r['inside'] == 'yes' for r in rows)
half = [(float(r['hi']) - float(r['lo'])) / 2 / float(r['bound']) * 100 for r in rows]
err = [abs(float(r['ratio']) - 1) * 100 for r in rows]
print(f"{len(rows)} cases: {inside}/{len(rows)} inside ({inside / len(rows):.0%}), "
      f"median half-width ±{statistics.median(half):.0f} %, median |error| {statistics.median(err):.0f} %")
EOF
}
if [ -n "$rescore" ]; then
  [ -f "$rescore/whatif.tsv" ] || { echo "whatif-accuracy.sh: --rescore $rescore: no whatif.tsv there (a --keep DIR of this script)" >&2; exit 2; }
  rows="$rescore/whatif-rescored.tsv"
  head -n1 "$rescore/whatif.tsv" > "$rows"
  for d in "$rescore"/q*-*-[0-9]*; do
    run=$(ls -d "$d"/*/ | head -n1)
    "$bin" report "$run" >/dev/null 2>&1 || { echo "report $run failed" >&2; continue; }
    # The quota and repeat from the directory's name, the pair from the sweep's plan, the
    # load from the first scoring.
    n=${d##*/}; q=${n#q}; q=${q%%-*}; r=${n##*-}
    read -r from to < <(python3 -c "import json,sys; print(*[m['name'] for m in json.load(open(sys.argv[1]))['methods']])" "$run/plan.json")
    load=$(awk -F'\t' -v q="$q" -v f="$from" -v r="$r" '$1==q && $2==f && $4==r { print $18; exit }' "$rescore/whatif.tsv")
    score "$d" "$q" "$from" "$to" "$r" "${load:-?}" >> "$rows"
  done
  summarize
  exit 0
fi
rows="$out/whatif.tsv"
printf 'quota\tfrom\tto\trepeat\tthreads\tfrom_docs_per_sec\tverdict\tresource\tutilization\tchange\tbound\tlo\thi\tpeak_to\tpeak_threads\tratio\tinside\tload\n' > "$rows"
IFS=, read -ra QS <<< "$quotas"
IFS=, read -ra PS <<< "$pairs"
for q in "${QS[@]}"; do
  scripts/lab.sh down --backend java >/dev/null 2>&1 || true
  rm -rf "${LAB_JAVA_DIR:-.lab-java}/store"
  INGESTBENCH_BIN=$bin scripts/lab.sh up --backend java --nodes "$nodes" --node-cpus "$q" >"$work/lab.log" 2>&1 \
    || { echo "the Java lab did not start: $(tail -n3 "$work/lab.log")" >&2; exit 1; }
  echo "quota $q: lab up ($nodes nodes), warming $warm through every node"
  "$bin" run "${common[@]}" --access-method http-lb --threads 16 --duration "$warm" --warmup 0 \
    --results-dir "$work/warm-$q" --quiet >/dev/null 2>&1 || true
  for r in $(seq "$repeats"); do
    for p in "${PS[@]}"; do
      from=${p%%:*} to=${p##*:}
      d="$out/q$q-$from-$to-$r"
      load=$(cut -d' ' -f1 /proc/loadavg)
      "$bin" sweep "${common[@]}" --access-methods "$from,$to" --threads "$threads" \
        --runs "$runs" --duration "$duration" --results-dir "$d" --quiet >"$work/sweep.log" 2>&1 \
        || { echo "sweep $from,$to at quota $q failed: $(tail -n3 "$work/sweep.log")" >&2; continue; }
      score "$d" "$q" "$from" "$to" "$r" "$load" >> "$rows"
      tail -n +2 "$rows" | awk -F'\t' -v q="$q" -v f="$from" -v r="$r" '$1==q && $2==f && $4==r' | cut -f1-3,5,7-8,10-17
    done
  done
done
summarize
