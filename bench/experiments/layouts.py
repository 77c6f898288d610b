#!/usr/bin/env python3
"""layouts.py: reads a make bench batch of images built by layouts.sh
(guests NAME-pPAD) per commit rather than per image.

    bench/experiments/layouts.py RESULTS_DIR [--max-steal PCT]

For each commit and load: the median requests/s of each layout (over the
runs that count: every request answered 2xx, nobody else busy, the host's
steal at most --max-steal, default 10%), then the median of those medians,
their range, and the ratio to the first commit's; instructions per request
where the batch counted them (COUNT=1), which no layout changes. A commit
is slower than another at a load only if its layouts' range lies below the
other's. Standard library only.
"""
import csv
import re
import statistics
import sys
from collections import defaultdict

LOAD_ORDER = ["k1", "k8", "k64", "c1", "c16", "c64"]


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    folder = argv[1]
    max_steal = 10.0
    if "--max-steal" in argv:
        max_steal = float(argv[argv.index("--max-steal") + 1])
    per_layout = defaultdict(list)     # (commit, pad, load) -> [rps]
    insns = defaultdict(list)          # (commit, load) -> [insns/req]
    left_out = 0
    commits = []
    with open(f"{folder}/runs.csv") as f:
        for row in csv.DictReader(f):
            m = re.fullmatch(r"(.+)-p(\d+)", row["guest"])
            if not m:
                continue
            commit, pad = m.group(1), int(m.group(2))
            if commit not in commits:
                commits.append(commit)
            if row.get("plugin") == "1":
                if row.get("insns_per_req"):
                    insns[(commit, row["load"])].append(float(row["insns_per_req"]))
                continue
            ok = (row["status"] == "ok" and row["failed"] == "0" and row["non2xx"] == "0"
                  and row.get("busy", "0") == "0"
                  and float(row.get("steal_pct") or 0) <= max_steal)
            if not ok:
                left_out += 1
                continue
            per_layout[(commit, pad, row["load"])].append(float(row["rps"]))
    if not commits:
        sys.exit(f"layouts: no NAME-pPAD guests in {folder}/runs.csv")
    loads = [l for l in LOAD_ORDER if any(k[2] == l for k in per_layout)]
    ref = commits[0]
    print(f"Requests/s per commit: median over layouts of each layout's median "
          f"(min-max of the layouts' medians); runs left out: {left_out} "
          f"(failed, busy or steal above {max_steal:g}%)\n")
    print("| load | " + " | ".join(commits) + " |")
    print("|---|" + "---|" * len(commits))
    for load in loads:
        cells = []
        ref_med = None
        for c in commits:
            meds = [statistics.median(v) for (cc, pad, l), v in sorted(per_layout.items())
                    if cc == c and l == load and v]
            if not meds:
                cells.append("-")
                continue
            med = statistics.median(meds)
            cell = f"{med:.0f} ({min(meds):.0f}-{max(meds):.0f}, {len(meds)} layouts)"
            if c == ref:
                ref_med = med
            elif ref_med:
                cell += f" x{med / ref_med:.2f}"
            cells.append(cell)
        print(f"| {load} | " + " | ".join(cells) + " |")
    if insns:
        print("\nInstructions per request (one counted run per layout; median):\n")
        print("| load | " + " | ".join(commits) + " |")
        print("|---|" + "---|" * len(commits))
        for load in LOAD_ORDER:
            vals = [insns.get((c, load)) for c in commits]
            if not any(vals):
                continue
            print(f"| {load} | " + " | ".join(
                f"{statistics.median(v):,.0f}" if v else "-" for v in vals) + " |")


if __name__ == "__main__":
    main(sys.argv)
