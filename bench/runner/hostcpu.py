"""hostcpu.py: the host's CPU time, read from /proc.

    bench/run hostcpu busiest [SECONDS [N]]   the N processes that took the most
                                             CPU over SECONDS (default 1 s, 5)

Offers (for runner/loadrun.py)
    HZ                 clock ticks per second (/proc's unit)
    cpu_ticks()        busy and steal ticks of all CPUs (/proc/stat's "cpu" line)
    process_ticks(pid) user+system ticks of a process: every thread of it,
                       those that ended included (the kernel adds them to the
                       thread group's total), None when it is gone
    busiest(secs, n)   [(percent of a core, pid, name)] over a sample
Busy is user + nice + system time: interrupt and softirq time is left out,
because this kernel accounts it by tick to whichever task was running, so it
is already in the benchmark's own processes when it fell on them, and
otherwise is mostly the benchmark's network traffic handled on another CPU.
Standard library only.
"""
import os
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def cpu_ticks(path="/proc/stat"):
    """(busy, steal) ticks of all CPUs together since boot."""
    with open(path) as f:
        for line in f:
            if line.startswith("cpu "):
                v = [int(x) for x in line.split()[1:]]
                v += [0] * (8 - len(v))
                return v[0] + v[1] + v[2], v[7]
    raise OSError(f"{path}: no cpu line")


def process_ticks(pid):
    """utime + stime of a process (all its threads), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return int(fields[11]) + int(fields[12])


def process_name(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def busiest(secs=1.0, n=5):
    """The processes that took the most CPU over a sample of `secs`."""
    def snapshot():
        out = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                t = process_ticks(d)
                if t is not None:
                    out[d] = t
        return out

    before = snapshot()
    time.sleep(secs)
    after = snapshot()
    took = [(100.0 * (t - before[p]) / HZ / secs, int(p), process_name(p))
            for p, t in after.items() if p in before and t > before[p]]
    took.sort(reverse=True)
    return took[:n]


def busiest_lines(secs, n):
    return [f"{pct:5.1f}% of a core  pid {pid}  {name}" for pct, pid, name in busiest(secs, n)]


def main(argv):
    if not argv or argv[0] != "busiest" or len(argv) > 3:
        print("usage: bench/run hostcpu busiest [SECONDS [N]]", file=sys.stderr)
        return 2
    secs = float(argv[1]) if len(argv) > 1 else 1.0
    n = int(argv[2]) if len(argv) > 2 else 5
    print("\n".join(busiest_lines(secs, n)))
    return 0
