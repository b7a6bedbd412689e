#!/usr/bin/env python3
"""Re-scores kept calibration trials (scripts/estimate-accuracy.sh --keep DIR) with the
estimate as it is now built: per trial, `ingestbench estimate` on the kept sample against the
kept import's measured duration. A change to the estimate is judged on the same trials.

    scripts/estimate-rescore.py [--bin PATH] [--tsv FILE] KEEP_DIR...

A trial is inside when duration_lo_s <= measured <= duration_hi_s (the interval's two sides,
since 2026-11-27); an estimate without them (an older binary) is scored on
duration_s ± ci95_s. Prints one line per trial and, per case (the keep directory's name and
the trial directory's name before its number): trials, inside (count and %), the median
|predicted/measured - 1|, the median half-width (ci95_s / duration_s, the mean of the two
sides), the median upper and lower side (pilot.rel_hi, rel_lo), and the trials off by more
than 25 % (how many were flagged beforehand). --tsv FILE writes one row per trial: case,
corpus, files, pilot length (s) and its share of the import, predicted, lo, hi, measured, ratio, inside, growth model,
rel_lo, rel_hi, the load average at the trial's start (the trial's `load` file, written by
estimate-accuracy.sh since 2026-11-27; `-` where absent), one_sided and the flags."""
import glob, json, os, re, statistics, subprocess, sys

args = sys.argv[1:]
binary, tsv = "target/release/ingestbench", None
while args[:1] and args[0].startswith("--"):
    if args[0] == "--bin":
        binary, args = args[1], args[2:]
    elif args[0] == "--tsv":
        tsv, args = args[1], args[2:]
    else:
        sys.exit(f"estimate-rescore.py: unknown option {args[0]} (see its docstring)")


def bounds(o):
    """The 95 % interval (lo, hi) in seconds: its two sides, else duration_s ± ci95_s."""
    p, h = o["duration_s"], o["ci95_s"]
    lo, hi = o.get("duration_lo_s"), o.get("duration_hi_s")
    return (max(p - h, 0.0) if lo is None else lo, p + h if hi is None else hi)


rows = []
for keep in args:
    for trial in sorted(glob.glob(os.path.join(keep, "*-*")),
                        key=lambda t: (re.sub(r"-\d+$", "", t), int(re.search(r"(\d+)$", t).group(1))
                                       if re.search(r"-\d+$", t) else 0)):
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
        lo, hi = bounds(o)
        fit = est.get("pilot") or {}
        rel_lo = fit.get("rel_lo") or (p - lo) / p
        rel_hi = fit.get("rel_hi") or (hi - p) / p
        case = os.path.basename(os.path.normpath(keep)) + "/" + re.sub(r"-\d+$", "", os.path.basename(trial))
        flags = o.get("flags", [])
        c = json.load(open(corpus))
        load = "-"
        if os.path.isfile(os.path.join(trial, "load")):
            load = open(os.path.join(trial, "load")).read().split()[0]
        num = re.search(r"(\d+)$", trial).group(1) if re.search(r"-\d+$", trial) else "0"
        r = dict(case=case, trial=num, corpus=c.get("root", c.get("source", "-")),
                 files=c.get("documents", 0), pilot_s=fit.get("duration_s", 0.0), p=p, h=h, lo=lo, hi=hi,
                 m=m, inside=lo <= m <= hi, model=fit.get("growth_model", "-"), rel_lo=rel_lo,
                 rel_hi=rel_hi, load=load, one_sided="; ".join(fit.get("one_sided", [])),
                 flags="; ".join(flags))
        rows.append(r)
        print(f"{case}-{num}\t{p:.2f}\t[{lo:.2f}, {hi:.2f}]\t{m:.2f}\t{p/m:.3f}\t"
              f"{int(r['inside'])}\t{r['model']}\t-{rel_lo*100:.0f}/+{rel_hi*100:.0f} %\t"
              f"pilot {r['pilot_s']:.1f} s ({r['pilot_s']/m*100:.0f} %)\tload {load}\t{'flagged' if flags else ''}")


def summary(label, rs):
    med = lambda xs: statistics.median(xs) * 100
    inside = sum(r["inside"] for r in rs)
    err = [abs(r["p"] / r["m"] - 1) for r in rs]
    off = [r for r in rs if abs(r["p"] / r["m"] - 1) > 0.25]
    print(f"{label}: {len(rs)} trials, {inside} inside ({inside/len(rs)*100:.0f} %); median |error| "
          f"{med(err):.1f} %, max {max(err)*100:.1f} %; median half-width {med([r['h']/r['p'] for r in rs]):.0f} %; "
          f"median upper side +{med([r['rel_hi'] for r in rs]):.0f} %, lower side -{med([r['rel_lo'] for r in rs]):.0f} %; "
          f"off by > 25 %: {len(off)} ({sum(bool(r['flags']) for r in off)} flagged beforehand)")


if not rows:
    sys.exit("estimate-rescore.py: no kept trial found")
real = [r for r in rows if not any(e in r["case"] for e in ("/linear", "/growth", "/usl"))]
if real and len(real) < len(rows):
    summary("all real-server trials", real)
summary("all trials", rows)
for case in dict.fromkeys(r["case"] for r in rows):
    summary(case, [r for r in rows if r["case"] == case])
if tsv:
    with open(tsv, "w") as f:
        f.write("case\tcorpus\tfiles\tpilot_s\tpilot_share\tpredicted_s\tlo_s\thi_s\tmeasured_s\tratio\tinside\t"
                "growth_model\trel_lo\trel_hi\tload1\tone_sided\tflags\n")
        for r in rows:
            f.write(f"{r['case']}-{r['trial']}\t{r['corpus']}\t{r['files']}\t"
                    f"{r['pilot_s']:.1f}\t{r['pilot_s']/r['m']:.3f}\t{r['p']:.2f}\t{r['lo']:.2f}\t{r['hi']:.2f}\t{r['m']:.2f}\t"
                    f"{r['p']/r['m']:.3f}\t{int(r['inside'])}\t{r['model']}\t{r['rel_lo']:.3f}\t"
                    f"{r['rel_hi']:.3f}\t{r['load']}\t{r['one_sided'] or '-'}\t{r['flags'] or '-'}\n")
