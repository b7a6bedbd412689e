#!/usr/bin/env bash
# Side-by-side: ingestbench and peer load tools uploading to the same nginx sink on loopback,
# at the same concurrency and document count. Writes results/peers.json and results/peers.md.
#   scripts/bench-peers.sh            # everything (installs missing peers where it can)
#   QUICK=1 scripts/bench-peers.sh    # smaller counts
#   PEERS=oha,wrk scripts/bench-peers.sh  # only these peers (default: oha,wrk,hey,k6,locust)
#   REPEAT=5: interleaved rounds per comparison on the direct sink (3 on the proxied one)
#   BASELINE=/path/to/old/ingestbench: an older build in the same rounds (before/after a change)
#   ONLY=direct,HTTPS: only the scenarios whose names contain one of these words
# Peers: oha (cargo install oha --locked), wrk (Debian), hey and k6 (Go module proxy), Locust
# (PyPI, in a venv), and the bash+curl loop; a peer that cannot be installed is named as
# skipped. See bench_peers.py.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/bench_peers.py "$@"
