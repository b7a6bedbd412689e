#!/usr/bin/env bash
# Calibration of `ingestbench estimate`: how often the measured full import lies inside the
# stated 95 % interval, and how far off the prediction is, over repeated trials per case.
# One trial: describe DIR, measure a sample, estimate the whole import (which goes on top of
# what the sample left in the repository), then upload every file of the corpus (run --corpus
# DIR, --warmup 0: the sample left the server warm) and compare predicted with measured.
# The sample is, by --method:
#   pilot  (default) a pilot import: a random 10 % of the corpus's files imported as the
#          import will be (run --corpus DIR --sample N, its tree, one run, warm-up auto)
#   sizes  the size-class sample: sweep --corpus, 3 sizes x 3 runs of 10 % each
#
#   scripts/estimate-accuracy.sh [--method pilot|sizes] [--trials N] [--cases linear,growth,opencmis]
#                                [--threads T] [--sample-pct P] [--warmup W] [--prewarm D]
#                                [--pilot-runs N] [--sample-time T] [--reuse-lab] [--node-cpus C]
#                                [--max-sample-time T] [--max-sample-share P] [--stop-at HH:MM]
#                                [--keep DIR] [DIR]
# --warmup W: the pilot's warm-up (default auto).
# Each trial's pilot draws its slice with --seed <trial>: trials differ in the slice as well as
#   in the server's moment (before 2026-11-29 (23) every trial of a corpus drew one slice, seed 1).
# --sample-time T: a pilot measured by time (run --sample-time T: each run imports the
#   corpus's files in one random order until T is up) instead of --sample-pct's share.
# --max-sample-time T: with --sample-time auto, the pilot's cap (the tool's default: 10m).
# --max-sample-share P: with --sample-time auto, the pilot's cap as a percentage of the corpus
#   (the tool's default: 15).
# --pilot-runs N: the pilot imports its slice N times, each into a folder of its own (default 2, as docs/estimate.md advises; 1 before 2026-11-26 (4));
#   with 2 the estimate sees whether the server held still between them (docs/estimate.md).
# --prewarm D: before the pilot, the freshly started server (real cases) works for D (for
#   example 100s) under the tool's own fixture uploads, as a repository in use has: a JVM
#   just started on 2 cores runs at a quarter of its speed for 50-70 s of load, in plateaus
#   no warm-up rule can tell from the end (docs/estimate.md). Default: none.
# --node-cpus C: each Tomcat node of the Java lab under a CPU quota of C CPUs (scripts/lab.sh):
#   a slower server, so that a pilot of minutes is a small slice of a corpus this disk holds.
# INMEMORY_PREWARM_MAX=S (environment): the opencmis case's prewarm is capped at S seconds
#   (default 30: InMemory keeps every object in its heap and slows with each); 120 warms its
#   JVM past 100 CPU seconds (docs/calibration.md, 2026-11-29 (24)).
# --reuse-lab: the Java lab's cases start one lab per case (prewarmed once) and run every
#   trial of the case on it, as a repository in use: a fresh JVM per trial reached its speed
#   after 50 s of load in one trial and after more than 130 s in another.
#
# --stop-at HH:MM: start no trial at or after this time of day (`date +%H:%M`); the trials
#   already running finish, those not started are said and left out.
# --keep DIR keeps every trial's sweep, estimate and import under DIR/<case>-<trial>/, with
#   `load`: /proc/loadavg at the trial's start (this machine's 2 cores are shared).
#
# A trial is inside when duration_lo_s <= measured <= duration_hi_s (the interval's two sides;
# duration_s ± ci95_s from an estimate without them). Each line gives the sides relative to
# the estimate (pilot.rel_lo, rel_hi) and the load average at the trial's start.
#
# Cases (a fresh target each trial):
#   linear    the embedded target, 2 slots x (8 ms + 20 ms/MiB): the estimate's own model. The
#             modelled cost sets the pace (about 250 docs/s, under half of this 2-core
#             machine): at 2 ms the cases ran at 480-700 docs/s, the client's and the
#             store's real CPU set it, and a pilot on a process just started ran 17 % slower
#             than the import (the USL case's 1.11-1.17 of 2026-11-26)
#   growth    the same, slowing by 0.4 ms per 1,000 requests served (a repository that fills)
#   usl       the same as linear with USL contention (--contention 0.05 --coherency 0.002)
#   opencmis  the real Apache Chemistry OpenCMIS InMemory server (scripts/cmis.sh, a fresh JVM
#             per trial): warm-up, growth and noise are the server's own
#   fileshare     the Java lab's OpenCMIS FileShare on Tomcat node 1 (disk-backed; scripts/lab.sh
#                 --backend java, a fresh lab and store per trial), HTTP direct
#   fileshare-lb  the same lab through Apache httpd + mod_jk balancing over both nodes
# Prints one line per trial and, per case, the coverage and the error distribution.
# Loopback only. Default: 10 trials, cases linear,growth, 4 threads, /usr/share/doc.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=10 cases=linear,growth threads=4 dir=/usr/share/doc keep= from= pct=10 method=pilot warmup=auto prewarm= reuse=0 pruns=2 stime= cpus= stop= maxst= maxsh=
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) trials=$2; shift 2 ;;
    --method) method=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --prewarm) prewarm=$2; shift 2 ;;
    --pilot-runs) pruns=$2; shift 2 ;;
    --sample-time) stime=$2; shift 2 ;;
    --reuse-lab) reuse=1; shift ;;
    --node-cpus) cpus=$2; shift 2 ;;
    --stop-at) stop=$2; shift 2 ;;
    --max-sample-time) maxst=$2; shift 2 ;;
    --max-sample-share) maxsh=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --keep) keep=$(realpath -m "$2"); shift 2 ;;
    --sample-from) from=$2; shift 2 ;;
    --sample-pct) pct=$2; shift 2 ;;
    -*) echo "estimate-accuracy.sh: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    *) dir=$1; shift ;;
  esac
