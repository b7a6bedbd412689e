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
#                              [--warm 60s] [--nodes 3] [--busy none,nice,normal]
#                              [--busy-pairs FROM:TO,...] [--keep DIR]
# --pairs: access methods of access-methods/lab-java, FROM:TO with TO on more nodes (default
#   https-lb-1node:https-lb-2node,https-lb-2node:https-lb-3node,direct:http-lb; the
#   http-lb-Nnode methods are the same mod_jk workers without TLS). The node counts come
#   from the method files (server_pids are every node; the lb methods name theirs; direct is
#   node 1, http-lb and haproxy every node of the lab).
# --busy: after each quiet sweep of a pair in --busy-pairs (default: the first pair), sweep
#   FROM again beside a busy loop: `nice` a nice-19 loop on every core (a backup job or a
#   build soaking up every idle cycle), `normal` one loop at normal priority (a neighbour
#   taking a core). Its what-if is held against the quiet sweep's peak of TO (the quiet-host
#   truth): within ±15 % of it, or "declined" where it says it cannot tell; `named` says
#   whether the verdict named the other load.
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
SCRIPT=whatif-accuracy.sh
. scripts/lib/common.sh
quotas=0.3,0.6 pairs=https-lb-1node:https-lb-2node,https-lb-2node:https-lb-3node,direct:http-lb
repeats=1 threads=1,2,4,8,16,30 runs=3 duration=3s warm=60s nodes=3 keep= rescore=
busy=none busy_pairs=
while [ $# -gt 0 ]; do
  takes_value "$@"
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
    --busy) busy=$2; shift 2 ;;
    --busy-pairs) busy_pairs=$2; shift 2 ;;
    *) usage_error "unknown option $1" ;;
  esac
done
[[ "$repeats" =~ ^[1-9][0-9]*$ ]] || usage_error "--repeats $repeats: give a whole number, 1 or more"
IFS=, read -ra BUSY <<< "$busy"
for b in "${BUSY[@]}"; do
  case "$b" in none|nice|normal) ;; *) usage_error "--busy: $b is not one of none, nice, normal" ;; esac
