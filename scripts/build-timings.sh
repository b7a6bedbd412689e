#!/usr/bin/env bash
# How long the quick start's release build takes on a cold machine, and where the time goes.
# Clones HEAD of this repository into a temp dir and builds it there with an EMPTY cargo home
# and target dir (crate downloads included), as a new user's first `cargo run --release` does,
# with `--timings`; prints the wall times and the slowest crates, and keeps cargo's HTML
# report. Weigh every new dependency with it (docs/development.md#build-time).
#   scripts/build-timings.sh              # build only
#   QUICKSTART=1 scripts/build-timings.sh # then the README's quick start, timed (clone to report)
#   KEEP=1 ...                            # keep the temp dir (its path is printed)
# Output: results/build-timings-<date>.txt and results/cargo-timing-<date>.html.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
stamp=$(date -u +%Y%m%dT%H%M%SZ)
work=$(mktemp -d /tmp/ib-cold.XXXXXX)
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
mkdir -p results
out=results/build-timings-$stamp.txt

t0=$(date +%s.%N)
git clone -q "$repo" "$work/clone"
export CARGO_HOME=$work/cargo-home CARGO_TARGET_DIR=$work/clone/target
mkdir -p "$CARGO_HOME"
cd "$work/clone"
t1=$(date +%s.%N)
cargo fetch --locked -q
t2=$(date +%s.%N)
cargo build --release --locked --timings 2> "$work/build.log" || { tail -n 30 "$work/build.log"; exit 1; }
t3=$(date +%s.%N)
sweep=""
if [ "${QUICKSTART:-}" = 1 ]; then
  # The README's quick start line, as written there.
  cmd=$(grep -m1 '^cargo run --release -- sweep' "$repo/README.md")
  bash -c "$cmd" > "$work/quickstart.log" 2>&1 || { tail -n 30 "$work/quickstart.log"; exit 1; }
  t4=$(date +%s.%N)
  answered=$(grep -c 'slower\|faster\|no significant difference' "$work/quickstart.log" || true)
  sweep=$(printf 'quick start sweep: %.0f s (clone to report %.0f s)\n%s\n' \
    "$(echo "$t4 - $t3" | bc)" "$(echo "$t4 - $t0" | bc)" \
    "$(grep -A4 '^Answers' "$work/quickstart.log" | head -n 5)")
fi
cp target/cargo-timings/cargo-timing.html "$repo/results/cargo-timing-$stamp.html"
{
  echo "cold build of $(git -C "$repo" rev-parse --short HEAD) on $(nproc) cores, $(date -u)"
  printf 'clone %.0f s, crate downloads %.0f s, release build %.0f s, clone to binary %.0f s\n' \
    "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$(echo "$t3 - $t2" | bc)" "$(echo "$t3 - $t0" | bc)"
  echo "crates built: $(grep -c '^ *Compiling' "$work/build.log")"
  echo "slowest crates (seconds of one core, from cargo's timings):"
  python3 - "$repo/results/cargo-timing-$stamp.html" <<'PY'
import json, re, sys
html = open(sys.argv[1]).read()
m = re.search(r'const UNIT_DATA = (\[.*?\]);\n', html, re.S)
units = json.loads(m.group(1)) if m else []
agg = {}
for u in units:
    agg[u["name"]] = agg.get(u["name"], 0) + u["duration"]
for name, d in sorted(agg.items(), key=lambda kv: -kv[1])[:15]:
    print(f"  {d:7.1f}  {name}")
PY
  [ -n "$sweep" ] && echo "$sweep"
} | tee "$out"
[ "${KEEP:-}" = 1 ] && echo "kept: $work" || true