done
[ -d "$dir" ] || { echo "estimate-accuracy.sh: $dir is not a directory" >&2; exit 2; }
if [ -n "$cpus" ]; then
  [[ "$cases" == *fileshare* ]] || { echo "estimate-accuracy.sh: --node-cpus $cpus caps the Java lab's nodes: give a fileshare case (--cases fileshare,fileshare-lb)" >&2; exit 2; }
  awk -v c="$cpus" 'BEGIN { exit !(c + 0 >= 0.01) }' || { echo "estimate-accuracy.sh: --node-cpus $cpus: give a number of CPUs of at least 0.01 (e.g. 0.3)" >&2; exit 2; }
fi
[ -z "$stop" ] || [[ "$stop" =~ ^[0-2][0-9]:[0-5][0-9]$ ]] || { echo "estimate-accuracy.sh: --stop-at $stop: give a time of day as HH:MM (e.g. 20:10)" >&2; exit 2; }
[[ "${INMEMORY_PREWARM_MAX:-30}" =~ ^[1-9][0-9]*$ ]] || { echo "estimate-accuracy.sh: INMEMORY_PREWARM_MAX=$INMEMORY_PREWARM_MAX: give a whole number of seconds, 1 or more (e.g. 120)" >&2; exit 2; }
[ -z "$maxsh" ] || [ "$stime" = auto ] || { echo "estimate-accuracy.sh: --max-sample-share $maxsh caps an auto pilot: give --sample-time auto too" >&2; exit 2; }
[ -z "$maxsh" ] || awk -v p="$maxsh" 'BEGIN { exit !(p ~ /^[0-9]+([.][0-9]+)?$/ && p + 0 > 0 && p + 0 <= 100) }' || { echo "estimate-accuracy.sh: --max-sample-share $maxsh: give a percentage of the corpus above 0 and at most 100 (e.g. 50)" >&2; exit 2; }
[[ "$pruns" =~ ^[1-9][0-9]*$ ]] || { echo "estimate-accuracy.sh: --pilot-runs $pruns: give a whole number of runs, 1 or more (2 is advised)" >&2; exit 2; }
# INGESTBENCH_BIN: a binary built beforehand (a campaign that must not rebuild while the
# source changes under it), as scripts/lab.sh takes it.
if [ -n "${INGESTBENCH_BIN:-}" ]; then
  bin=$(realpath "$INGESTBENCH_BIN")
else
  cargo build --release --locked --quiet
  bin=$(realpath "${CARGO_TARGET_DIR:-target}/release/ingestbench")
