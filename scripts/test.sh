#!/usr/bin/env bash
# The whole test suite: the one command CI runs (.ci/run) and the README shows.
# Installs what the tests need first (scripts/deps.sh), then format, lints and all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cargo fmt --all -- --check
cargo clippy --locked --all-targets -- -D warnings
# Tests that need the packages deps.sh installed are #[ignore]d for a bare `cargo test`
# (it names them as ignored) and run here.
cargo test --locked -- --include-ignored
