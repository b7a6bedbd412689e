#!/usr/bin/env bash
# The whole test suite: the one command CI runs (.ci/run) and the README shows.
# Installs what the tests need first (scripts/deps.sh), then format, lints and all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
# A fresh CI clone builds once: incremental state would only take disk (1 GB of 2.9 GB once).
[ "${CI:-}" = true ] && export CARGO_INCREMENTAL=0
cargo fmt --all -- --check
# The layers of src/lib.rs's header hold (no import circle, no import up the order), and no
# function passes 120 lines.
python3 scripts/modgraph.py --check --depth 9 --files
python3 scripts/fnlen.py
cargo clippy --locked --all-targets -- -D warnings
# The peak build's features (aws-lc-rs instead of ring, jemalloc) compile and pass clippy too.
cargo clippy --locked --features aws-lc,jemalloc -- -D warnings
# Tests that need the packages deps.sh installed are #[ignore]d for a bare `cargo test`
# (it names them as ignored) and run here.
cargo test --locked -- --include-ignored --skip ::an_estimate_ --skip resource_demands::
# The estimate's accuracy tests compare a sample with a whole import, timed, and the resource
# demands tests compare a measured CPU cost per document with a configured one: they run
# alone, after the rest, so another test's load on the 2 cores does not fall on one side only.
cargo test --locked --test it -- --include-ignored --test-threads=1 ::an_estimate_ resource_demands::