fi
work=$(mktemp -d)
tpid=""
cleanup() {
  [ -n "$tpid" ] && kill "$tpid" 2>/dev/null || true
  [ "${cmis_up:-}" = 1 ] && scripts/cmis.sh down >/dev/null 2>&1 || true
  [ "${lab_up:-}" = 1 ] && scripts/lab.sh down --backend java >/dev/null 2>&1 || true
  rm -rf "$work"
}
ROOT_DIR=$(pwd)
# Names a repository refuses (a case clash in /usr/share/doc for Alfresco) are renamed as a
# team would, so pilot and import store every file.
names=(--on-name-clash rename --on-bad-name rename)
# A fresh Java lab: down, its shared store emptied, up (both Tomcat nodes, httpd, HAProxy).
java_lab_fresh() {
  scripts/lab.sh down --backend java >/dev/null 2>&1 || true
  rm -rf "${LAB_JAVA_DIR:-.lab-java}/store"
  scripts/lab.sh up --backend java ${cpus:+--node-cpus "$cpus"} >"$work/lab.log" 2>&1 || { echo "the Java lab did not start: $(tail -n3 "$work/lab.log")" >&2; return 1; }
  lab_up=1
}
trap cleanup EXIT
export INGESTBENCH_PASSWORD=admin
"$bin" corpus "$dir" --output "$work/corpus.json" >/dev/null 2>&1
docs=$(python3 -c "import json;print(json.load(open('$work/corpus.json'))['documents'])")
sample=$(( docs * pct / 100 ))
pick=(--sample "$sample"); [ -n "$stime" ] && pick=(--sample-time "$stime" ${maxst:+--max-sample-time "$maxst"} ${maxsh:+--max-sample-share "$maxsh"})
case $method in
  pilot) echo "corpus $dir: $docs documents; pilot import: ${stime:-$sample documents ($pct %)}, $threads threads" ;;
  sizes) echo "corpus $dir: $docs documents; sample: $sample documents per run ($pct %), 3 runs, 3 sizes, $threads threads" ;;
  *) echo "estimate-accuracy.sh: --method is pilot or sizes" >&2; exit 2 ;;
esac
out="$work/trials.tsv"
: > "$out"

start_target() { # extra flags...
  rm -rf "$work/store" "$work/port"
  "$bin" target --data-dir "$work/store" --port-file "$work/port" \
    --service-time-ms 8 --cost-per-mib-ms 20 --max-concurrent 2 "$@" 2>"$work/target.log" &
  tpid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || { echo "the target did not start: $(cat "$work/target.log")" >&2; exit 1; }
  url="http://127.0.0.1:$(head -n1 "$work/port")"
  proto=(--profile basic)
}

stop_target() { kill "$tpid" 2>/dev/null || true; wait "$tpid" 2>/dev/null || true; tpid=""; }

