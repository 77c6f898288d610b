"""density.py: a density batch's tables (the density workload; make density).

    bench/run summarise DIR

calls write(DIR) (report/), which reads DIR/steps.csv (a row per step:
runner/workloads/density.py's STEP_FIELDS) and meta.txt, and writes
DIR/summary.md:
  - per configuration (guest and machine): the largest step that served,
    how fast that step's new instances came up, the idle CPU and memory per
    instance there, and why no larger step ran;
  - the issue's goals read against the unikernel's rows: at least 1,000
    instances serving, each answering within 1 s, each at most 0.1% of a
    core when idle (met, or not, or not measured);
  - every step, as measured.
A step "serves" when all its instances came up and the share SHARE of every
instance of its configuration answered the probe in time (its verdict
column). Exit: 0; 2 (InputError) when steps.csv is missing or malformed.
Standard library only.
"""
import os

from ..records import InputError, num, read_csv
from .tables import md_table, parse_meta, read_meta

FIELDS = ["guest", "machine", "mem", "step", "running", "added", "up", "start_s", "starts_per_s", "up_p50_s",
          "up_max_s", "probe_ok", "probe_n", "probe_p50_ms", "probe_p99_ms", "probe_max_ms", "idle_s",
          "idle_pct_per_inst", "host_busy_pct", "qemu_rss_mib", "qemu_pss_mib", "wrap_pss_mib",
          "host_mib_per_inst", "tasks_per_inst", "mem_avail_mib", "load1", "verdict"]
GOAL_INSTANCES = 1000     # the issue's: instances serving at once
GOAL_IDLE_PCT = 0.1       # % of a core per idle instance
GOAL_PROBE_MS = 1000      # each answering within 1 s


def read_steps(out_dir):
    path = os.path.join(out_dir, "steps.csv")
    rows = read_csv(path, FIELDS)
    for i, row in enumerate(rows, start=2):
        if not row["step"].isdigit() or not row["running"].isdigit():
            raise InputError(f"{path}:{i}: step and running must be counts")
    return rows


def cell(v):
    """A table cell: '-' for nothing, a '|' escaped (a verdict may quote qemu-run)."""
    return str(v).replace("|", "\\|") if v not in ("", None) else "-"


def configs(rows):
    """(guest, machine) in the order the batch ran them."""
    out = []
    for r in rows:
        if (r["guest"], r["machine"]) not in out:
            out.append((r["guest"], r["machine"]))
    return out


def best(rows, guest, machine):
    """The largest serving step of a configuration, and its last row."""
    mine = [r for r in rows if (r["guest"], r["machine"]) == (guest, machine)]
    serving = [r for r in mine if r["verdict"] == "serving"]
    return (max(serving, key=lambda r: int(r["running"])) if serving else None), mine[-1]


def goal_lines(rows):
    """The issue's goals against the unikernel's configurations."""
    lines = []
    uk = [c for c in configs(rows) if not c[0].startswith("linux")]
    for guest, machine in uk:
        top, last = best(rows, guest, machine)
        if top is None:
            lines.append(f"- {guest} on {machine}: no step served, so no goal is met "
                         f"(last: {last['verdict']}).")
            continue
        n = int(top["running"])
        worst = num(top["probe_max_ms"])
        idle = num(top["idle_pct_per_inst"])
        at = ("met" if n >= GOAL_INSTANCES else
              f"not met here: {n} served at once; the step after it: {last['verdict'] if last is not top else 'none (MAX)'}")
        lines.append(f"- {guest} on {machine}: >= {GOAL_INSTANCES:,} instances serving at once: {at}.")
        if worst is not None:
            lines.append(f"  Each answering within 1 s at {n}: "
                         f"{'yes' if worst <= GOAL_PROBE_MS else 'no'} (slowest probe {worst:.0f} ms, "
                         f"median {top['probe_p50_ms']} ms).")
        if idle is not None:
            lines.append(f"  Idle CPU <= {GOAL_IDLE_PCT}% of a core each at {n}: "
                         f"{'yes' if idle <= GOAL_IDLE_PCT else 'no'} ({idle:.3f}%).")
    return lines


def write(out_dir):
    rows = read_steps(out_dir)
    meta = parse_meta(read_meta(out_dir))
    lines = ["# Density: instances serving at once", ""]
    for k in ("spec", "date", "git", "host", "guard", "load at start", "load at end", "configs", "memory",
              "serving", "idle", "emulator", "limits"):
        if k in meta:
            lines.append(f"- {k}: {meta[k]}")
    lines += ["", "## What this host kept serving", ""]
    head = ["guest", "machine", "-m", "serving at once", "new instances/s", "launch to answer p50 (s)",
            "probe p50 / max (ms)", "idle CPU each (% of a core)", "host CPU busy (%)", "QEMU Rss / Pss each (MiB)",
            "wrappers' Pss each (MiB)", "host MiB each", "why it stopped"]
    table = []
    for guest, machine in configs(rows):
        top, last = best(rows, guest, machine)
        stop = "every step served (STEPS, MAX)" if top is last else cell(last["verdict"])
        if top is None:
            table.append([guest, machine, last["mem"], "0"] + ["-"] * 8 + [stop])
            continue
        table.append([guest, machine, top["mem"], top["running"], cell(top["starts_per_s"]), cell(top["up_p50_s"]),
                      f"{cell(top['probe_p50_ms'])} / {cell(top['probe_max_ms'])}", cell(top["idle_pct_per_inst"]),
                      cell(top["host_busy_pct"]), f"{cell(top['qemu_rss_mib'])} / {cell(top['qemu_pss_mib'])}",
                      cell(top["wrap_pss_mib"]), cell(top["host_mib_per_inst"]), stop])
    lines += [md_table(head, table), ""]
    lines += ["Serving at once: the largest step at which every instance had come up and the share SHARE of them "
              "answered GET / in time. New instances/s: that step's new instances over the time from its first "
              "launch to its last first answer. Idle CPU: every QEMU's CPU time over the idle sample, per "
              "instance. Host MiB each: MemAvailable's fall since the configuration's first instance, per "
              "instance (kernel memory included).", ""]
    goals = goal_lines(rows)
    if goals:
        lines += ["## Against the issue's goals (unikernel)", ""] + goals + [""]
    lines += ["## Every step", ""]
    head = ["guest", "machine", "step", "running", "up/added", "start (s)", "starts/s", "probe ok", "probe p50/p99/max (ms)",
            "idle % each", "host busy %", "Rss/Pss (MiB)", "host MiB each", "MemAvailable (MiB)", "load", "verdict"]
    table = [[r["guest"], r["machine"], r["step"], r["running"], f"{cell(r['up'])}/{r['added']}", cell(r["start_s"]),
              cell(r["starts_per_s"]), f"{cell(r['probe_ok'])}/{cell(r['probe_n'])}",
              f"{cell(r['probe_p50_ms'])}/{cell(r['probe_p99_ms'])}/{cell(r['probe_max_ms'])}",
              cell(r["idle_pct_per_inst"]), cell(r["host_busy_pct"]),
              f"{cell(r['qemu_rss_mib'])}/{cell(r['qemu_pss_mib'])}", cell(r["host_mib_per_inst"]),
              cell(r["mem_avail_mib"]), cell(r["load1"]), cell(r["verdict"])] for r in rows]
    lines += [md_table(head, table), ""]
    path = os.path.join(out_dir, "summary.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(f"density: {len(rows)} step(s) in {path}")
    return 0
