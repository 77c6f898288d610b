"""kvm.py: a kvm batch's exits per request, by reason (the kvm workload;
make bench-kvm).

    bench/run summarise DIR

calls write(DIR) (report/), which reads DIR/raw/l1-*.txt (what
bench/kvm/exits.sh printed in each L1 boot) and writes DIR/summary.md and
DIR/runs.csv (one row per load run: the per-request figures below). Every
figure is per completed request, the median over the repetitions (min-max).

The main table splits every exit by its SVM exit reason (the columns after
`exits` add up to it):
  exits      every exit L1's KVM took for the guest (debugfs `exits`)
  hlt        halts: the guest parked (SVM exit 0x78)
  npf        nested page faults (0x400): MMIO, to a virtio doorbell or
             register or to the xAPIC's page
  msr        MSR accesses (0x7c): the x2APIC's registers, TSC-deadline
  pio        I/O instructions (0x7b)
  irqwin     interrupt windows (0x64): KVM waiting for the guest to take one
  l1intr     L1's own interrupts while the guest ran (0x60): L1's timer and
             IPIs, not the guest's doing
  other      the rest (CPUID, ...)
  inj        interrupts KVM injected (debugfs irq_injections; not exits)
  req/s      L1-bound (L1 runs under TCG); L1 CPU ms per request
The second table says what the npf and msr exits were: doorbell writes
(kvm_mmio writes outside the local APIC: an ioeventfd in L1's kernel, or
QEMU for a tap without vhost), local APIC register writes (kvm_apic, by
MMIO or x2APIC MSR alike: TMICT 0x380 the one-shot, EOI 0xb0, ICR 0x300),
and the exits that went on to QEMU's user space (debugfs mmio_exits +
io_exits: a device register read, a PIO). The last, for our kernel: its own
counters per request from its Ctrl-T dumps (notifies sent, parks,
interrupts, EOI writes, one-shot loads, the spins' PAUSEs and the
pause-loop exits a KVM host's default filters would take for them; for a
guest with per-CPU lines, every CPU's, and the IPIs sent, the PAUSEs of
the lock and cross-CPU call waits and their pause-loop exits).
Standard library only.
"""
import csv
import glob
import os
import statistics
import sys

from ..loads import HTTP_LOADS
from .counters import parse_dump
from .tables import Stat, md_table

APIC_PAGE = 0xFEE00000
EXIT_HLT, EXIT_NPF, EXIT_MSR, EXIT_IOIO, EXIT_VINTR, EXIT_INTR = 0x78, 0x400, 0x7C, 0x7B, 0x64, 0x60
BACKEND_ORDER = ["vhost", "vhostpoll", "tap", "user"]
LOAD_ORDER = list(HTTP_LOADS)
COLUMNS = ["exits", "hlt", "npf", "msr", "pio", "irqwin", "l1intr", "other", "inj"]
DETAIL = ["notify", "tmict", "eoi", "icr", "apic_other", "user"]
# (label, [columns...]): the first choice whose columns both dumps have,
# summed. A guest with per-CPU lines (counters.py: cpus.* sums every CPU's)
# is read there first; a one-CPU guest has the boot CPU's lines only.
GUEST_COUNTERS = [("notifies", [("virtio-net.kicks_tx",)]),
                  ("parks", [("cpus.parks",), ("kernel.parks",)]),
                  ("interrupts", [("cpus.interrupts",), ("kernel.interrupts",)]),
                  ("eoi writes", [("cpus.eoi_writes",), ("kernel.eoi_writes",)]),
                  ("one-shot loads", [("kernel.timer_reloads",)]),
                  ("spin PAUSEs", [("cpus.spin_pauses",), ("kernel.spin_pauses",)]),
                  ("PLE exits AMD (est.)", [("cpus.pause_loop_exits_estimated_amd_spin",),
                                            ("kernel.pause_loop_exits_estimated_amd",)]),
                  ("PLE exits Intel (est.)", [("cpus.pause_loop_exits_estimated_intel_spin",),
                                              ("kernel.pause_loop_exits_estimated_intel",)]),
                  ("IPIs sent", [("cpus.ipis_sent",)]),
                  ("lock+call PAUSEs", [("cpus.pauses_lock", "cpus.pauses_call")]),
                  ("lock+call PLE AMD (est.)", [("cpus.pause_loop_exits_estimated_amd_lock",
                                                 "cpus.pause_loop_exits_estimated_amd_call")]),
                  ("lock+call PLE Intel (est.)", [("cpus.pause_loop_exits_estimated_intel_lock",
                                                   "cpus.pause_loop_exits_estimated_intel_call")])]