done
[ "${BUSY[0]}" = none ] || usage_error "--busy $busy: start with none (the quiet sweep is the truth the busy ones are held against)"
busy_pairs=${busy_pairs:-${pairs%%,*}}
for p in ${pairs//,/ } ${busy_pairs//,/ }; do
  [[ "$p" == ?*:?* ]] || usage_error "--pairs/--busy-pairs: $p is not FROM:TO"
done
bin=$(ingestbench_bin)
work=$(mktemp -d)
busy_pids=()
busy_start() { # nice | normal
  local i
  case "$1" in
    nice) for i in $(seq "$(nproc)"); do timeout 1800 nice -n 19 bash -c 'while :; do :; done' & busy_pids+=($!); done ;;
    normal) timeout 1800 bash -c 'while :; do :; done' & busy_pids+=($!) ;;
  esac
  sleep 2
}
busy_stop() {
  [ ${#busy_pids[@]} -eq 0 ] && return 0
  kill "${busy_pids[@]}" 2>/dev/null || true
  wait "${busy_pids[@]}" 2>/dev/null || true
  busy_pids=()
}
cleanup() {
  busy_stop
  scripts/lab.sh down --backend java >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export INGESTBENCH_PASSWORD=admin
M=access-methods/lab-java
common=(--protocol cmis --profile opencmis --access-methods-dir "$M" --sizes small)
out=${keep:-$work}
mkdir -p "$out"
score() { # sweep-dir quota from to repeat load [busy-mode quiet-sweep-dir]
  local truth=${8:-$1}
  python3 - "$(ls "$1"/*/summary.json | head -n1)" "$2" "$3" "$4" "$5" "$6" "$M" "${7:-none}" \
    "$(ls "$truth"/*/summary.json | head -n1)" <<'EOF'
import json, sys, re, os
path, q, frm, to, rep, load, mdir, busy, truth = sys.argv[1:]
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
# The truth: TO's peak in the same sweep, or for a busy sweep in the quiet one before it.
to_cells = [c for c in json.load(open(truth))['cells'] if c['method'] == to]
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
    conclusive = w.get('conclusive', True)
    inside = ('yes' if lo <= dps(peak) <= hi else 'no') if conclusive else 'declined'
    within = ('yes' if abs(b / dps(peak) - 1) <= 0.15 else 'no') if conclusive else 'declined'
    named = 'yes' if 'busy host' in v.get('text', '') else 'no'
    print('\t'.join(str(x) for x in [q, frm, to, rep, c['threads'], round(dps(c), 1), v['kind'], v.get('resource', ''),
        v.get('utilization', ''), change, round(b), round(lo), round(hi), round(dps(peak)), peak['threads'],
        round(b / dps(peak), 3), inside, load, busy, named, within]))
EOF
}
summarize() {
  python3 - "$rows" <<'EOF'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
quiet = [r for r in rows if r.get('busy') in ('none', None)]
declined = [r for r in quiet if r['inside'] == 'declined']
quiet = [r for r in quiet if r['inside'] != 'declined']
if declined:
    print(f"{len(declined)} cases declined (the what-if said it is no conclusion), left out")
if not quiet:
    print('no cell saturated a resource: nothing to check')
else:
    inside = sum(r['inside'] == 'yes' for r in quiet)
    half = [(float(r['hi']) - float(r['lo'])) / 2 / float(r['bound']) * 100 for r in quiet]
    err = [abs(float(r['ratio']) - 1) * 100 for r in quiet]
    sweeps = len({(r['quota'], r['from'], r['to'], r['repeat']) for r in quiet})
    print(f"{len(quiet)} cases ({sweeps} sweeps): {inside}/{len(quiet)} inside ({inside / len(quiet):.0%}), "
          f"median half-width ±{statistics.median(half):.0f} %, median |error| {statistics.median(err):.0f} %")
for mode in ('nice', 'normal'):
    b = [r for r in rows if r.get('busy') == mode]
    if not b:
        continue
    ok = sum(r['within15'] in ('yes', 'declined') for r in b)
    dec = sum(r['within15'] == 'declined' for r in b)
    named = sum(r['named'] == 'yes' for r in b)
    print(f"busy ({mode}): {len(b)} cases: {ok}/{len(b)} within ±15 % of the quiet truth or saying they cannot tell "
          f"({dec} cannot tell); the other load named in {named}/{len(b)}")
EOF
}
header() {
  printf 'quota\tfrom\tto\trepeat\tthreads\tfrom_docs_per_sec\tverdict\tresource\tutilization\tchange\tbound\tlo\thi\tpeak_to\tpeak_threads\tratio\tinside\tload\tbusy\tnamed\twithin15\n'
}
if [ -n "$rescore" ]; then
  [ -f "$rescore/whatif.tsv" ] || usage_error "--rescore $rescore: no whatif.tsv there (a --keep DIR of this script)"
  rows="$rescore/whatif-rescored.tsv"
  header > "$rows"
  for d in "$rescore"/q*-*-[0-9]*; do
    run=$(ls -d "$d"/*/ | head -n1)
    "$bin" report "$run" >/dev/null 2>&1 || { echo "report $run failed" >&2; continue; }
    # The quota, repeat and busy mode from the directory's name, the pair from the quiet
    # sweep's plan, the load from the first scoring.
    n=${d##*/} mode=none quiet=$d
    case "$n" in *-nice|*-normal) mode=${n##*-}; n=${n%-*}; quiet=${d%-*} ;; esac
    q=${n#q}; q=${q%%-*}; r=${n##*-}
    read -r from to < <(python3 -c "import json,sys; print(*[m['name'] for m in json.load(open(sys.argv[1]))['methods']])" "$(ls -d "$quiet"/*/ | head -n1)/plan.json")
    load=$(awk -F'\t' -v q="$q" -v f="$from" -v r="$r" -v b="$mode" '$1==q && $2==f && $4==r && ($19==b || ($19=="" && b=="none")) { print $18; exit }' "$rescore/whatif.tsv")
    score "$d" "$q" "$from" "$to" "$r" "${load:-?}" "$mode" "$quiet" >> "$rows"
  done
  summarize
  exit 0
fi
rows="$out/whatif.tsv"
header > "$rows"
IFS=, read -ra QS <<< "$quotas"
IFS=, read -ra PS <<< "$pairs"
for q in "${QS[@]}"; do
  scripts/lab.sh down --backend java >/dev/null 2>&1 || true
  rm -rf "${LAB_JAVA_DIR:-.lab-java}/store"
  INGESTBENCH_BIN=$bin scripts/lab.sh up --backend java --nodes "$nodes" --node-cpus "$q" >"$work/lab.log" 2>&1 \
    || { echo "the Java lab did not start: $(tail -n3 "$work/lab.log")" >&2; exit 1; }
  for p in "${PS[@]}"; do
    for m in ${p//:/ }; do
      [ -f "$M/$m.toml" ] || usage_error "--pairs: $m is not an access method of $M (with --nodes $nodes)"
    done
  done
  echo "quota $q: lab up ($nodes nodes), warming $warm through every node"
  "$bin" sweep "${common[@]}" --access-methods http-lb --threads 16 --runs 1 --duration "$warm" --warmup 0 \
    --results-dir "$work/warm-$q" --quiet >"$work/warm.log" 2>&1 \
    || { echo "the warm-up failed: $(tail -n3 "$work/warm.log")" >&2; exit 1; }
  for r in $(seq "$repeats"); do
    for p in "${PS[@]}"; do
      from=${p%%:*} to=${p##*:}
      d="$out/q$q-$from-$to-$r"
      load=$(cut -d' ' -f1 /proc/loadavg)
      "$bin" sweep "${common[@]}" --access-methods "$from,$to" --threads "$threads" \
        --runs "$runs" --duration "$duration" --results-dir "$d" --quiet >"$work/sweep.log" 2>&1 \
        || { echo "sweep $from,$to at quota $q failed: $(tail -n3 "$work/sweep.log")" >&2; continue; }
      score "$d" "$q" "$from" "$to" "$r" "$load" >> "$rows"
      for mode in "${BUSY[@]:1}"; do
        [[ ",$busy_pairs," == *",$p,"* ]] || continue
        busy_start "$mode"
        load=$(cut -d' ' -f1 /proc/loadavg)
        "$bin" sweep "${common[@]}" --access-methods "$from" --threads "$threads" \
          --runs "$runs" --duration "$duration" --results-dir "$d-$mode" --quiet >"$work/sweep.log" 2>&1 \
          || echo "sweep $from beside a $mode busy loop at quota $q failed: $(tail -n3 "$work/sweep.log")" >&2
        busy_stop
        [ -d "$d-$mode" ] && score "$d-$mode" "$q" "$from" "$to" "$r" "$load" "$mode" "$d" >> "$rows"
      done
      tail -n +2 "$rows" | awk -F'\t' -v q="$q" -v f="$from" -v r="$r" '$1==q && $2==f && $4==r' | cut -f1-3,5,7-8,10-17,19-21
    done
  done
done
summarize
