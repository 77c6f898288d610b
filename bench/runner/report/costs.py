"""costs.py: a costs batch's table (the costs workload; make bench-costs).

    bench/run summarise DIR

calls write(DIR) (report/), which reads DIR/raw/ACCEL-REP.txt ("cost: NAME NS
ns (CYCLES cycles) over N" lines from tests/images/costs.c) and writes
DIR/costs.md: one row per primitive, one column per accelerator, each the
median ns of the boots with their min-max. has_costs(DIR) says whether DIR/raw
holds such lines. Standard library only.
"""
import glob
import os
import re
import statistics
import sys

LINE = re.compile(r"^cost: (\S+) (\d+) ns \((\d+) cycles\) over (\d+)$")
ACCELS = [("tcg-7.2", "TCG, QEMU 7.2"), ("tcg-10", "TCG, QEMU 10"), ("kvm", "nested KVM (L2)")]


def read(out):
    """({(accel, primitive): [ns per boot]}, primitives in first-seen order)."""
    ns, order = {}, []
    for path in sorted(glob.glob(os.path.join(out, "raw", "*.txt"))):
        accel = os.path.basename(path).rsplit("-", 1)[0]
        with open(path) as f:
            for line in f:
                m = LINE.match(line.strip())
                if m:
                    ns.setdefault((accel, m.group(1)), []).append(int(m.group(2)))
                    if m.group(1) not in order:
                        order.append(m.group(1))
    return ns, order


def has_costs(out):
    return bool(read(out)[0])


def write(out):
    """costs.md of a costs batch; 1 (and a message) when raw/ has no cost line."""
    ns, order = read(out)
    if not ns:
        print(f"summarise: no cost lines under {out}/raw", file=sys.stderr)
        return 1
    accels = [(a, t) for a, t in ACCELS if any(k[0] == a for k in ns)]
    rows = ["| primitive | " + " | ".join(t for _, t in accels) + " |",
            "|---|" + "---|" * len(accels)]
    for name in order:
        cells = []
        for a, _ in accels:
            v = ns.get((a, name))
            cells.append(f"{statistics.median(v):,.0f} ({min(v):,}-{max(v):,})" if v else "-")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    with open(os.path.join(out, "costs.md"), "w") as f:
        f.write("# What each primitive costs, ns per operation\n\n")
        f.write("Median of the boots (min-max); each boot's figure is the median of 5 batches.\n\n")
        f.write("\n".join(rows) + "\n")
    return 0
