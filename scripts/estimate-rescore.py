#!/usr/bin/env python3
"""Re-scores kept calibration trials (scripts/estimate-accuracy.sh --keep DIR) with the
estimate as it is now built: per trial, `ingestbench estimate` on the kept sample against the
kept import's measured duration. A change to the estimate is judged on the same trials.

    scripts/estimate-rescore.py [--bin PATH] KEEP_DIR...

Prints one line per trial and, per case (the trial directory's name before its number), the
coverage, the error and the half-width, as estimate-accuracy.sh does."""
import glob, json, os, re, statistics, subprocess, sys

args = sys.argv[1:]
binary = "target/release/ingestbench"
if args[:1] == ["--bin"]:
    binary, args = args[1], args[2:]
rows = []
for keep in args:
    for trial in sorted(glob.glob(os.path.join(keep, "*-*"))):
        if not os.path.isfile(os.path.join(trial, "run.json")):
            continue
        corpus = os.path.join(trial, "corpus.json")
        run = json.load(open(os.path.join(trial, "run.json")))
        dirs = sorted(glob.glob(os.path.join(trial, "results", "*-*")))
        sample = [d for d in dirs if not os.path.basename(d).endswith(run["id"])]
        if not sample or not os.path.isfile(corpus):
            continue
        out = subprocess.run([binary, "estimate", "--corpus", corpus, *sample, "--json",
                              "--output", "/dev/null"], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{trial}: estimate failed: {out.stderr.strip()[-200:]}")
            continue
        est = json.loads(out.stdout)
        o = est["options"][0]
        p, h, m = o["duration_s"], o["ci95_s"], run["mean_duration_s"]
        fit = est.get("pilot") or {}
        case = os.path.basename(os.path.normpath(keep)) + "/" + re.sub(r"-\d+$", "", os.path.basename(trial))
        flags = "; ".join(o.get("flags", []))
        rows.append((case, p, h, m, bool(flags)))
        print(f"{os.path.basename(trial)}\t{p:.2f}\t±{h:.2f}\t{m:.2f}\t{p/m:.3f}\t{int(abs(p-m)<=h)}\t"
              f"{fit.get('growth_model','-')}\t{'flagged' if flags else ''}")
def summary(label, rs):
    err = [abs(p / m - 1) for _, p, h, m, _ in rs]
    inside = sum(abs(p - m) <= h for _, p, h, m, _ in rs)
    off = [r for r in rs if abs(r[1] / r[3] - 1) > 0.25]
    print(f"{label}: {inside}/{len(rs)} inside; median |error| {statistics.median(err)*100:.1f} %, "
          f"max {max(err)*100:.1f} %; median half-width {statistics.median([h/p for _, p, h, m, _ in rs])*100:.0f} %; "
          f"off by > 25 %: {len(off)} ({sum(r[4] for r in off)} flagged beforehand)")
real = [r for r in rows if not any(e in r[0] for e in ("/linear", "/growth", "/usl"))]
if real:
    summary("all real-server trials", real)
for case in dict.fromkeys(r[0] for r in rows):
    summary(case, [r for r in rows if r[0] == case])
