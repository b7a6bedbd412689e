#!/usr/bin/env bash
# Accuracy against a target whose capacity is known: the embedded target with at most
# SLOTS requests at once and SERVICE_MS per request can take SLOTS * 1000 / SERVICE_MS
# docs/sec. ingestbench, with more workers than slots, must measure that within TOLERANCE
# percent. Then, with as many workers as slots (no queueing), p50 latency must be within
# 1 ms of the service time. Prints measured/expected; exits 1 when either is outside.
#   scripts/accuracy.sh            # defaults: 4 slots x 10 ms = 400/s, 16 workers, ±2 %
set -euo pipefail
cd "$(dirname "$0")/.."
SLOTS=${SLOTS:-4} SERVICE_MS=${SERVICE_MS:-10} THREADS=${THREADS:-16} DOCS=${DOCS:-2000} TOLERANCE=${TOLERANCE:-2}
cargo build --release --locked -q
BIN=target/release/ingestbench
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
$BIN target --data-dir "$work/store" --port-file "$work/port" --max-concurrent "$SLOTS" --service-time-ms "$SERVICE_MS" 2>"$work/target.log" &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(head -1 "$work/port")"
export INGESTBENCH_PASSWORD=admin
$BIN run --url "$url" --threads "$THREADS" --docs "$DOCS" --runs 3 --small-size 2KiB --quiet --json --results-dir "$work/results" >"$work/queued.json"
$BIN run --url "$url" --threads "$SLOTS" --docs "$((DOCS / 4))" --runs 3 --small-size 2KiB --quiet --json --results-dir "$work/results" >"$work/idle.json"
python3 - "$work/queued.json" "$work/idle.json" "$SLOTS" "$SERVICE_MS" "$TOLERANCE" <<'PY'
import json, sys
q, i = (json.load(open(p)) for p in sys.argv[1:3])
slots, service_ms, tol = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
expected = slots * 1000.0 / service_ms
ratio = q["docs_per_sec"] / expected
runs = ", ".join("%.1f" % r["docs_per_sec"] for r in q["runs"])
print(f"capacity {slots:.0f} x {service_ms:g} ms: expected {expected:.1f} docs/s, measured {q['docs_per_sec']:.1f} "
      f"(runs {runs}), ratio {ratio:.4f}")
p50 = i["latency_ms"]["p50"]
print(f"no queueing ({i['plan']['threads']} workers): p50 {p50:.2f} ms vs service time {service_ms:g} ms "
      f"(difference {p50 - service_ms:+.2f} ms)")
ok = abs(ratio - 1) * 100 <= tol
lat_ok = abs(p50 - service_ms) <= 1.0
print("throughput", "within" if ok else "OUTSIDE", f"±{tol:g} %;", "p50", "within" if lat_ok else "OUTSIDE", "1 ms of the service time")
sys.exit(0 if ok and lat_ok else 1)
PY
