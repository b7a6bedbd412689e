#!/usr/bin/env bash
# The cutover plan checked end to end on the Java lab (docs/estimate.md, "Will it finish
# inside the window?"): a window the measured configuration misses, the configuration the
# plan recommends actually run, and the import held against the interval the plan stated.
#  1. the lab up (--nodes, each Tomcat under --node-cpus), warmed for --warm through every node;
#  2. a pilot of the corpus DIR through one node (https-lb-1node, --threads, --sample-time,
#     two runs);
#  3. its estimate; the window is --window-share of the one-node row's lower bound, so that
#     row misses it;
#  4. `estimate --window`: the plan's rows, its answer, and the what-if row it recommends
#     (the fewest nodes that meet the window, else the likeliest to);
#  5. the whole corpus imported through the lb worker with that many nodes, at the same
#     threads, on top of what the pilot left (as the estimate assumes);
#  6. one line: the window, the one-node row, the recommended row with its interval, the
#     import's measured duration, inside the interval, inside the window.
#
#   scripts/plan-check.sh [--node-cpus 0.3] [--nodes 3] [--threads 16] [--sample-time 30s]
#                         [--window-share 0.85] [--warm 150s] [--keep DIR] [DIR]
# DIR: the corpus (default /root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu, about
#   52,000 real files and 1.4 GiB, if it is there; else /usr/share/man).
# Each JVM is C1 only (LAB_JAVA_OPTS=-XX:TieredStopAtLevel=1 unless set): at a fraction of a
# CPU a JVM with C2 warms for many minutes, and the pilot would meet a different server than
# the import. --keep DIR keeps the pilot, the estimates and the import. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=plan-check.sh
. scripts/lib/common.sh
cpus=0.3 nodes=3 threads=16 stime=30s share=0.85 warm=150s keep=
dir=/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu
[ -d "$dir" ] || dir=/usr/share/man
while [ $# -gt 0 ]; do
  case "$1" in
    -*) takes_value "$@" ;;
  esac
  case "$1" in
    --node-cpus) cpus=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --sample-time) stime=$2; shift 2 ;;
    --window-share) share=$2; shift 2 ;;
    --warm) warm=$2; shift 2 ;;
    --keep) keep=$(realpath -m "$2"); shift 2 ;;
    -*) usage_error "unknown option $1" ;;
    *) dir=$1; shift ;;
  esac
done
[ -d "$dir" ] || usage_error "$dir is not a directory (the corpus)"
awk -v s="$share" 'BEGIN { exit !(s > 0 && s < 1) }' || usage_error "--window-share $share: give a fraction between 0 and 1"
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || usage_error "--threads $threads: give a whole number, 1 or more"
[[ "$nodes" =~ ^[2-4]$ ]] || usage_error "--nodes $nodes: give 2, 3 or 4 (the Java lab's mod_jk workers)"
awk -v c="$cpus" 'BEGIN { exit !(c + 0 > 0 && c + 0 <= 64 && c ~ /^[0-9]*\.?[0-9]+$/) }' \
  || usage_error "--node-cpus $cpus: give a CPU quota such as 0.3"
[[ "$stime" =~ ^[0-9]+(ms|s|m|h)?$ ]] || usage_error "--sample-time $stime: give a duration such as 30s or 2m"
[[ "$warm" =~ ^[0-9]+(ms|s|m|h)?$ ]] || usage_error "--warm $warm: give a duration such as 150s"
bin=$(ingestbench_bin)
work=$(mktemp -d)
out=${keep:-$work/keep}
mkdir -p "$out"
cleanup() {
  scripts/lab.sh down --backend java >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export INGESTBENCH_PASSWORD=admin LAB_JAVA_OPTS=${LAB_JAVA_OPTS:--XX:TieredStopAtLevel=1}
M=access-methods/lab-java
common=(--protocol cmis --profile opencmis)
names=(--on-name-clash rename --on-bad-name rename)
# `run` takes a URL, not an access method: the method file's URL, CA and every node's pid
# (the front end is found from the URL's port).
method_args() { # name
  python3 - "$M/$1.toml" <<'EOF'
import re, sys, os
t = open(sys.argv[1]).read()
args = ['--url', re.search(r'^url = "([^"]+)"', t, re.M).group(1)]
if 'ca_cert' in t:
    args += ['--ca-cert', os.path.join(os.path.dirname(sys.argv[1]), 'ca.pem')]
for p in re.search(r'server_pids = \[([^\]]*)\]', t).group(1).split(','):
    args += ['--server-pid', p.strip()]
print(' '.join(args))
EOF
}

"$bin" corpus "$dir" --output "$out/corpus.json" >/dev/null 2>"$work/corpus.log" \
  || { echo "corpus $dir: $(tail -n3 "$work/corpus.log")" >&2; exit 1; }
docs=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['documents'])" "$out/corpus.json")
scripts/lab.sh down --backend java >/dev/null 2>&1 || true
rm -rf "${LAB_JAVA_DIR:-.lab-java}/store"
INGESTBENCH_BIN=$bin scripts/lab.sh up --backend java --nodes "$nodes" --node-cpus "$cpus" >"$work/lab.log" 2>&1 \
  || { echo "the Java lab did not start: $(tail -n3 "$work/lab.log")" >&2; exit 1; }
