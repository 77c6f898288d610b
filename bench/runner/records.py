"""records.py: the benchmark's HTTP records and what counts in them.

The record formats the workloads write and report/ reads; nothing to run.
Offers
    RUN_FIELDS, GUEST_FIELDS   the columns of runs.csv (a row per load run,
                               written by loadrun.py) and guests.csv (a row
                               per boot)
    read_runs, read_boots      rows as dicts; files written before the
                               emulator, placement and load-generator columns
                               existed, or before the instruction counts, are
                               read too, with those filled in
    counts(run, include_busy)  whether a run may enter a median, and why not
                               (failures)
    counts_insns(run)          whether a run's instructions per request may
                               enter a median
    console_name(run)          the raw/ name of a run's guest console
    LOADS, load_label, AXES, AXIS_ORDER, NATIVE_EMULATOR, BUSY_PCT, num,
    ordered, InputError
The statistics and tables over these records are report/tables.py's.
A run counts only when the load generator finished, every request completed
(no failed one) and every answer was 2xx, and, unless asked, when no other
process took more than the busy threshold of a core during it. Runs that
count but deserve a second look (a listen overflow, a guest whose shutdown
was unclean) are flagged, not dropped. A run under the plugin (plugin 1:
the guest ran under the instruction-counting plugin, a batch with COUNT=1)
never enters a median of requests/s, CPU or latency (the plugin slows the
guest); its instructions per request do, when it finished cleanly, busy or
not (a busy host changes how long an instruction takes, not how many there
are).
Standard library only.
"""
import csv

from .loads import HTTP_LOADS, ab_label

# Load names in display order (loads.py defines them), with ab's command line
# for each.
LOADS = {name: ab_label(name) for name in HTTP_LOADS}


def load_label(load, loadgen="ab"):
    """A load as the load generator's command line (wrk: see loadrun.py)."""
    if loadgen != "wrk" or load[:1] not in ("k", "c") or not load[1:].isdigit():
        return LOADS.get(load, load)
    return f"wrk -c {load[1:]}" + ("" if load[0] == "k" else " (Connection: close)")


RUN_FIELDS = ["rep", "backend", "emulator", "placement", "loadgen", "guest", "load", "keepalive",
              "concurrency", "requests", "secs", "rps", "failed", "non2xx", "mean_ms", "p50_ms",
              "p99_ms", "server_cpu_s", "server_cpu_pct", "cpu_us_per_req", "loadgen_cpu_s",
              "others_cpu_pct", "steal_pct", "busy", "listen_overflows", "overflow", "status",
              "plugin", "insns_per_req", "insns_nowait_per_req", "insns_kernel_per_req", "insns_user_per_req",
              "insns_nowait_by_cpu"]
GUEST_FIELDS = ["rep", "backend", "emulator", "placement", "guest", "boot_s", "idle_cpu_pct",
                "image_bytes", "status", "plugin", "idle_vcpu_cpu_pct"]
# Before the vCPU threads' share of the idle sample (idle_vcpu_cpu_pct).
GUEST_FIELDS_V3 = GUEST_FIELDS[:GUEST_FIELDS.index("idle_vcpu_cpu_pct")]
# Before the instructions per vCPU (insns_nowait_by_cpu: each vCPU's
# instructions outside the wait loop per request, '/' between vCPUs).
RUN_FIELDS_V3 = RUN_FIELDS[:RUN_FIELDS.index("insns_nowait_by_cpu")]
# What the old driver (bench/run-bench) wrote before the instruction
# counts: no plugin column (no run was under the plugin), no instructions.
RUN_FIELDS_V2 = RUN_FIELDS[:RUN_FIELDS.index("plugin")]
GUEST_FIELDS_V2 = GUEST_FIELDS_V3[:GUEST_FIELDS_V3.index("plugin")]
# What it wrote before that: no emulator, placement or load-generator
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
    return read_csv(path, RUN_FIELDS, (RUN_FIELDS_V3, RUN_FIELDS_V2, RUN_FIELDS_V1))


def read_boots(path):
    return read_csv(path, GUEST_FIELDS, (GUEST_FIELDS_V3, GUEST_FIELDS_V2, GUEST_FIELDS_V1))


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


# The axes one batch can alternate besides the guests, in the order a
# configuration is named.
AXES = ("backend", "emulator", "placement", "loadgen")
AXIS_ORDER = {"backend": ["tap", "passt", "user"], "emulator": ["7.2", "10"],
              "placement": ["none", "vcpu0", "vcpu1"], "loadgen": ["ab", "wrk"]}


def console_name(run):
    """The raw/ name of a run's guest console (REP-BACKEND-GUEST in batches
    from before the emulator and placement columns, whose rows lack `busy`)."""
    if run.get("busy", "") == "":
        return f"{run['rep']}-{run['backend']}-{run['guest']}"
    return "-".join([run["rep"], run["backend"], run["emulator"].replace("/", "_"), run["placement"], run["guest"]])
