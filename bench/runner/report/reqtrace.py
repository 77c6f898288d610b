"""reqtrace.py: where the time of one request goes, from the kernel's trace line.

    bench/run summarise DIR        (a fixes batch: trace.md; fixes.md's
                                   breakdown of `all` at k1)

The unikernel samples requests (kernel/trace.c) and, on each Ctrl-T that
loadrun.py sends after a load, prints one line such as

    trace: samples 755 (abandoned 0), last 256, stage us median/p90:
        frame>input 0.98/1.19 input>queue 6.62/7.64 ... publish>kick 65.9/87.5; sum ...

for the last (up to) 256 samples, which after a load of a few seconds are
that load's. write(DIR) reads every DIR/raw/*.counters file, takes the line
printed after each load, and writes DIR/trace.md: for each guest and load,
each stage's median microseconds over the repetitions (the median of the
per-repetition medians, with their min-max), the stage's share of the sum,
and the sum; collect(DIR) and md(...) give one such table (fixes.py). The
sampler follows one request at a time, so read it for one connection (k1);
at higher concurrency stages interleave. Standard library only.
"""
import glob
import os
import re
import statistics
import sys

TRACE = re.compile(r"^trace: samples (\d+) \(abandoned (\d+)\), last (\d+), stage us median/p90:(.*)$")
STAGE = re.compile(r"([a-z]+>[a-z]+) ([0-9.]+)/([0-9.]+)")
# "# rep 1 backend tap guest all" (older) or "# rep 1 backend tap emulator 7.2
# placement vcpu1 guest all"; marks "@ k1" (older) or "@ k1 ab before 11.7" /
# "@ k1 ab after 13.5" (the load, its generator, and how far the dump lies
# from it in ms): the line after a load is the one taken "after" it.
HEADER = re.compile(r"^# rep (\S+) backend (\S+)(?: emulator \S+ placement \S+)? guest (\S+)")
MARK = re.compile(r"^@ (\S+)(?: (\S+) (before|after)\b.*)?$")


def parse_file(path):
    """[(rep, backend, guest, mark, {stage: (median, p90)}, samples)] of one counters file."""
    out = []
    rep = backend = guest = mark = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            m = HEADER.match(line)
            if m:
                if line.endswith(" plugin 1"):  # slowed by the counting plugin: not the guest's times
                    return []
                rep, backend, guest = m.groups()
                continue
            m = MARK.match(line)
            if m:
                load, _gen, when = m.groups()
                mark = load if when in (None, "after") and load != "start" else None
                continue
            m = TRACE.match(line)
            if m and mark:
                stages = {name: (float(med), float(p90)) for name, med, p90 in STAGE.findall(m.group(4))}
                if stages:
                    out.append((rep, backend, guest, mark, stages, int(m.group(3))))
    return out


def collect(results):
    """{(backend, guest, load): [(rep, stages, samples)]} from every counters file."""
    table = {}
    for path in sorted(glob.glob(os.path.join(results, "raw", "*.counters"))):
        for rep, backend, guest, load, stages, n in parse_file(path):
            table.setdefault((backend, guest, load), []).append((rep, stages, n))
    return table


def breakdown(rows):
    """[(stage, median, lo, hi, share)] and the sum of medians, over repetitions."""
    names = []
    for _, stages, _ in rows:
        for name in stages:
            if name not in names:
                names.append(name)
    out = []
    for name in names:
        vals = [stages[name][0] for _, stages, _ in rows if name in stages]
        out.append((name, statistics.median(vals), min(vals), max(vals)))
    total = sum(med for _, med, _, _ in out)
    return [(n, med, lo, hi, 100 * med / total if total else 0) for n, med, lo, hi in out], total


def md(backend, guest, load, rows):
    parts, total = breakdown(rows)
    reps = len(rows)
    lines = [f"### {guest}, {load}, back-end {backend} ({reps} repetition(s), "
             f"{min(n for _, _, n in rows)}-{max(n for _, _, n in rows)} samples each)", "",
             "| stage | us, median (min-max) | share |", "|---|---|---|"]
    for name, med, lo, hi, share in parts:
        lines.append(f"| {name} | {med:.2f} ({lo:.2f}-{hi:.2f}) | {share:.0f}% |")
    lines.append(f"| sum of medians | {total:.2f} | |")
    return "\n".join(lines) + "\n"


def write(results):
    """trace.md of a batch's trace lines; a warning, and no file, without any."""
    table = collect(results)
    if not table:
        print(f"summarise: no trace lines in {results}/raw/*.counters", file=sys.stderr)
        return
    doc = ["# Where the time of one request goes", "",
           "Per-stage microseconds from the kernel's sampled requests (kernel/trace.c), "
           "the median over repetitions of each dump's median; read k1 (one connection) first.", ""]
    for k in sorted(table):
        doc.append(md(*k, table[k]))
    with open(os.path.join(results, "trace.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(doc))
    print(f"trace: {os.path.join(results, 'trace.md')}")
