#!/usr/bin/env python3
"""The guides' accuracy tables, from the trials kept in docs/data/ and the binary as now built:
docs/estimate.md's (each kept pilot estimated again, against its import) and docs/dashboard.md's
(each kept import's progress replayed through the live ETA, from the import alone and with its
pilot's estimate as the prior, `--estimate`). A change to either model is judged on the same
trials by running this again.

    scripts/accuracy-tables.py [--bin PATH] [--replay PATH] [--tsv DIR]

--bin defaults to target/release/ingestbench, --replay to target/release/examples/eta_replay
(`cargo build --release --example eta_replay`). --tsv DIR writes one row per trial
(estimate-today.tsv) and per import and share (eta-today.tsv, eta-today-prior.tsv).
The rows' groups are named below; a trial is held out when it ran after every rule that
scores it was written (HELD_OUT)."""
import glob, json, math, os, statistics, subprocess, sys, tarfile, tempfile

args = sys.argv[1:]
opts = {"--bin": "target/release/ingestbench", "--replay": "target/release/examples/eta_replay", "--tsv": None}
while args:
    if args[0] not in opts or len(args) < 2:
        sys.exit(f"accuracy-tables.py: unknown option or missing value: {args[0]} (see its docstring)")
    opts[args[0]], args = args[1], args[2:]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "data")

# Kept pilots (each trial: corpus.json, pilot/, run.json): group by the trial directory's name.
ESTIMATE = [
    ("FileShare direct under a 0.25-CPU quota: four corpora (a JavaScript tree, 20,417 files; "
     "`/usr/share`, 48,106; `/usr/local`, 15,048; a developer's home, 20,827), the default pilot (15 %)",
     ("fsq025-npm-", "fsq025-share-", "fs-local-", "fs-home-")),
    ("FileShare direct unthrottled, `/usr/share`, the default pilot", ("fs-share-",)),
    ("OpenCMIS InMemory (its cost grows with every object held): a cargo registry (13,477 files) "
     "and `/usr/local`, the default pilot", ("cargo-opencmis-", "im-local-")),
    ("the embedded target slowing as it fills (`--growth-ms-per-1000 0.4`), the cargo registry",
     ("cargo-growth-",)),
    ("FileShare under a 0.25-CPU quota, a pilot of half the corpus (`--max-sample-share 50`): "
     "the JavaScript tree and `/usr/share`", ("sh50-",)),
]
# Trials that ran after every rule scoring them was written (sessions 29 to 31).
HELD_OUT = ("estimate-inmem-2026-12-07", "estimate-local-2026-12-07", "estimate-local-2026-12-07b",
            "estimate-share-2026-12-07c", "estimate-home-2026-12-07d")

# Kept imports for the live ETA: a pattern under docs/data/ (or inside an estimate tarball).
ETA = [
    ("the embedded target slowing as it fills (0.4 ms per 1,000 requests)",
     ("eta-imports-2026-11-28/growth-*", "eta-imports-2026-11-28/s19-cal-growth-*",
      "eta-imports-2026-11-29e/growth-*", "eta-imports-2026-11-29f/growth-*")),
    ("FileShare direct under a 0.1–0.25-CPU quota, warm (7 corpora of 15,048–177,652 files)",
     ("eta-imports-2026-11-28/fsq*", "eta-imports-2026-11-28/s19-cal-fs-*", "eta-imports-2026-11-29/fsq015-*",
      "eta-imports-2026-11-29b/big020-*", "eta-imports-2026-11-29e/fsq0*", "eta-imports-2026-11-29f/fsq025-*",
      "eta-imports-2026-12-07b/local-*", "estimate-local-2026-12-07b/fs-local-*",
      "estimate-home-2026-12-07d/fs-home-*")),
    ("FileShare direct unthrottled, `/usr/share`", ("estimate-share-2026-12-07c/fs-share-*",)),
    ("two FileShare nodes behind httpd + mod_jk, 0.15 CPU each", ("eta-imports-2026-11-29c/lb015-*",
                                                                   "eta-imports-2026-11-29d/lb015-*")),
    ("FileShare at 0.15 CPU on a JVM just started (still warming through the import)",
     ("eta-imports-2026-11-29/cold015-*",)),
    ("OpenCMIS InMemory (its heap fills: the pace steps down late)",
     ("eta-imports-2026-11-28/inmem-*", "eta-imports-2026-11-29d/inmem-*", "eta-imports-2026-12-07c/inmem-*")),
    ("FileShare under a 0.25-CPU quota, after a pilot of half the corpus", ("eta-imports-2026-12-07/sh50-*",)),
]
SHARES = ("0.10", "0.25", "0.50")


