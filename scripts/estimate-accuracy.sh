#!/usr/bin/env bash
# Accuracy of `ingestbench estimate` on a real directory, against a target whose capacity is
# known: describe DIR, measure a 10 % sample of its size mix (sweep --corpus, 3 runs, two
# thread counts), estimate the whole import, then upload every file of the corpus (run
# --corpus DIR --sample N) at each thread count and compare predicted with measured duration.
#   scripts/estimate-accuracy.sh [DIR]        # default /usr/share/doc
# Loopback only; the target is `ingestbench target` with 2 slots x (2 ms + 20 ms/MiB).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/usr/share/doc}
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/ingestbench
work=$(mktemp -d)
trap 'kill $tpid 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" target --data-dir "$work/store" --port-file "$work/port" \
  --service-time-ms 2 --cost-per-mib-ms 20 --max-concurrent 2 2>"$work/target.log" &
tpid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(head -n1 "$work/port")"
export INGESTBENCH_PASSWORD=admin
"$bin" corpus "$dir" --output "$work/corpus.json" 2>&1 | head -n 3
docs=$(python3 -c "import json;print(json.load(open('$work/corpus.json'))['documents'])")
sample=$(( docs / 10 ))
mkdir -p "$work/methods"
printf 'name = "direct"\nurl = "%s"\n' "$url" > "$work/methods/direct.toml"
"$bin" sweep --quiet --corpus "$work/corpus.json" --access-methods direct \
  --access-methods-dir "$work/methods" --threads 3,8 --docs "$sample" --runs 3 \
  --profile basic --results-dir "$work/results" >/dev/null
sweep=$(ls -d "$work"/results/sweep-*)
"$bin" estimate --corpus "$work/corpus.json" "$sweep" --json 2>/dev/null > "$work/estimate.json"
echo "corpus: $docs documents; sample: $sample documents per run (10 %), 3 runs, 3 sizes"
for t in 3 8; do
  "$bin" run --quiet --url "$url" --corpus "$dir" --sample "$docs" --threads "$t" \
    --runs 1 --profile basic --results-dir "$work/results" --json > "$work/run-$t.json"
  python3 - "$work/estimate.json" "$work/run-$t.json" "$t" <<'PY'
import json, sys
est, run, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
o = next(o for o in est["options"] if o["threads"] == t)
m = run["mean_duration_s"]
print(f"threads {t}: predicted {o['duration_s']:.1f} s ± {o['ci95_s']:.1f} s, measured {m:.1f} s, ratio {o['duration_s']/m:.3f}")
PY
done
