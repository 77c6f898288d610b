"""smp.py: an HTTP batch's figures for guests of more than one vCPU (make
bench SMP="1 2"): what the CPUs cost each other per request, and what an
idle guest costs the host.

Called by http.py for summary.md; nothing to run. Offers
    counter_rows(out_dir)          counters.csv's rows of timed runs (the
                                   per_req.* columns counters.py wrote)
    sections(summary, out_dir)     the markdown of both tables below, [] when
                                   the batch has neither per-CPU counters nor
                                   a guest of more than one vCPU
The first table, per configuration, a row per load and unikernel guest
whose dumps have per-CPU lines (kernel: cpu N ...; counters.py reads them as
cpuN.*, their sums as cpus.* and the lock line as lock.NAME_*), and per
other guest with instructions per vCPU (a Linux guest: that column alone),
every figure per completed request, median (min-max) over the runs:
    locks        per lock taken in the batch: acquisitions (contended)
    lock PAUSEs  the PAUSEs every CPU spun waiting for a lock
    IPIs sent, received   per CPU, in CPU order ('/' between)
    wakes        wake IPIs sent to end another CPU's park (smp_wake)
    calls        cross-CPU calls run
    PLE          the pause-loop exits a KVM host with default filters would
                 take for the lock and call waits (kernel/ple.h), AMD/Intel
    instr by CPU each vCPU's instructions outside the wait loop (the plugin
                 runs' insns_nowait_by_cpu; runs.csv)
The second, a row per guest and configuration: the host CPU QEMU took over
the idle sample after boot (IDLE_SECS, the first IDLE_REPS repetitions), as
CPU seconds per second, per vCPU (the guest's vCPU count from its -smpN
name), and its vCPU threads' share; against issue 39's goal for the
unikernel of at most 0.5% of a core per vCPU. Standard library only.
"""
import csv
import os
import re

from ..records import num, under_plugin
from .tables import Stat, md_table

IDLE_GOAL_PCT = 0.5  # % of a core per vCPU an idle unikernel may take (issue 39)
KEY = ("backend", "emulator", "placement", "loadgen", "guest", "load")


def vcpus_of(guest):
    """The vCPU count a batch guest runs with: N of NAME-smpN, else 1."""
    m = re.search(r"-smp(\d+)$", guest)
    return int(m.group(1)) if m else 1


