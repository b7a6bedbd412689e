#!/usr/bin/env bash
# The whole test suite: the one command CI runs (.ci/run) and the README shows.
# Installs what the tests need first (scripts/deps.sh), then format, lints and all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cargo fmt --all -- --check
cargo clippy --locked --all-targets -- -D warnings
cargo test --locked
