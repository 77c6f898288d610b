"""layouts.py: reads an http batch (make bench) of images built by
bench/experiments/layouts.sh (guests NAME-pPAD) per commit rather than per
image.

    bench/run experiment layouts RESULTS_DIR [--max-steal PCT]

For each commit and load: the median requests/s of each layout over the
runs that count (records.py's rule, and the host's steal at most
--max-steal, default 10%), then the median of those medians, their range,
and the ratio to the first commit's; and instructions per request outside
the wait where the batch counted them (COUNT=1), which no layout changes.

Then the same runs in pairs: layouts.sh orders a batch so that each
commit's boot comes right after the first commit's at the same layout and
repetition (the commits in turn; each boot runs every load), so a pair of
runs of one load lies minutes apart at most and shares more of the shared
host's state of the moment, which moves requests/s more than most changes
do, than runs of separate repetitions. For each commit and load: the
median of its runs' ratios to their partners, with a 95% bootstrap
interval of that median (seeded: the same batch prints the same
interval). A commit is slower than the first at a load only if the whole
interval lies below 1, faster only if above. Standard library only.
"""
import random
import re
import sys
from collections import defaultdict

from ..records import LOADS, counts, counts_insns, num, read_runs
from ..report.tables import Stat, fmt_ratio


def layout_of(guest):
    """(commit, pad) of a layouts.sh guest NAME-pPAD; (guest, None) of another."""
    m = re.fullmatch(r"(.+)-p(\d+)", guest)
    return (m.group(1), int(m.group(2))) if m else (guest, None)


def table(commits, loads, cell):
    print("| load | " + " | ".join(commits) + " |")
    print("|---|" + "---|" * len(commits))
    for load in loads:
        print(f"| {load} | " + " | ".join(cell(c, load) for c in commits) + " |")


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    folder = argv[0]
    max_steal = float(argv[argv.index("--max-steal") + 1]) if "--max-steal" in argv else 10.0
    rps = defaultdict(list)      # (commit, pad, load) -> requests/s of the runs that count
    timed = {}                   # (commit, pad, rep, load) -> requests/s of a run that counts
    insns = defaultdict(list)    # (commit, load) -> instructions/request outside the wait
    commits, left_out = [], 0
    for run in read_runs(f"{folder}/runs.csv"):
        commit, pad = layout_of(run["guest"])
        if pad is None:
            continue
        if commit not in commits:
            commits.append(commit)
        if counts_insns(run):
            insns[(commit, run["load"])].append(num(run["insns_nowait_per_req"]))
        elif counts(run) and (num(run.get("steal_pct")) or 0) <= max_steal:
            rps[(commit, pad, run["load"])].append(num(run["rps"]))
            timed[(commit, pad, run["rep"], run["load"])] = num(run["rps"])
        else:
            left_out += 1
    if not commits:
        print(f"layouts: no NAME-pPAD guests in {folder}/runs.csv", file=sys.stderr)
        return 1

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
    if len(commits) > 1:
        print(f"\nPaired with {commits[0]}'s run at the same layout and repetition: median ratio "
              f"[95% bootstrap interval], pairs\n")
        table(commits[1:], [l for l in LOADS if any(k[2] == l for k in rps)],
              lambda c, l: paired_cell(timed, commits[0], c, l))
    if insns:
        print("\nInstructions per request outside the wait (the runs under the plugin):\n")
        table(commits, [l for l in LOADS if any(k[1] == l for k in insns)],
              lambda c, l: Stat(insns.get((c, l), [])).fmt())
    return 0


def paired_cell(timed, ref, commit, load, resamples=4000):
    """commit's runs of load over ref's at the same layout and repetition:
    the median ratio, the 2.5th and 97.5th percentiles of the medians of
    `resamples` resamplings (with replacement) of the ratios, the count, and
    a verdict where the interval lies on one side of 1."""
    ratios = [v / timed[(ref, pad, rep, l)] for (c, pad, rep, l), v in timed.items()
              if c == commit and l == load and timed.get((ref, pad, rep, l))]
    if len(ratios) < 2:
        return "-"
    rng = random.Random(0)
    meds = sorted(Stat(rng.choices(ratios, k=len(ratios))).median for _ in range(resamples))
    low, high = meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]
    verdict = " slower" if high < 1 else " faster" if low > 1 else ""
    return (f"x{Stat(ratios).median:.3f} [{low:.3f}-{high:.3f}], {len(ratios)}{verdict}")