def counter_rows(out_dir):
    """counters.csv's rows of timed runs (not under the plugin), [] when
    there is none."""
    path = os.path.join(out_dir, "counters.csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("plugin", "0") != "1"]


def cpus_in(rows):
    """The CPU numbers with per-request columns in rows, in order."""
    found = set()
    for r in rows:
        for k in r:
            m = re.match(r"^per_req\.cpu(\d+)\.", k)
            if m and r[k] != "":
                found.add(int(m.group(1)))
    return sorted(found)


def locks_in(rows):
    """The locks taken in rows (any acquisition per request above 0)."""
    names = []
    for r in rows:
        for k, v in r.items():
            m = re.match(r"^per_req\.lock\.(.+)_acquisitions$", k)
            if m and (num(v) or 0) > 0 and m.group(1) not in names:
                names.append(m.group(1))
    return names


def stat(rows, col):
    return Stat([num(r.get(col)) for r in rows])


def sum_stat(rows, cols):
    """A Stat of the per-run sums of cols (a run lacking all of them: none)."""
    vals = []
    for r in rows:
        got = [num(r.get(c)) for c in cols]
        got = [g for g in got if g is not None]
        vals.append(sum(got) if got else None)
    return Stat(vals)


def by_cpu(rows, cpus, label, digits=2):
    """'a / b' of each CPU's median per request of cpuN.label."""
    return " / ".join(stat(rows, f"per_req.cpu{c}.{label}").fmt(digits, spread=False) for c in cpus)


def insns_by_cpu(runs):
    """'a / b' of each vCPU's median instructions per request outside the
    wait loop (runs.csv's insns_nowait_by_cpu), '-' when none has them."""
    split = [[num(x) for x in r.get("insns_nowait_by_cpu", "").split("/")] for r in runs
             if r.get("insns_nowait_by_cpu")]
    if not split:
        return "-"
    n = max(len(s) for s in split)
    return " / ".join(Stat([s[i] for s in split if i < len(s)]).fmt(0, spread=False) for i in range(n))


def counter_section(summary, rows):
    """The per-request table: the guests with per-CPU lines, and those
    (a Linux guest) with instructions per vCPU alone."""
    if not rows and not any(r.get("insns_nowait_by_cpu") for r in summary.runs):
        return []
    out = ["## More than one CPU: per request", "",
           "Our kernel's per-CPU counters (the `kernel: cpu N` and `kernel: locks` lines of its "
           "Ctrl-T dumps around each load; report/smp.py), per completed request, median (min-max) "
           "over the timed runs. Locks: acquisitions (contended) of each lock taken; lock PAUSEs: "
           "spun by every CPU waiting for one; IPIs sent and received, per CPU in CPU order; wakes: "
           "wake IPIs sent to end another CPU's park; calls: cross-CPU calls run; PLE: the "
           "pause-loop exits a KVM host with default pause filters would take for the lock and call "
           "waits (kernel/ple.h, each wait one run of PAUSEs; under TCG the Intel figure, which "
           "counts TSC cycles, is the emulator's time), AMD / Intel; instr by CPU: each vCPU's "
           "instructions per request outside the wait loop, from the runs under the counting "
           "plugin (per vCPU under QEMU 7.2 and 9.0 on: tools/plugin/insncount.c).", ""]
    tables = []
    locks = locks_in(rows)
    head = (["load", "guest", "CPUs"] + [f"{n} lock" for n in locks]
            + ["lock PAUSEs", "IPIs sent", "IPIs received", "wakes", "calls", "PLE lock+call", "instr by CPU"])
    for config in summary.configs():
        table = []
        for load in summary.loads:
            for g in summary.guests:
                mine = [r for r in rows if r["guest"] == g and r["load"] == load and summary.matches(r, config)]
                cpus = cpus_in(mine)
                insns = insns_by_cpu(summary.insns_runs(config, g, load))
                if not cpus:
                    if insns != "-":  # a guest with no counters of ours: its instructions alone
                        table.append([load, g, str(vcpus_of(g))] + ["-"] * (len(locks) + 7) + [insns])
                    continue
                cells = [f"{stat(mine, f'per_req.lock.{n}_acquisitions').fmt(2)} "
                         f"({stat(mine, f'per_req.lock.{n}_contended').fmt(2, spread=False)})" for n in locks]
                amd = sum_stat(mine, ["per_req.cpus.pause_loop_exits_estimated_amd_lock",
                                      "per_req.cpus.pause_loop_exits_estimated_amd_call"])
                intel = sum_stat(mine, ["per_req.cpus.pause_loop_exits_estimated_intel_lock",
                                        "per_req.cpus.pause_loop_exits_estimated_intel_call"])
                table.append([load, g, str(len(cpus))] + cells + [
                    stat(mine, "per_req.cpus.pauses_lock").fmt(1),
                    by_cpu(mine, cpus, "ipis_sent"), by_cpu(mine, cpus, "ipis_received"),
                    stat(mine, "per_req.cpus.wakes_sent").fmt(2),
                    stat(mine, "per_req.cpus.calls_run").fmt(2),
                    f"{amd.fmt(3, spread=False)} / {intel.fmt(3, spread=False)}", insns])
        if table:
            tables += [f"### {summary.label(config)}", "", md_table(head, table), ""]
    return out + tables if tables else []  # no heading over nothing


def idle_section(summary):
    """The idle table: a row per guest and boot configuration with a sample."""
    rows = []
    for config in summary.configs():
        if config["loadgen"] != summary.values["loadgen"][0]:
            continue  # a boot serves every load generator: one row
        c = {k: config[k] for k in ("backend", "emulator", "placement")}
        for g in summary.guests:
            ok = [b for b in summary.boots if b["guest"] == g and summary.matches(b, c) and not under_plugin(b)
                  and b["status"] == "ok" and num(b["idle_cpu_pct"]) is not None]
            if not ok:
                continue
            n = vcpus_of(g)
            pct = Stat([num(b["idle_cpu_pct"]) for b in ok])
            per = Stat([num(b["idle_cpu_pct"]) / n for b in ok])
            threads = Stat([num(b.get("idle_vcpu_cpu_pct")) for b in ok])
            goal = "-"
            if not g.startswith(("linux", "native")) and per.median is not None:
                goal = "met" if per.median <= IDLE_GOAL_PCT else "**missed**"
            rows.append([summary.label(c, ("backend",) + tuple(a for a in summary.varying() if a != "loadgen")),
                         g, str(n), f"{pct.median / 100:.4f}", pct.fmt(2) + "%", per.fmt(3) + "%",
                         threads.fmt(2) + ("%" if threads.median is not None else ""), goal])
    if not any(vcpus_of(r[1]) > 1 for r in rows):
        return []
    return ["## Idle: what a guest costs the host with nothing to do", "",
            "QEMU's host CPU over the idle sample after boot (IDLE_SECS, in the first IDLE_REPS "
            "repetitions, a second after the first answer): CPU seconds per second idle (median), "
            "% of a core (median (min-max) over the boots sampled), the same per vCPU, and the share "
            "of QEMU's vCPU threads (`CPU N/...`; the rest is its I/O thread and helpers). A guest "
            "that parks its idle CPUs costs little per vCPU; one whose CPUs spin or wake on a timer "
            f"costs a core's share each. Goal (issue 39, the unikernel): at most {IDLE_GOAL_PCT}% of "
            "a core per vCPU.", "",
            md_table(["configuration", "guest", "vCPUs", "CPU s/s", "idle CPU", "per vCPU", "vCPU threads",
                      "goal"], rows), ""]


def sections(summary, out_dir):
    """Both tables' markdown (see the module's docstring)."""
    return counter_section(summary, counter_rows(out_dir)) + idle_section(summary)

