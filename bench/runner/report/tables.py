"""tables.py: what every table of a batch shares: the statistics, the
grouping of runs by configuration, the markdown, the batch's header, the
charts.

Imported by the table modules of report/ (and the experiments); nothing to
run. Offers
    Stat, fmt_ratio, fmt_x, md_table, text_table   a list of numbers as
                               median (min-max), ratios, tables
    num                        a cell as a float (records.num)
    Results                    an HTTP batch's runs and boots grouped by
                               configuration (back-end, emulator, placement,
                               load generator): the cells, their marks, the
                               runs to read with care
    read_batch, read_meta, parse_meta, batch_header
                               runs.csv, guests.csv and meta.txt, and the
                               lines that say what kind of batch it was
    terminal, draw_chart, chart_cells
                               gnuplot: its terminal line, and NAME.dat,
                               NAME.gp and NAME.png in the batch's folder
Standard library only.
"""
import os
import shutil
import statistics
import subprocess
import sys

from ..records import (AXES, AXIS_ORDER, BUSY_PCT, LOADS, NATIVE_EMULATOR, InputError, counts,
                       counts_insns, failures, is_busy, num, ordered, read_boots, read_runs, under_plugin)

__all__ = ["Stat", "fmt_ratio", "fmt_x", "md_table", "text_table", "num", "Results", "read_batch",
           "read_meta", "parse_meta", "batch_header", "terminal", "draw_chart", "chart_cells"]


class Stat:
    """Median, min, max and count of a list of numbers (None when empty)."""

    def __init__(self, values):
        values = [v for v in values if v is not None]
        self.n = len(values)  # how many values
        self.median = statistics.median(values) if values else None  # their median
        self.low = min(values) if values else None  # the smallest
        self.high = max(values) if values else None  # the largest

    def fmt(self, digits=0, spread=True):
        """'median (min-max)', the spread only for more than one value; '-' for none."""
        if self.median is None:
            return "-"
        text = f"{self.median:.{digits}f}"
        if spread and self.n > 1:
            text += f" ({self.low:.{digits}f}-{self.high:.{digits}f})"
        return text


def fmt_ratio(v):
    """A ratio with the digits that matter at its size, '-' when unknown."""
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def fmt_x(v):
    """A ratio as xN, '-' when unknown."""
    return "-" if v is None else f"x{fmt_ratio(v)}"


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(header, rows):
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


