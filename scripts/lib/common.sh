# Shared by the campaign scripts (whatif-accuracy.sh, known-causes.sh, plan-check.sh): sourced,
# not run. Each sets SCRIPT to its own name first, for its messages.

# A usage error (exit 2) naming the script, the option and where the options are described.
usage_error() {
  echo "$SCRIPT: $* (see the header of scripts/$SCRIPT)" >&2
  exit 2
}

# `takes_value "$@"` at the top of an option loop whose options all take a value: an option
# given last without one is a usage error naming it, not bash's "unbound variable".
takes_value() {
  [ $# -ge 2 ] || usage_error "$1 needs a value"
}

# The binary the campaign runs: $INGESTBENCH_BIN (a build kept apart, so a rebuild during
# the campaign does not change it), else this checkout's release build, built first.
ingestbench_bin() {
  if [ -n "${INGESTBENCH_BIN:-}" ]; then
    realpath "$INGESTBENCH_BIN"
  else
    cargo build --release --locked --quiet
    realpath "${CARGO_TARGET_DIR:-target}/release/ingestbench"
  fi
}