def unpack(tmp):
    """Every docs/data/*-runs.tar.gz under tmp/<name>/, so kept trials read as directories."""
    for tgz in sorted(glob.glob(os.path.join(DATA, "*-runs.tar.gz"))):
        name = os.path.basename(tgz)[: -len("-runs.tar.gz")]
        with tarfile.open(tgz) as t:
            t.extractall(os.path.join(tmp, name), filter="data")


def trials(tmp):
    """(tarball name, trial dir) for each kept trial, once (a tarball may nest its own name)."""
    seen, out = set(), []
    for run in sorted(glob.glob(os.path.join(tmp, "**", "run.json"), recursive=True)):
        d = os.path.dirname(run)
        if not os.path.isdir(os.path.join(d, "pilot")):
            continue
        key = (os.path.relpath(d, tmp).split(os.sep)[0], os.path.basename(d))
        if key not in seen:
            seen.add(key)
            out.append((key[0], d))
    return out


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def estimate_rows(tmp):
    rows = []
    for tar, d in trials(tmp):
        group = next((i for i, (_, pre) in enumerate(ESTIMATE) if os.path.basename(d).startswith(pre)), None)
        if group is None:
            print(f"{d}: in no group of ESTIMATE: skipped", file=sys.stderr)
            continue
        out = subprocess.run([opts["--bin"], "estimate", "--corpus", os.path.join(d, "corpus.json"),
                              os.path.join(d, "pilot"), "--json", "--output", "/dev/null"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{d}: estimate failed: {out.stderr.strip()[-300:]}")
        o = json.loads(out.stdout)["options"][0]
        fit = json.loads(out.stdout).get("pilot") or {}
        m = json.load(open(os.path.join(d, "run.json")))["mean_duration_s"]
        p, lo, hi = o["duration_s"], o["duration_lo_s"], o["duration_hi_s"]
        rows.append(dict(trial=f"{tar}/{os.path.basename(d)}", group=group, held=tar in HELD_OUT,
                         pilot_s=fit.get("duration_s", 0.0), p=p, lo=lo, hi=hi, m=m, ratio=p / m,
                         inside=lo <= m <= hi))
    return rows


def estimate_line(name, rs):
    err = [abs(r["ratio"] - 1) for r in rs]
    hw = [(r["hi"] - r["lo"]) / 2 / r["p"] for r in rs]
    lo = [(r["p"] - r["lo"]) / r["p"] for r in rs]
    hi = [(r["hi"] - r["p"]) / r["p"] for r in rs]
    ratios = [r["ratio"] for r in rs]
    pil = [r["pilot_s"] for r in rs]
    return (f"| {name} | {len(rs)} | {sum(r['held'] for r in rs)} | {sum(r['inside'] for r in rs)} | "
            f"{med(err) * 100:.1f} % | ±{med(hw) * 100:.0f} % (−{med(lo) * 100:.0f} / +{med(hi) * 100:.0f} %) | "
            f"{min(ratios):.2f}–{max(ratios):.2f}, median {med(ratios):.2f} | {min(pil):.0f}–{max(pil):.0f} s |")


def one_width(rs, q):
    """The single symmetric width (on the ratio's log) that would hold a share q of these trials."""
    logs = sorted(abs(math.log(r["ratio"])) for r in rs)
    return math.exp(logs[min(len(logs) - 1, math.ceil(q * len(logs)) - 1)]) - 1


def replay(tmp, pats, prior):
    files = sorted({f for p in pats for base in (DATA, tmp)
                    for f in glob.glob(os.path.join(base, "**", p, "run.json"), recursive=True)
                    if base == tmp or os.sep + "eta-imports-" in f})
    out = subprocess.run([opts["--replay"], *(["--prior"] if prior else []), *files],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"eta_replay failed: {out.stderr.strip()[-300:]}")
    return len(files), [line.split("\t") for line in out.stdout.splitlines()[1:] if line.count("\t") == 8]


def eta_cells(rows):
    cells = []
    for share in SHARES:
        rs = [r for r in rows if r[1] == share]
        inside = sum(int(r[7]) for r in rs)
        hw = med([float(r[8]) for r in rs]) * 100
        err = med([abs(float(r[3]) / float(r[6]) - 1) for r in rs if float(r[6]) > 0]) * 100
        cells.append(f"{inside}/{len(rs)} · ±{hw:.0f} % · {err:.0f} %")
    return " | ".join(cells)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        unpack(tmp)
        rows = estimate_rows(tmp)
        print("docs/estimate.md, How accurate it is:\n")
        print("| server, corpus, pilot | trials | held out | inside | median error | median half-width (sides) "
              "| the point / the import | pilot (its runs) |\n|---|---:|---:|---:|---:|---|---|---|")
        for i, (name, _) in enumerate(ESTIMATE):
            print(estimate_line(name, [r for r in rows if r["group"] == i]))
        default = [r for r in rows if r["group"] != len(ESTIMATE) - 1]
        print(estimate_line("**the default pilot**", default))
        print(estimate_line("**all**", rows))
        for name, rs in (("the default pilot", default), ("half the corpus", [r for r in rows if r not in default])):
            print(f"\none width fitted afterwards to {name}'s own errors: ±{one_width(rs, 0.9) * 100:.0f} % "
                  f"holds 90 %, ±{one_width(rs, 0.95) * 100:.0f} % holds 95 %")
        eta = {False: [], True: []}
        print("\ndocs/dashboard.md, Accuracy today (inside · median half-width · median error):\n")
        print("| server | imports | at 10 % | at 25 % | at 50 % |\n|---|---:|---|---|---|")
        for name, pats in ETA:
            n, plain = replay(tmp, pats, False)
            _, prior = replay(tmp, pats, True)
            eta[False] += [[name, *r] for r in plain]
            eta[True] += [[name, *r] for r in prior]
            print(f"| {name} | {n} | {eta_cells(plain)} |")
        issue = [n for n, _ in ETA if "InMemory" not in n]
        for label, prior in (("", False), (", with `--estimate`", True)):
            rs = eta[prior]
            print(f"| **the issue's servers** (all but InMemory){label} | {len({r[1] for r in rs if r[0] in issue})} | "
                  f"{eta_cells([r[1:] for r in rs if r[0] in issue])} |")
            print(f"| **all**{label} | {len({r[1] for r in rs})} | {eta_cells([r[1:] for r in rs])} |")
        for label, prior in (("from the import alone", False), ("with `--estimate`", True)):
            at = [dict(ratio=float(r[4]) / float(r[7])) for r in eta[prior]
                  if r[0] in issue and r[2] == "0.25" and float(r[7]) > 0]
            print(f"\none width fitted afterwards to the issue's servers' ETA errors at 25 % ({label}): "
                  f"±{one_width(at, 0.9) * 100:.0f} % holds 90 %")
        if opts["--tsv"]:
            os.makedirs(opts["--tsv"], exist_ok=True)
            with open(os.path.join(opts["--tsv"], "estimate-today.tsv"), "w") as f:
                f.write("trial\tgroup\theld_out\tpilot_s\tpredicted_s\tlo_s\thi_s\tmeasured_s\tratio\tinside\n")
                for r in rows:
                    f.write(f"{r['trial']}\t{ESTIMATE[r['group']][0]}\t{int(r['held'])}\t{r['pilot_s']:.1f}\t"
                            f"{r['p']:.2f}\t{r['lo']:.2f}\t{r['hi']:.2f}\t{r['m']:.2f}\t{r['ratio']:.3f}\t"
                            f"{int(r['inside'])}\n")
            for prior, name in ((False, "eta-today.tsv"), (True, "eta-today-prior.tsv")):
                with open(os.path.join(opts["--tsv"], name), "w") as f:
                    f.write("group\timport\tshare\tt_s\tleft_s\tlow_s\thigh_s\tactual_s\tinside\thalf_width\n")
                    for r in eta[prior]:
                        f.write("\t".join([r[0], os.path.relpath(r[1], tmp) if r[1].startswith(tmp)
                                           else os.path.relpath(r[1], DATA), *r[2:]]) + "\n")


main()
