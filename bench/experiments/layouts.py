#!/usr/bin/env python3
"""layouts.py: reads a make bench batch of images built by layouts.sh
(guests NAME-pPAD) per commit rather than per image.

    bench/experiments/layouts.py RESULTS_DIR [--max-steal PCT]

For each commit and load: the median requests/s of each layout over the
runs that count (bench/benchdata.py's rule, and the host's steal at most
--max-steal, default 10%), then the median of those medians, their range,
and the ratio to the first commit's; and instructions per request outside
the wait where the batch counted them (COUNT=1), which no layout changes.
A commit is slower than another at a load only if its layouts' range lies
below the other's. Standard library only.
"""
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchdata import LOADS, Stat, counts, counts_insns, fmt_ratio, num, read_runs  # noqa: E402


def table(commits, loads, cell):
    print("| load | " + " | ".join(commits) + " |")
    print("|---|" + "---|" * len(commits))
    for load in loads:
        print(f"| {load} | " + " | ".join(cell(c, load) for c in commits) + " |")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    folder = argv[1]
    max_steal = float(argv[argv.index("--max-steal") + 1]) if "--max-steal" in argv else 10.0
    rps = defaultdict(list)      # (commit, pad, load) -> requests/s of the runs that count
    insns = defaultdict(list)    # (commit, load) -> instructions/request outside the wait
    commits, left_out = [], 0
    for run in read_runs(f"{folder}/runs.csv"):
        m = re.fullmatch(r"(.+)-p(\d+)", run["guest"])
        if not m:
            continue
        commit, pad = m.group(1), int(m.group(2))
        if commit not in commits:
            commits.append(commit)
        if counts_insns(run):
            insns[(commit, run["load"])].append(num(run["insns_nowait_per_req"]))
        elif counts(run) and (num(run.get("steal_pct")) or 0) <= max_steal:
            rps[(commit, pad, run["load"])].append(num(run["rps"]))
        else:
            left_out += 1
    if not commits:
        sys.exit(f"layouts: no NAME-pPAD guests in {folder}/runs.csv")

    def layouts(commit, load):   # each layout's median requests/s
        return Stat([Stat(v).median for (c, _, l), v in rps.items() if c == commit and l == load])

    def rps_cell(commit, load):
        s, ref = layouts(commit, load), layouts(commits[0], load)
        if s.median is None:
            return "-"
        text = f"{s.fmt()}, {s.n} layouts"
        if commit != commits[0] and ref.median:
            text += f" x{fmt_ratio(s.median / ref.median)}"
        return text

    print(f"Requests/s per commit: median over layouts of each layout's median "
          f"(min-max of the layouts' medians); runs left out (plugin runs aside): {left_out} "
          f"(failed, busy or steal above {max_steal:g}%)\n")
    table(commits, [l for l in LOADS if any(k[2] == l for k in rps)], rps_cell)
    if insns:
        print("\nInstructions per request outside the wait (the runs under the plugin):\n")
        table(commits, [l for l in LOADS if any(k[1] == l for k in insns)],
              lambda c, l: Stat(insns.get((c, l), [])).fmt())


if __name__ == "__main__":
    main(sys.argv)
