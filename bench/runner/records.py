#!/usr/bin/env python3
"""benchdata.py: the benchmark's result files and what counts in them.

    bench/benchdata.py header runs|guests     print a CSV header (for bench/run-bench)

Shared by bench/loadrun.py (writes runs.csv rows), bench/summarise.py and
bench/fixes.py (read them); bench/summarise_bulk.py takes its num, Stat and
md_table. Offers
    RUN_FIELDS, GUEST_FIELDS   the columns of runs.csv and guests.csv
    read_runs, read_boots      rows as dicts; files written before the
                               emulator, placement and load-generator columns
                               existed, or before the instruction counts, are
                               read too, with those filled in
    counts(run, include_busy)  whether a run may enter a median, and why not
    counts_insns(run)          whether a run's instructions per request may
                               enter a median
    Results                    runs and boots grouped by configuration
    Stat, md_table, text_table, num, ordered, LOADS, load_label
A run counts only when the load generator finished, every request completed
(no failed one) and every answer was 2xx, and, unless asked, when no other
process took more than the busy threshold of a core during it. Runs that
count but deserve a second look (a listen overflow, a guest whose shutdown
was unclean) are flagged, not dropped. A run under the plugin (plugin 1:
the guest ran under the instruction-counting plugin, bench/run-bench
COUNT=1) never enters a median of requests/s, CPU or latency (the plugin
slows the guest); its instructions per request do, when it finished
cleanly, busy or not (a busy host changes how long an instruction takes,
not how many there are).
Standard library only.
"""
import csv
import statistics
import sys

# Load names in display order, with ab's command line for each: k = keep-alive,
# c = a new connection per request; the number is the concurrency.
LOADS = {
    "k1": "ab -k -c 1",
    "k8": "ab -k -c 8",
    "k64": "ab -k -c 64",
    "c1": "ab -c 1",
    "c16": "ab -c 16",
    "c64": "ab -c 64",
}


def load_label(load, loadgen="ab"):
    """A load as the load generator's command line (wrk: see bench/loadrun.py)."""
    if loadgen != "wrk" or load[:1] not in ("k", "c") or not load[1:].isdigit():
        return LOADS.get(load, load)
    return f"wrk -c {load[1:]}" + ("" if load[0] == "k" else " (Connection: close)")


RUN_FIELDS = ["rep", "backend", "emulator", "placement", "loadgen", "guest", "load", "keepalive",
              "concurrency", "requests", "secs", "rps", "failed", "non2xx", "mean_ms", "p50_ms",
              "p99_ms", "server_cpu_s", "server_cpu_pct", "cpu_us_per_req", "loadgen_cpu_s",
              "others_cpu_pct", "steal_pct", "busy", "listen_overflows", "overflow", "status",
              "plugin", "insns_per_req", "insns_nowait_per_req", "insns_kernel_per_req", "insns_user_per_req"]
GUEST_FIELDS = ["rep", "backend", "emulator", "placement", "guest", "boot_s", "idle_cpu_pct",
                "image_bytes", "status", "plugin"]
# What run-bench wrote before the instruction counts: no plugin column (no
# run was under the plugin) and no instructions.
RUN_FIELDS_V2 = RUN_FIELDS[:RUN_FIELDS.index("plugin")]
GUEST_FIELDS_V2 = GUEST_FIELDS[:GUEST_FIELDS.index("plugin")]
# What run-bench wrote before: no emulator, placement or load-generator
# columns (QEMU 7.2, nothing pinned, ab), no p50, no CPU accounting of others.
RUN_FIELDS_V1 = ["rep", "backend", "guest", "load", "keepalive", "concurrency", "requests", "secs",
                 "rps", "failed", "non2xx", "mean_ms", "p99_ms", "server_cpu_s", "server_cpu_pct",
                 "listen_overflows", "overflow", "status"]
GUEST_FIELDS_V1 = ["rep", "backend", "guest", "boot_s", "idle_cpu_pct", "image_bytes", "status"]
V1_DEFAULTS = {"emulator": "7.2", "placement": "none", "loadgen": "ab", "p50_ms": "",
               "cpu_us_per_req": "", "loadgen_cpu_s": "", "others_cpu_pct": "", "steal_pct": "",
               "busy": "", "plugin": "0"}
