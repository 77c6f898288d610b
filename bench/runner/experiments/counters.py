"""counters.py: the guest's own counters per request in an http batch
(make bench), per guest and load.

    bench/run experiment counters RESULTS_DIR

counters.csv holds, for each load run, what each counter of the guest's
Ctrl-T dumps moved by during the load and how many requests completed
(bench/runner/report/counters.py). This prints, per load and guest, the
median over the runs that count (records.py's rule, joined by run with
runs.csv) of a few counts per request: frames out and in (the network
layer's), transmit notifies (the driver's kicks of the device), network
polls, spins and parks of the wait loop. A guest that keeps no such
counter (the Linux guests) shows '-'. Standard library only.
"""
import csv
import sys
from collections import defaultdict

from ..records import LOADS, counts, load_label, num, read_runs
from ..report.tables import Stat

# (table head, counters.csv column, whether it is already per request)
COLUMNS = [("frames out", "net.frames_out", False), ("frames in", "net.frames_in", False),
           ("TX notifies", "virtio-net.kicks_tx", False), ("polls", "net_polls_per_request", True),
           ("spins", "spins_per_request", True), ("parks", "parks_per_request", True)]
KEY = ["rep", "backend", "emulator", "placement", "guest", "load", "loadgen"]


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    folder = argv[0]
    runs = read_runs(f"{folder}/runs.csv")
    counted = {tuple(r[k] for k in KEY) for r in runs if counts(r)}
    order = list(dict.fromkeys(r["guest"] for r in runs))  # the batch's guest order
    cells = defaultdict(list)  # (load, guest, head) -> per-request counts
    guests, loads = [], []
    try:
        f = open(f"{folder}/counters.csv", newline="")
    except OSError:
        print(f"counters: no {folder}/counters.csv", file=sys.stderr)
        return 1
    with f:
        for row in csv.DictReader(f):
            if tuple(row.get(k, "") for k in KEY) not in counted:
                continue
            requests = num(row.get("requests"))
            if row["guest"] not in guests:
                guests.append(row["guest"])
            if row["load"] not in loads:
                loads.append(row["load"])
            for head, column, per_request in COLUMNS:
                v = num(row.get(column))
                if v is not None and (per_request or requests):
                    cells[(row["load"], row["guest"], head)].append(v if per_request else v / requests)
    if not guests:
        print(f"counters: no run of {folder} that counts has counters", file=sys.stderr)
        return 1
    print("Counts per request, median over the runs that count (the guest's own counters around "
          "each load; '-': the guest keeps no such counter)\n")
    print("| load | guest | " + " | ".join(h for h, _, _ in COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    guests.sort(key=order.index)
    for load in [l for l in LOADS if l in loads] + [l for l in loads if l not in LOADS]:
        for guest in guests:
            row = [Stat(cells[(load, guest, h)]).median for h, _, _ in COLUMNS]
            if all(v is None for v in row):
                continue
            print(f"| {load_label(load)} | {guest} | " +
                  " | ".join("-" if v is None else f"{v:.3f}" for v in row) + " |")
    return 0