def read(out):
    runs = {}  # (rep, backend, guest, load) -> dict
    for path in sorted(glob.glob(os.path.join(out, "raw", "l1-*.txt"))):
        dump_key, mark, lines = None, None, []

        def close_mark():
            if dump_key and mark:
                load, side = mark
                r = runs.setdefault(dump_key + (load,), {})
                r["dump_" + side] = parse_dump("\n".join(lines))

        for raw in open(path, errors="replace"):
            w = raw.split()
            if not w:
                continue
            if w[0] == "run" and len(w) >= 13:
                r = runs.setdefault(tuple(w[1:5]), {})
                r.update(requests=int(w[6]), failed=w[8], secs=float(w[10]), l1cpu_ms=int(w[12]))
            elif w[0] == "delta" and len(w) == 7:
                runs.setdefault(tuple(w[1:5]), {}).setdefault("delta", {})[w[5]] = int(w[6])
            elif w[0] == "hist" and len(w) >= 8:
                runs.setdefault(tuple(w[1:5]), {}).setdefault("hist", []).append((w[5], w[6:-1], int(w[-1])))
            elif w[0] == "dump" and len(w) == 4:
                dump_key, mark, lines = tuple(w[1:4]), None, []
            elif w[0] == "enddump":
                close_mark()
                dump_key, mark = None, None
            elif w[0] == "@" and dump_key and len(w) >= 3:
                close_mark()
                mark, lines = (w[1], w[3] if len(w) > 3 else w[2]), []
                mark = (w[1], w[3]) if w[2] == "ab" else (w[1], w[2])
            elif dump_key and mark:
                lines.append(raw.rstrip("\n"))
    return runs


def per_request(r):
    """{column: per-request figure} of one run; None when it did not complete."""
    n = r.get("requests", 0)
    if not n or r.get("failed") != "0":
        return None
    d, c = r.get("delta", {}), {}
    reasons, apic, notify = {}, {}, 0
    for ev, keys, count in r.get("hist", []):
        if ev == "kvm_exit":
            reasons[int(keys[0])] = reasons.get(int(keys[0]), 0) + count
        elif ev == "kvm_apic" and len(keys) == 2:
            apic[(int(keys[0]), int(keys[1]))] = count
        elif ev == "kvm_mmio" and len(keys) == 2 and int(keys[0]) == 2:
            if not APIC_PAGE <= int(keys[1]) < APIC_PAGE + 0x1000:
                notify += count
    exits = d.get("exits", sum(reasons.values()))
    c["exits"] = exits
    c["hlt"] = reasons.get(EXIT_HLT, 0)
    c["npf"] = reasons.get(EXIT_NPF, 0)
    c["msr"] = reasons.get(EXIT_MSR, 0)
    c["pio"] = reasons.get(EXIT_IOIO, 0)
    c["irqwin"] = reasons.get(EXIT_VINTR, 0)
    c["l1intr"] = reasons.get(EXIT_INTR, 0)
    named = c["hlt"] + c["npf"] + c["msr"] + c["pio"] + c["irqwin"] + c["l1intr"]
    c["other"] = max(0, exits - named)
    c["inj"] = d.get("irq_injections", 0)
    c["notify"] = notify
    c["tmict"] = apic.get((1, 0x380), 0)
    c["eoi"] = apic.get((1, 0xB0), 0)
    c["icr"] = apic.get((1, 0x300), 0)
    c["apic_other"] = sum(apic.values()) - c["tmict"] - c["eoi"] - c["icr"]
    c["user"] = d.get("mmio_exits", 0) + d.get("io_exits", 0)
    out = {k: v / n for k, v in c.items()}
    out["rps"] = n / r["secs"] if r.get("secs") else 0
    out["l1cpu"] = r["l1cpu_ms"] / n
    before, after = r.get("dump_before"), r.get("dump_after")
    if before and after:
        for label, choices in GUEST_COUNTERS:
            cols = next((c for c in choices if all(k in before and k in after for k in c)), None)
            if cols:
                out["g:" + label] = sum(after[k] - before[k] for k in cols) / n
    return out