echo "corpus $dir: $docs documents; lab up ($nodes nodes at $cpus CPU), warming $warm through every node"
"$bin" sweep "${common[@]}" --access-methods-dir "$M" --access-methods http-lb --threads 16 --runs 1 \
  --duration "$warm" --warmup 0 --sizes small --results-dir "$work/warm" --quiet >"$work/warm.log" 2>&1 \
  || { echo "the warm-up failed: $(tail -n3 "$work/warm.log")" >&2; exit 1; }

load=$(cut -d' ' -f1 /proc/loadavg)
read -ra one < <(method_args https-lb-1node)
"$bin" run "${common[@]}" "${one[@]}" --corpus "$dir" "${names[@]}" --sample-time "$stime" --runs 2 \
  --threads "$threads" --warmup 0 --results-dir "$out/pilot" --quiet >/dev/null 2>"$work/pilot.log" \
  || { echo "the pilot failed: $(tail -n3 "$work/pilot.log")" >&2; exit 1; }
pilot=$(ls -d "$out"/pilot/*/ | head -n1)
"$bin" estimate --corpus "$out/corpus.json" "$pilot" --json >"$out/estimate.json" 2>"$out/estimate.txt" \
  || { echo "estimate failed: $(tail -n3 "$out/estimate.txt")" >&2; exit 1; }
window=$(python3 -c "
import json, sys
o = json.load(open(sys.argv[1]))['options'][0]
print(int(float(sys.argv[2]) * o['duration_lo_s']))" "$out/estimate.json" "$share")
"$bin" estimate --corpus "$out/corpus.json" "$pilot" --window "${window}s" --json \
  >"$out/plan.json" 2>"$out/plan.txt" || { echo "estimate --window failed: $(tail -n3 "$out/plan.txt")" >&2; exit 1; }
sed -n '/window/,$p' "$out/plan.txt" | head -n 12
# The recommended row: the fewest nodes that meet the window, else the likeliest to finish.
read -r change nodes_to < <(python3 - "$out/plan.json" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))['window']['rows']
k = {'two_nodes': 2, 'three_nodes': 3, 'four_nodes': 4}
nodes = [r for r in rows if r.get('what_if') in k]
if not nodes:
    sys.exit("the plan has no node what-if row: did the pilot saturate the node?")
meets = [r for r in nodes if r['outcome'] == 'meets']
r = min(meets, key=lambda r: k[r['what_if']]) if meets else max(nodes, key=lambda r: r['p_finish'])
print(r['what_if'], k[r['what_if']])
EOF
)
[ "$nodes_to" -le "$nodes" ] || { echo "the plan recommends $change: the lab runs $nodes nodes (--nodes)" >&2; exit 1; }
echo "the plan recommends $change: importing all $docs documents through https-lb-${nodes_to}node at $threads threads"
read -ra many < <(method_args "https-lb-${nodes_to}node")
"$bin" run "${common[@]}" "${many[@]}" --corpus "$dir" "${names[@]}" --sample "$docs" --runs 1 \
  --threads "$threads" --warmup 0 --results-dir "$out/import" --json >"$out/import.json" 2>"$work/import.log" \
  || { echo "the import failed: $(tail -n3 "$work/import.log")" >&2; exit 1; }
python3 - "$out/plan.json" "$out/import.json" "$change" "$cpus" "$threads" "$load" "$dir" <<'EOF' | tee "$out/plan-check.tsv"
import json, sys
plan, run, change, cpus, threads, load, corpus = sys.argv[1:]
w, run = json.load(open(plan))['window'], json.load(open(run))
rows = w['rows']
one = next(r for r in rows if not r.get('what_if'))
rec = next(r for r in rows if r.get('what_if') == change)
m = run['mean_duration_s']
print('corpus\tquota\tthreads\twindow_s\tone_node_s\tone_node_lo_s\tone_node_hi_s\tone_node_outcome\tplan\tplan_s\tplan_lo_s\tplan_hi_s\tplan_outcome\tp_finish\tmeasured_s\tratio\tinside\tin_window\tdocs_ok\tload')
print('\t'.join(str(x) for x in [corpus, cpus, threads, round(w['window_s']), round(one['duration_s']), round(one['duration_lo_s']),
    round(one['duration_hi_s']), one['outcome'], change, round(rec['duration_s']), round(rec['duration_lo_s']),
    round(rec['duration_hi_s']), rec['outcome'], round(rec['p_finish'], 3), round(m, 1), round(rec['duration_s'] / m, 3),
    'yes' if rec['duration_lo_s'] <= m <= rec['duration_hi_s'] else 'no', 'yes' if m <= w['window_s'] else 'no',
    run.get('docs_ok'), load]))
EOF
