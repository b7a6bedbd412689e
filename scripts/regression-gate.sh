#!/usr/bin/env bash
# Regression gate for any CI system (or a bash loop): measure a sweep, compare it with a
# stored baseline sweep, and exit non-zero when it got significantly slower.
# See docs/regression-gates.md.
#
# Usage: scripts/regression-gate.sh [options] [-- sweep flags...]
#   --baseline DIR      the stored baseline sweep directory (default: ingestbench-baseline).
#                       When it does not exist yet, this sweep is stored there and the gate
#                       passes: the first pipeline run sets the baseline.
#   --results-dir DIR   where the new sweep is written (default: results)
#   --fail-if EXPR      a threshold for `ingestbench compare`, repeatable (default: slower>5%,
#                       i.e. docs/sec significantly lower by more than 5 % in any cell)
#   --update-baseline   after a passing gate, the new sweep becomes the baseline
#   sweep flags         what to measure (default, the embedded target so it runs anywhere:
#                       --access-methods embedded-http --threads 1,4 --sizes small
#                       --docs 300 --runs 5 --warmup 50)
# Environment: INGESTBENCH, the ingestbench binary (default: `ingestbench` on PATH, else
#              target/release/ingestbench).
# Writes the comparison as Markdown to <sweep>/compare.md (for a pull-request comment).
# Exit: 0 no threshold crossed (or the baseline was just stored), 3 a threshold crossed,
#       1 uploads failed during the sweep, 2 usage or setup error (ingestbench's own codes).
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

baseline=ingestbench-baseline
results=results
update=0
fail_if=()
sweep=()
while (($#)); do
  case "$1" in
    --baseline) baseline=${2:?--baseline needs a directory}; shift 2 ;;
    --results-dir) results=${2:?--results-dir needs a directory}; shift 2 ;;
    --fail-if) fail_if+=("${2:?--fail-if needs an expression, e.g. slower>5%}"); shift 2 ;;
    --update-baseline) update=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; sweep=("$@"); break ;;
    *) echo "regression-gate: unknown option $1 (sweep flags go after --)" >&2; usage >&2; exit 2 ;;
  esac
done
((${#fail_if[@]})) || fail_if=('slower>5%')
((${#sweep[@]})) || sweep=(--access-methods embedded-http --threads 1,4 --sizes small
  --docs 300 --runs 5 --warmup 50)

bin=${INGESTBENCH:-}
if [[ -z $bin ]]; then
  if command -v ingestbench >/dev/null; then
    bin=ingestbench
  elif [[ -x target/release/ingestbench ]]; then
    bin=target/release/ingestbench
  else
    echo "regression-gate: no ingestbench binary: set INGESTBENCH, put it on PATH, or cargo build --release" >&2
    exit 2
  fi
fi

gates=()
for e in "${fail_if[@]}"; do gates+=(--fail-if "$e"); done
# A malformed threshold or an unreadable baseline fails before anything is measured (the
# baseline against itself: exit 2 is such an error; 0 or 3 are not).
if [[ -e $baseline ]]; then
  rc=0
  err=$("$bin" compare "$baseline" "$baseline" "${gates[@]}" 2>&1 >/dev/null) || rc=$?
  if ((rc == 2)); then
    printf '%s\n' "$err" >&2
    exit 2
  fi
fi

echo "regression-gate: measuring: ingestbench sweep ${sweep[*]}" >&2
rc=0
out=$("$bin" sweep --quiet --results-dir "$results" "${sweep[@]}") || rc=$?
if ((rc != 0)); then
  echo "regression-gate: the sweep ended with exit $rc; no comparison" >&2
  exit "$rc"
fi
# The sweep prints its report.html path as the last line of stdout.
dir=$(dirname "$(printf '%s\n' "$out" | tail -n 1)")
if [[ ! -f $dir/plan.json ]]; then
  echo "regression-gate: cannot find the sweep directory (got '$dir')" >&2
  exit 2
fi

if [[ ! -e $baseline ]]; then
  mkdir -p "$(dirname "$baseline")"
  cp -R "$dir" "$baseline"
  echo "regression-gate: no baseline yet: stored $dir as $baseline; the gate passes" >&2
  exit 0
fi

"$bin" compare "$baseline" "$dir" --markdown "${gates[@]}" >"$dir/compare.md" 2>/dev/null || true
rc=0
"$bin" compare "$baseline" "$dir" "${gates[@]}" || rc=$?
echo "regression-gate: Markdown for a pull-request comment: $dir/compare.md" >&2
if ((rc != 0)); then
  echo "regression-gate: gate failed (exit $rc) against $baseline" >&2
  exit "$rc"
fi
echo "regression-gate: gate passed against $baseline" >&2
if ((update)); then
  rm -rf "$baseline"
  cp -R "$dir" "$baseline"
  echo "regression-gate: $dir is the new baseline" >&2
fi