# ---- an HTTP batch, grouped -------------------------------------------------
class Results:
    """The runs and boots of one results folder, grouped by configuration.

    A configuration is one value on each axis (back-end, emulator,
    placement, load generator). The native guest runs without an emulator:
    its runs belong to every emulator's configuration. Counted runs (under
    the instruction-counting plugin) are kept apart: cell_runs and stat see
    the timed ones, insns_runs and insns_stat those under the plugin.
    """

    def __init__(self, runs, boots, include_busy=False):
        self.runs = runs  # runs.csv rows
        self.boots = boots  # guests.csv rows
        self.include_busy = include_busy  # busy runs enter medians too
        self.values = {}  # axis -> its values in this batch, in display order
        for axis in AXES:
            seen = [r[axis] for r in runs + boots if axis in r]
            if axis == "emulator":
                seen = [v for v in seen if v != NATIVE_EMULATOR] or [NATIVE_EMULATOR]
            self.values[axis] = ordered(seen, AXIS_ORDER[axis])
        self.loads = ordered([r["load"] for r in runs], list(LOADS))
        self.unclean_boots = {self.boot_key(b) for b in boots if b["status"] == "unclean_stop"}
        self.has_insns = any(counts_insns(r) for r in runs)  # some run under the plugin has instructions

    @staticmethod
    def boot_key(row):
        return (row["rep"], row["backend"], row["emulator"], row["placement"], row["guest"])

    def configs(self):
        """Every configuration, as dicts axis -> value, in display order."""
        out = [{}]
        for axis in AXES:
            out = [dict(c, **{axis: v}) for c in out for v in self.values[axis]]
        return out

    def varying(self):
        """The axes with more than one value (besides the back-end)."""
        return [a for a in AXES[1:] if len(self.values[a]) > 1]

    def label(self, config, axes=AXES):
        names = {"backend": "back-end `{}`", "emulator": "QEMU {}", "placement": "placement {}",
                 "loadgen": "{}"}
        return ", ".join("no emulator" if a == "emulator" and config[a] == NATIVE_EMULATOR
                         else names[a].format(config[a]) for a in axes if a in config)

    def matches(self, row, config):
        for axis, v in config.items():
            if axis not in row:
                continue
            if axis == "emulator" and row[axis] == NATIVE_EMULATOR:
                continue
            if row[axis] != v:
                return False
        return True

    def cell_runs(self, config, guest, load):
        """Every timed run of a guest at a load in a configuration, whether
        it counts or not."""
        return [r for r in self.runs if r["guest"] == guest and r["load"] == load
                and self.matches(r, config) and not under_plugin(r)]

    def insns_runs(self, config, guest, load):
        """The runs under the plugin of a guest at a load whose instructions count."""
        return [r for r in self.runs if r["guest"] == guest and r["load"] == load
                and self.matches(r, config) and counts_insns(r)]

    def insns_stat(self, config, guest, load, field="insns_nowait_per_req"):
        return Stat([num(r[field]) for r in self.insns_runs(config, guest, load)])

    def counted(self, config, guest, load):
        return [r for r in self.cell_runs(config, guest, load) if counts(r, self.include_busy)]

    def stat(self, config, guest, load, field):
        return Stat([num(r[field]) for r in self.counted(config, guest, load)])

    def unclean_stop(self, run):
        return self.boot_key(run) in self.unclean_boots

    def marks(self, config, guest, load):
        """[n=K/M] when only K of M runs count; ! a listen overflow; ~ an
        unclean shutdown."""
        mine = self.cell_runs(config, guest, load)
        used = self.counted(config, guest, load)
        text = f" [n={len(used)}/{len(mine)}]" if mine and len(used) < len(mine) else ""
        if any(r["overflow"] == "1" for r in used):
            text += " !"
        if any(self.unclean_stop(r) for r in used):
            text += " ~"
        return text

    def with_care(self, runs, unclean, overflow=True):
        """[(run, [why], under the plugin)]: the runs that did not count and
        those counted with a warning (a busy one under --include-busy, an
        unclean shutdown, `unclean` its words; with `overflow`, a listen
        overflow). A run under the plugin is read for its instructions
        only, busy or not: listed when it failed or has no count."""
        out = []
        for r in runs:
            if r["status"] == "no_boot":
                continue  # reported once, with the boot
            why = failures(r)
            if under_plugin(r):
                if why or not r.get("insns_per_req"):
                    out.append((r, why or ["no instruction count"], True))
                continue
            if is_busy(r):
                why.append(f"busy: others took {r['others_cpu_pct']}% of a core"
                           + (" (counted)" if self.include_busy and not why else ""))
            if overflow and r["overflow"] == "1":
                why.append(f"listen overflow ({r['listen_overflows']} drops)")
            if self.unclean_stop(r):
                why.append(unclean)
            if why:
                out.append((r, why, False))
        return out

    @staticmethod
    def bad_boots(boots, label):
        """A line per boot that did not end well: `label(boot)`: its status."""
        return [f"rep {b['rep']} {label(b)}: {b['status']}" + (" (under the plugin)" if under_plugin(b) else "")
                for b in boots if b["status"] != "ok"]


# ---- the batch's files and header -------------------------------------------
def read_meta(out_dir):
    """meta.txt's text, '' when there is none."""
    try:
        with open(os.path.join(out_dir, "meta.txt")) as f:
            return f.read()
    except OSError:
        return ""