trial() { # case k
  local case=$1 k=$2
  cut -d' ' -f1-3 /proc/loadavg > "$work/load"
  case $case in
    linear) start_target ;;
    growth) start_target --growth-ms-per-1000 0.4 ;;
    usl) start_target --contention 0.05 --coherency 0.002 ;;
    opencmis)
      scripts/cmis.sh down >/dev/null 2>&1 || true
      scripts/cmis.sh up >/dev/null; cmis_up=1
      url="http://127.0.0.1:${CMIS_PORT:-18090}/cmis/browser"
      proto=(--protocol cmis --profile opencmis) ;;
    fileshare|fileshare-lb)
      local fresh=1
      if [ "$reuse" = 1 ] && [ "${lab_up:-0}" = 1 ]; then fresh=0; else java_lab_fresh; fi
      local m=direct; [ "$case" = fileshare-lb ] && m=http-lb
      url=$(grep '^url' "$ROOT_DIR/access-methods/lab-java/$m.toml" | cut -d'"' -f2)
      # The nodes behind the proxy are read too, as a team names them (docs/access-paths-lab.md):
      # the proxy alone is all a loopback URL finds, and a cold JVM behind it went unseen.
      spids=(); [ "$case" = fileshare-lb ] \
        && for sp in $(grep '^server_pids' "$ROOT_DIR/access-methods/lab-java/$m.toml" | grep -o '[0-9]\+'); do spids+=(--server-pid "$sp"); done
      proto=(--protocol cmis --profile opencmis "${spids[@]}") ;;
  esac
  rm -rf "$work/results" "$work/methods" "$work/prewarm"; mkdir -p "$work/methods"
  if [ -n "$prewarm" ] && [ "${fresh:-1}" = 1 ] && [ "$case" != linear ] && [ "$case" != growth ] && [ "$case" != usl ]; then
    # InMemory keeps every object in its heap and slows with each (O(N)): 30 s at most, unless
    # INMEMORY_PREWARM_MAX (seconds) says otherwise (a JVM warmed past 100 CPU seconds).
    local d=$prewarm; [ "$case" = opencmis ] && d=$(python3 -c "import re;v=float(re.sub('[a-z]+','','$prewarm'));print(str(min(v,${INMEMORY_PREWARM_MAX:-30}))+'s')")
    "$bin" run --quiet --url "$url" "${proto[@]}" --duration "$d" --threads "$threads" --warmup 0 --runs 1 \
      --results-dir "$work/prewarm" >/dev/null 2>"$work/prewarm.log" \
      || { echo "prewarm failed: $(tail -n3 "$work/prewarm.log")" >&2; return 1; }
  fi
  if [ "$method" = pilot ]; then
    "$bin" run --quiet --url "$url" --corpus "$dir" "${pick[@]}" --threads "$threads" "${names[@]}" --warmup "$warmup" \
      --runs "$pruns" "${proto[@]}" --seed "$k" --results-dir "$work/results" >/dev/null 2>"$work/sweep.log" \
      || { echo "pilot failed: $(tail -n3 "$work/sweep.log")" >&2; return 1; }
  else
    printf 'name = "direct"\nurl = "%s"\n' "$url" > "$work/methods/direct.toml"
    "$bin" sweep --quiet --corpus "${from:-$work/corpus.json}" --access-methods direct \
      --access-methods-dir "$work/methods" --threads "$threads" --docs "$sample" --runs 3 \
      "${proto[@]}" --results-dir "$work/results" >/dev/null 2>"$work/sweep.log" \
      || { echo "sweep failed: $(tail -n3 "$work/sweep.log")" >&2; return 1; }
  fi
  local sweep; sweep=$(ls -d "$work"/results/*-*)
  # The estimate's default: the import starts with what the sample left (it says how much).
  "$bin" estimate --corpus "$work/corpus.json" "$sweep" --json 2>"$work/estimate.txt" > "$work/estimate.json"
  # The import as it would run: no warm-up of its own (the sample left the server warm).
  "$bin" run --quiet --warmup 0 --url "$url" --corpus "$dir" --sample "$docs" --threads "$threads" "${names[@]}" \
    --runs 1 "${proto[@]}" --results-dir "$work/results" --json > "$work/run.json" 2>"$work/run.log" \
    || { echo "import failed: $(tail -n3 "$work/run.log")" >&2; return 1; }
  # The pilot again, after the import (kept with --keep, not scored): a pilot that ran slower
  # than this one met a server still warming; one as slow, a slice that is not the import.
  # Not after an auto pilot: it would go on for minutes more.
  if [ "$method" = pilot ] && [ -n "$keep" ] && [ "$stime" != auto ]; then
    rm -rf "$work/after"
    "$bin" run --quiet --warmup 0 --url "$url" --corpus "$dir" "${pick[@]}" --threads "$threads" "${names[@]}" \
      --runs 1 "${proto[@]}" --results-dir "$work/after" >/dev/null 2>"$work/after.log" || true
  fi
  python3 - "$work/estimate.json" "$work/run.json" "$threads" "$case" "$k" "$(cut -d' ' -f1 "$work/load")" "$sweep" <<'PY' | tee -a "$out"
import glob, json, sys
est, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
# The pilot: its seconds (all its runs) and its documents as a share of the import's.
pilot = [json.load(open(f)) for f in glob.glob(sys.argv[7] + "/result.json")]
pilot_s = sum(r.get("duration_s", 0) for p in pilot for r in p.get("runs", []))
pilot_docs = sum(p.get("docs_ok", 0) for p in pilot)
t, case, k, load = int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
existing = est.get("existing_docs", 0)
o = next(o for o in est["options"] if o["threads"] == t)
m = run["mean_duration_s"]
p, h = o["duration_s"], o["ci95_s"]
g = est.get("pilot") or est.get("growth") or {}
g = {"model": g.get("growth_model", g.get("model", "-")), "per_1000_docs": g.get("growth_per_1000", g.get("per_1000_docs", 0))}
lo = o.get("duration_lo_s"); lo = max(p - h, 0.0) if lo is None else lo
hi = o.get("duration_hi_s"); hi = p + h if hi is None else hi
fit = est.get("pilot") or {}
rel_lo, rel_hi = fit.get("rel_lo") or (p - lo) / p, fit.get("rel_hi") or (hi - p) / p
inside = int(lo <= m <= hi)
print(f"{case}\t{k}\t{p:.2f}\t{h:.2f}\t{m:.2f}\t{p/m:.3f}\t{inside}\t{g.get('model','-')}\t{g.get('per_1000_docs',0):.4f}\t{existing}"
      f"\t{lo:.2f}\t{hi:.2f}\t{rel_lo:.3f}\t{rel_hi:.3f}\t{load}\t{pilot_s:.1f}\t{pilot_docs / max(run['docs_ok'], 1):.3f}")
PY
  if [ -n "$keep" ]; then
    mkdir -p "$keep/$case-$k"; cp -r "$work/results" "$work/estimate.json" "$work/estimate.txt" "$work/run.json" "$work/corpus.json" "$work/load" "$keep/$case-$k/"
    [ -d "$work/after" ] && cp -r "$work/after" "$keep/$case-$k/"
  fi
  case $case in
    opencmis) scripts/cmis.sh down >/dev/null 2>&1 || true; cmis_up=0 ;;
    fileshare*) [ "$reuse" = 1 ] || { scripts/lab.sh down --backend java >/dev/null 2>&1 || true; lab_up=0; } ;;
    *) stop_target ;;
  esac
}

echo -e "case\ttrial\tpredicted_s\tci95_s\tmeasured_s\tratio\tinside\tgrowth\tper_1000\texisting\tlo_s\thi_s\trel_lo\trel_hi\tload1\tpilot_s\tpilot_share"
IFS=, read -r -a C <<<"$cases"
for c in "${C[@]}"; do
  for k in $(seq 1 "$trials"); do
    if [ -n "$stop" ] && [[ ! "$(date +%H:%M)" < "$stop" ]]; then
      echo "$c: trial $k not started: it is $(date +%H:%M), --stop-at $stop" >&2; break
    fi
    trial "$c" "$k" || echo -e "$c\t$k\tfailed" >> "$out"
  done
  if [ "${lab_up:-0}" = 1 ]; then scripts/lab.sh down --backend java >/dev/null 2>&1 || true; lab_up=0; fi
done
python3 - "$out" <<'PY'
import sys, statistics
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
for case in dict.fromkeys(r[0] for r in rows):
    ok = [r for r in rows if r[0] == case and len(r) > 6]
    failed = sum(1 for r in rows if r[0] == case and len(r) <= 6)
    if not ok:
        print(f"{case}: no trial finished ({failed} failed)"); continue
    err = sorted(abs(float(r[5]) - 1) for r in ok)
    inside = sum(int(r[6]) for r in ok)
    ratios = sorted(float(r[5]) for r in ok)
    widths = [float(r[3]) / float(r[2]) for r in ok if float(r[2]) > 0]
    his = [float(r[13]) for r in ok if len(r) > 13]
    los = [float(r[12]) for r in ok if len(r) > 12]
    q = statistics.quantiles(err, n=4) if len(err) > 1 else [err[0]] * 3
    print(f"{case}: {inside}/{len(ok)} inside the 95 % interval; |predicted/measured - 1| "
          f"median {statistics.median(err)*100:.1f} % (quartiles {q[0]*100:.1f}-{q[2]*100:.1f} %), max {err[-1]*100:.1f} %; "
          f"ratios {ratios[0]:.3f}..{ratios[-1]:.3f}; median half-width {statistics.median(widths)*100:.0f} %"
          + (f", upper side +{statistics.median(his)*100:.0f} %, lower -{statistics.median(los)*100:.0f} %" if his else "")
          + (f"; pilot median {statistics.median(float(r[15]) for r in ok):.0f} s, "
             f"{statistics.median(float(r[16]) for r in ok)*100:.1f} % of the import's documents"
             if all(len(r) > 16 for r in ok) else "")
          + (f"; {failed} trials failed" if failed else ""))
PY
