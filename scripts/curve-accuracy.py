#!/usr/bin/env python3
"""The what-ifs' curves (mean value analysis, docs/demands.md "Curves") against the curve the
path with more nodes measured, on the sweeps scripts/whatif-accuracy.sh --keep DIR kept (each
re-rendered by the build under test first: `whatif-accuracy.sh --rescore DIR` does it).

  scripts/curve-accuracy.py DIR [DIR ...]

For every quiet sweep (q<quota>-<from>-<to>-<repeat>) whose from-path saturated a resource:
the node what-if for the to-path's node count, its curve at each thread count against the
docs/s the to-path measured there; and the threads the curve says reach 90 % of its bound
against the fewest threads at which the to-path measured 90 % of its own peak. One line per
sweep, then the median |error| of the points and how often the threads agree within one step
of the sweep's thread list.
"""
import glob
import json
import os
import re
import statistics
import sys

CHANGE = {2: "two_nodes", 3: "three_nodes", 4: "four_nodes"}


def nodes(method):
    m = re.search(r"-(\d)node$", method)
    return int(m.group(1)) if m else None


def main(dirs):
    errs, agree, rows = [], 0, 0
    print("sweep\tthreads\tpredicted\tmeasured\tratio")
    for d in dirs:
        for sweep in sorted(glob.glob(os.path.join(d, "q*-*-[0-9]"))):
            summaries = glob.glob(os.path.join(sweep, "*", "summary.json"))
            if not summaries:
                continue
            s = json.load(open(summaries[0]))
            plan = json.load(open(os.path.join(os.path.dirname(summaries[0]), "plan.json")))
            frm, to = [m["name"] for m in plan["methods"]][:2]
            k = nodes(to)
            if k not in CHANGE:
                continue
            src = [c for c in s["cells"] if c["method"] == frm and (c.get("verdict") or {}).get("what_if")]
            w = None
            for c in sorted(src, key=lambda c: -c["docs_per_sec"]):
                w = next((w for w in c["verdict"]["what_if"] if w["change"] == CHANGE[k] and w.get("curve")), None)
                if w:
                    break
            if not w:
                continue
            measured = {c["threads"]: c["docs_per_sec"] for c in s["cells"] if c["method"] == to}
            for t, x in w["curve"]:
                if t in measured:
                    r = x / measured[t]
                    errs.append(abs(r - 1))
                    print(f"{os.path.basename(sweep)}\t{t}\t{x:.0f}\t{measured[t]:.0f}\t{r:.3f}")
            threads = sorted(measured)
            peak = max(measured.values())
            reach = next(t for t in threads if measured[t] >= 0.9 * peak)
            said = w.get("threads_to_90_pct")
            # Within one step of the sweep's thread list: the curve says 12 where 8 and 16 were
            # measured, and 8 reached it: agree.
            i = threads.index(reach)
            near = threads[max(i - 1, 0)], threads[min(i + 1, len(threads) - 1)]
            ok = said is not None and near[0] <= said <= near[1]
            agree += ok
            rows += 1
            print(f"# {os.path.basename(sweep)}: curve says {said} threads reach 90 % of its bound; "
                  f"measured: {reach} threads reach 90 % of the peak ({peak:.0f}): {'agree' if ok else 'differ'}")
    if errs:
        print(f"# {len(errs)} points: median |error| {100 * statistics.median(errs):.0f} %, "
              f"90th percentile {100 * sorted(errs)[int(0.9 * (len(errs) - 1))]:.0f} %; "
              f"threads to 90 %: {agree}/{rows} within one step")
    else:
        print("# no sweep with a curve: re-render them with this build first (whatif-accuracy.sh --rescore DIR)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("curve-accuracy.py: give the --keep DIR of scripts/whatif-accuracy.sh")
    main(sys.argv[1:])