NATIVE_EMULATOR = "host"  # the emulator column of a guest that runs without one
BUSY_PCT = 10.0  # others' CPU (% of one core) above which a run is flagged busy


class InputError(Exception):
    """A results folder that cannot be summarised (missing or malformed)."""


def read_csv(path, fields, legacy=()):
    """Rows of a CSV as dicts, after checking its header.

    `legacy` are older headers that are accepted too; their rows get the
    columns they lack from V1_DEFAULTS (and the native guest its emulator).
    """
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            if header != fields and header not in legacy:
                raise InputError(f"{path}: unexpected header {header}")
            rows = list(reader)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from e
    for i, row in enumerate(rows, start=2):
        if None in row or any(v is None for v in row.values()):
            raise InputError(f"{path}:{i}: wrong number of fields")
    if header != fields:
        for row in rows:
            for k in fields:
                row.setdefault(k, V1_DEFAULTS.get(k, ""))
            if row["guest"] == "native":
                row["emulator"] = NATIVE_EMULATOR
            if "cpu_us_per_req" in fields and not row["cpu_us_per_req"]:
                row["cpu_us_per_req"] = per_request_us(row)
    return rows


def read_runs(path):
    return read_csv(path, RUN_FIELDS, (RUN_FIELDS_V2, RUN_FIELDS_V1))


def read_boots(path):
    return read_csv(path, GUEST_FIELDS, (GUEST_FIELDS_V2, GUEST_FIELDS_V1))


def per_request_us(run):
    """Microseconds of server CPU per completed request, as text ('' if unknown)."""
    cpu, req = num(run.get("server_cpu_s")), num(run.get("requests"))
    return f"{cpu * 1e6 / req:.2f}" if cpu is not None and req else ""


def num(text):
    """A float, or None for an empty or unreadable cell."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def ordered(values, order):
    """Distinct values, those named in `order` first, in first-seen order."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    first = [v for i, v in enumerate(order) if v in seen and v not in order[:i]]
    return first + [v for v in seen if v not in first]


def failures(run):
    """Why a run cannot count, whatever the setting ([] when it can)."""
    why = []
    if run["status"] != "ok":
        why.append(run["status"])
    if (num(run["failed"]) or 0) > 0:
        why.append(f"{run['failed']} failed")
    if (num(run["non2xx"]) or 0) > 0:
        why.append(f"{run['non2xx']} non-2xx")
    return why


def is_busy(run):
    return run.get("busy") == "1"


def under_plugin(row):
    """Whether a run or boot was under the instruction-counting plugin."""
    return row.get("plugin") == "1"


def counts(run, include_busy=False):
    """Whether a run may enter a median (of requests/s, CPU, latency)."""
    return not failures(run) and (include_busy or not is_busy(run)) and not under_plugin(run)


def counts_insns(run):
    """Whether a run's instructions per request may enter a median."""
    return under_plugin(run) and not failures(run) and run.get("insns_per_req", "") != ""


class Stat:
    """Median, min, max and count of a list of numbers (None when empty)."""

    def __init__(self, values):
        values = [v for v in values if v is not None]
        self.n = len(values)  # how many values
        self.median = statistics.median(values) if values else None  # their median
        self.low = min(values) if values else None  # the smallest
        self.high = max(values) if values else None  # the largest

    def fmt(self, digits=0, spread=True):
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


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(header, rows):
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


# The axes one batch can alternate besides the guests, in the order a
# configuration is named.
AXES = ("backend", "emulator", "placement", "loadgen")
AXIS_ORDER = {"backend": ["tap", "passt", "user"], "emulator": ["7.2", "10"],
              "placement": ["none", "vcpu0", "vcpu1"], "loadgen": ["ab", "wrk"]}


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


def main(argv):
    if len(argv) == 2 and argv[0] == "header" and argv[1] in ("runs", "guests"):
        print(",".join(RUN_FIELDS if argv[1] == "runs" else GUEST_FIELDS))
        return 0
    print("usage: bench/benchdata.py header runs|guests", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