def med(values, digits=2):
    """'median (min-max)' of per-request figures."""
    return Stat(values).fmt(digits)


def write(out):
    """summary.md and runs.csv of a kvm batch's raw/l1-*.txt; 1 (and a
    message) when they hold no run."""
    runs = read(out)
    if not runs:
        print(f"summarise: no runs under {out}/raw", file=sys.stderr)
        return 1
    figs = {}  # (backend, guest, load) -> [per_request]
    bad = []
    for key, r in sorted(runs.items()):
        p = per_request(r)
        if p is None:
            bad.append(f"rep {key[0]} {key[1]} {key[2]} {key[3]}: {r.get('requests', 0)} requests, "
                       f"{r.get('failed', '?')} failed")
            continue
        figs.setdefault(key[1:], []).append(p)
    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        cols = sorted({c for ps in figs.values() for p in ps for c in p})
        w = csv.writer(f)
        w.writerow(["backend", "guest", "load"] + cols)
        for (b, g, l), ps in sorted(figs.items()):
            for p in ps:
                w.writerow([b, g, l] + [f"{p.get(c, 0):.4f}" for c in cols])
    backends = sorted({k[0] for k in figs}, key=lambda b: BACKEND_ORDER.index(b) if b in BACKEND_ORDER else 9)
    guests = sorted({k[1] for k in figs}, key=lambda g: (g != "uk", g))
    loads = [l for l in LOAD_ORDER if any(k[2] == l for k in figs)]
    md = ["# VM exits per request under KVM (nested: L1 under TCG)", ""]
    meta = os.path.join(out, "meta.txt")
    if os.path.exists(meta):
        with open(meta) as f:
            md += ["```", f.read().strip(), "```", ""]
    md += ["Per completed request, median over the L1 boots (min-max). Requests/s are L1-bound.", ""]
    if bad:
        md += ["Runs left out (incomplete or failed requests):", ""] + [f"- {b}" for b in bad] + [""]
    for b in backends:
        cells = [(l, g, figs[(b, g, l)]) for l in loads for g in guests if figs.get((b, g, l))]
        md += [f"## back-end `{b}`", "",
               md_table(["load", "guest"] + COLUMNS + ["req/s", "L1 CPU ms"],
                        [[l, g] + [med([p[c] for p in ps]) for c in COLUMNS]
                         + [med([p["rps"] for p in ps], 0), med([p["l1cpu"] for p in ps])] for l, g, ps in cells])]
        md += ["", "Exits of the first guest against each other guest's (median exits per request):", "",
               "| load | " + " | ".join(f"{guests[0]} / {g}" for g in guests[1:]) + " |",
               "|---|" + "---|" * (len(guests) - 1)]
        for l in loads:
            row = []
            for g in guests[1:]:
                a, o = figs.get((b, guests[0], l)), figs.get((b, g, l))
                if a and o:
                    x = statistics.median([p["exits"] for p in a]) / max(1e-9, statistics.median([p["exits"] for p in o]))
                    row.append(f"x{x:.2f}")
                else:
                    row.append("-")
            md.append(f"| {l} | " + " | ".join(row) + " |")
        md += ["", "What the npf and msr exits were (per request): doorbell writes, local APIC register "
               "writes (TMICT: the one-shot; EOI; ICR; others) and exits to QEMU's user space:", "",
               md_table(["load", "guest"] + DETAIL, [[l, g] + [med([p[c] for p in ps]) for c in DETAIL]
                                                     for l, g, ps in cells])]
        gcols = [label for label, _ in GUEST_COUNTERS]
        rows = []
        for l, g, ps in cells:
            ps = [p for p in ps if any(k.startswith("g:") for k in p)]
            if ps:
                rows.append([l, g] + [med([p.get('g:' + c, 0) for p in ps]) for c in gcols])
        if rows:
            md += ["", "Our kernel's own counters per request (every CPU's, for a guest with more than one). "
                   "The PLE columns are the pause-loop exits a KVM host with default pause filters would add "
                   "for the executor's spins and for the lock and cross-CPU call waits, each wait one run of "
                   "PAUSEs (kernel/ple.h: AMD 3000 PAUSEs, Intel 4096 cycles, doubling per exit, reset at a "
                   "park); L0 here has no pause filter, so the exits above include none:", "",
                   md_table(["load", "guest"] + gcols, rows)]
        md.append("")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    return 0
