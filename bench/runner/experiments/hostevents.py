"""hostevents.py: what the host did per request in a batch run with
bench/experiments/hostevents/ab first on PATH, as counts.

    bench/run experiment hostevents RESULTS_DIR

Each load run of such a batch left RAW.hostevents (perf stat -a around ab,
every host CPU): context switches, wake-ups, system calls (all, and those of
QEMU's main loop and ab by name) and softirqs. This joins them with
runs.csv into RESULTS_DIR/hostevents.csv (raw/ is not kept in git; the
csv is, and is read when raw/ has no such files) and prints, per guest (or
per commit, for layouts.sh's NAME-pPAD guests) and load, the median count
per completed request over the runs that count (records.py's
rule), with the requests/s of those runs beside. Time on the shared host
moves with its neighbours and with where a guest's code lands; these
counts move mostly with what the guest makes the host do (notifies that
wake QEMU's main loop, frames through tap, waits on QEMU's lock), which is
where a guest that is slower without more instructions would show it. They
follow speed a little too: a slow run's main loop idles, and is woken,
more often. Standard library only.
"""
import csv
import os
import sys
from collections import defaultdict

from ..records import LOADS, console_name, counts, num, read_runs
from ..report.tables import Stat
from .layouts import layout_of

# perf's event names, shortened as the table heads them.
EVENTS = [("sched:sched_switch", "switches"), ("sched:sched_wakeup", "wakeups"),
          ("raw_syscalls:sys_enter", "syscalls"), ("syscalls:sys_enter_ppoll", "ppoll"),
          ("syscalls:sys_enter_read", "read"), ("syscalls:sys_enter_write", "write"),
          ("syscalls:sys_enter_writev", "writev"), ("syscalls:sys_enter_epoll_wait", "epoll_wait"),
          ("syscalls:sys_enter_futex", "futex"), ("irq:softirq_entry", "softirqs")]


def read_events(path):
    """{event: count} of one perf stat -x, file; None if it holds none."""
    out = {}
    with open(path) as f:
        for line in f:
            fields = line.strip().split(",")
            if len(fields) > 2 and fields[0].isdigit():
                out[fields[2]] = int(fields[0])
    return out or None


KEY = ["rep", "backend", "emulator", "placement", "guest", "load", "loadgen"]


def from_raw(folder):
    """{run key: {event: count}} from raw/*.hostevents; written to hostevents.csv."""
    found = {}
    for run in read_runs(f"{folder}/runs.csv"):
        path = f"{folder}/raw/{console_name(run)}-{run['load']}-{run['loadgen']}.hostevents"
        events = read_events(path) if os.path.exists(path) else None
        if events:
            found[tuple(run[k] for k in KEY)] = events
    if found:
        with open(f"{folder}/hostevents.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(KEY + [e for e, _ in EVENTS])
            for key, events in found.items():
                w.writerow(list(key) + [events.get(e, 0) for e, _ in EVENTS])
    return found


def from_csv(folder):
    path = f"{folder}/hostevents.csv"
    if not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        return {tuple(row[k] for k in KEY): {e: int(row[e]) for e, _ in EVENTS}
                for row in csv.DictReader(f)}


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    folder = argv[0]
    host = from_raw(folder) or from_csv(folder)
    per_req = defaultdict(lambda: defaultdict(list))  # (group, load) -> event -> [count/request]
    rps = defaultdict(list)
    groups, missing = [], 0
    for run in read_runs(f"{folder}/runs.csv"):
        if not counts(run):
            continue
        events = host.get(tuple(run[k] for k in KEY))
        requests = num(run["requests"])
        if not events or not requests:
            missing += 1
            continue
        group = layout_of(run["guest"])[0]
        if group not in groups:
            groups.append(group)
        key = (group, run["load"])
        rps[key].append(num(run["rps"]))
        for event, _ in EVENTS:
            per_req[key][event].append(events.get(event, 0) / requests)
    if not per_req:
        print(f"hostevents: no raw/*.hostevents nor hostevents.csv for the runs of {folder} "
              "(was bench/experiments/hostevents first on PATH?)", file=sys.stderr)
        return 1
    print(f"Host events per request (perf stat -a around ab), median over runs; "
          f"runs that count without a file: {missing}\n")
    print("| load | guest | runs | req/s | " + " | ".join(n for _, n in EVENTS) + " |")
    print("|---|---|---|---|" + "---|" * len(EVENTS))
    for load in [l for l in LOADS if any(k[1] == l for k in per_req)]:
        for group in groups:
            key = (group, load)
            if key not in per_req:
                continue
            cells = [f"{Stat(per_req[key][e]).median:.2f}" for e, _ in EVENTS]
            print(f"| {load} | {group} | {len(rps[key])} | {Stat(rps[key]).fmt()} | " + " | ".join(cells) + " |")
    return 0