def read_batch(out_dir):
    """(runs, boots, meta) of an HTTP batch: runs.csv's and guests.csv's rows
    and meta.txt's text. InputError when a CSV is missing or malformed or
    no run was recorded."""
    runs = read_runs(os.path.join(out_dir, "runs.csv"))
    boots = read_boots(os.path.join(out_dir, "guests.csv"))
    if not runs:
        raise InputError("no runs recorded")
    return runs, boots, read_meta(out_dir)


def parse_meta(meta):
    """meta.txt's `key: value` lines as a dict (the first of each key)."""
    out = {}
    for line in meta.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key not in out:
            out[key] = value.strip()
    return out


def batch_header(meta, runs, include_busy=False):
    """What kind of batch this was, in a few lines: the guard's verdict, the
    load average at start and end, and how many runs were flagged busy."""
    m = parse_meta(meta)
    out = []
    guard = m.get("guard", "")
    if guard.startswith("FORCED"):
        out.append(f"**FORCED batch, not a quiet host:** {guard[len('FORCED: '):]}.")
    elif guard:
        out.append(f"Quiet-host guard {guard}.")
    else:
        out.append("Quiet-host guard: not recorded (a batch from before the guard).")
    start, end = m.get("load at start", ""), m.get("load at end", "")
    if not start:
        host = m.get("host", "")
        start = host.split("load ")[-1] if "load " in host else "?"
    out.append(f"Load average (1, 5, 15 min) at start: {start}; at end: {end or '?'}.")
    measured = [r for r in runs if r.get("busy") in ("0", "1") and not under_plugin(r)]
    if measured:
        busy = [r for r in measured if is_busy(r)]
        threshold = m.get("busy", "").split("more than ")[-1].split("%")[0] or f"{BUSY_PCT:g}"
        what = "counted anyway (--include-busy)" if include_busy else "left out of the medians"
        out.append(f"Flagged busy: {len(busy)} of {len(measured)} runs (other processes took more "
                   f"than {threshold}% of a core){'; ' + what if busy else ''}.")
    else:
        out.append("Flagged busy: not measured (a batch from before the CPU accounting).")
    reps = sorted({r["rep"] for r in runs if under_plugin(r)}, key=int)
    if reps:
        which = reps[0] if len(reps) == 1 else f"{reps[0]}-{reps[-1]}"
        out.append(f"Under the instruction-counting plugin: {sum(under_plugin(r) for r in runs)} runs "
                   f"(repetition {which}), read for their instructions only (their requests/s are the plugin's).")
    return out


# ---- charts ---------------------------------------------------------------
def has_cairo():
    try:
        out = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "pngcairo" in out.stdout + out.stderr


def terminal(width, height, font):
    """gnuplot's terminal line: pngcairo where gnuplot has it, else png."""
    if has_cairo():
        return f"set terminal pngcairo size {width},{height} font '{font}'"
    return f"set terminal png size {width},{height}"


def chart_cells(stat):
    """A Stat as a chart's median, min and max (NaN when it has none)."""
    return ["NaN"] * 3 if stat.median is None else [f"{stat.median:.1f}", f"{stat.low:.1f}", f"{stat.high:.1f}"]


def draw_chart(out_dir, name, data, script):
    """Writes NAME.dat (the numbers, `data`) and, where gnuplot is, NAME.gp
    (script(dat path, png path)) and NAME.png. A chart that fails is a
    warning: the tables stand without it."""
    dat, png = os.path.join(out_dir, f"{name}.dat"), os.path.join(out_dir, f"{name}.png")
    with open(dat, "w") as f:
        f.write(data)
    if not shutil.which("gnuplot"):
        print("summarise: gnuplot not found, no chart", file=sys.stderr)
        return
    text = script(dat, png)
    with open(os.path.join(out_dir, f"{name}.gp"), "w") as f:
        f.write(text)
    r = subprocess.run(["gnuplot"], input=text, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        print(f"summarise: warning: gnuplot failed, no chart: {r.stderr.strip()}", file=sys.stderr)
