#!/usr/bin/env bash
# Writes the results directories of tests/old-results/ with an earlier release (f47d13e for the
# top-level set, 8d335e4 for 8d335e4/):
#   B=that/ingestbench [RELEASE=8d335e4] [OUT=tests/old-results/8d335e4] tests/old-results/make.sh
# With OUT, the directories are placed there under the names the tests use, with only the files
# they read (the reports left out); without it, they stay in a temporary directory.
set -euo pipefail
B=${B:?give the binary of that release as B}
RELEASE=${RELEASE:-f47d13e}
OUT=${OUT:+$(mkdir -p "$OUT" && cd "$OUT" && pwd)}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d); cd "$W"
export INGESTBENCH_PASSWORD=admin
# A target process (its own store) for the runs with --url.
"$B" target --data-dir "$W/store" --port-file "$W/port" --service-time-ms 20 --max-concurrent 1 2>/dev/null &
TP=$!
trap 'kill $TP 2>/dev/null || true' EXIT
for i in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.1; done
URL="http://127.0.0.1:$(head -1 "$W/port")"
# 1. a complete run
"$B" run --quiet --profile basic --url "$URL" --docs 8 --threads 2 --runs 2 --warmup 0 --results-dir "$W/r1" >/dev/null
# 2. an interrupted run (SIGINT during run 2)
"$B" run --quiet --profile basic --url "$URL" --docs 30 --threads 2 --runs 2 --warmup 0 --results-dir "$W/r2" >/dev/null 2>&1 &
P=$!
for i in $(seq 400); do
  d=$(ls -d "$W"/r2/run-* 2>/dev/null | head -1 || true)
  if [ -n "$d" ] && [ -f "$d/manifest.jsonl" ] && [ "$(wc -l < "$d/manifest.jsonl")" -ge 40 ]; then break; fi
  sleep 0.05
done
kill -INT $P; wait $P || true
# 3. two shards of one run
RP=$((20000 + RANDOM % 20000))
SHARDS=()
for k in 0 1; do
  "$B" run --quiet --profile basic --url "$URL" --docs 8 --threads 2 --runs 2 --warmup 0 \
    --plan-id old-plan --shard "$k/2" --rendezvous "127.0.0.1:$RP" --rendezvous-timeout 30 \
    --results-dir "$W/r3" >/dev/null &
  SHARDS+=($!)
done
wait "${SHARDS[@]}"
# 4. a small sweep
"$B" sweep --quiet --access-methods embedded-http --access-methods-dir "$ROOT/access-methods" --sizes small --threads 1,2 --docs 6 --runs 2 --warmup 0 --results-dir "$W/s1" >/dev/null
if [ -z "$OUT" ]; then
  echo "written by $RELEASE below $W (r1: run, r2: run-interrupted, r3: the shards, s1: sweep)"
  exit 0
fi
# keep FROM TO: the files the tests read (a release that did not write one has none to keep)
keep() {
  mkdir -p "$2"
  for f in result.json manifest.jsonl plan.json methods.json summary.json runs; do
    if [ -e "$1/$f" ]; then cp -R "$1/$f" "$2/"; fi
  done
}
keep "$(ls -d "$W"/r1/run-* | head -1)" "$OUT/run"
keep "$(ls -d "$W"/r2/run-* | head -1)" "$OUT/run-interrupted"
for k in 0 1; do keep "$W/r3/run-old-plan-shard-${k}of2" "$OUT/run-old-plan-shard-${k}of2"; done
keep "$(ls -d "$W"/s1/*/ | head -1)" "$OUT/sweep"
kill $TP; wait $TP 2>/dev/null || true
rm -rf "$W"
echo "written by $RELEASE into $OUT"
