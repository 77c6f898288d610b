"""guard.py: the quiet-host guard every measuring batch passes before it starts.

What a batch measures while other work shares the host's two cores is that
work, so a batch refuses to start when the 1-minute load average is above
MAX_LOAD, says what is running, and bench/run exits 3; FORCE=1 starts it
anyway and the batch records that it was forced.
"""
import re

from . import hostcpu


class Refused(Exception):
    """The host is busy: the batch does not start (exit 3)."""


def check(spec, prefix):
    """The guard's verdict for meta.txt ("passed: ..." or "FORCED: ...") and
    the load averages read (1, 5, 15 min); raises Refused on a busy host,
    SpecError on a bad setting."""
    limit = spec.number("MAX_LOAD")
    force = spec.choice("FORCE", ("0", "1")) == "1"
    path = spec.str("LOADAVG_FILE")
    loads = read_loadavg(path)
    if loads is None:
        from .spec import SpecError
        raise SpecError(f"no load average in {path}")
    l1, l5, l15 = loads
    if float(l1) <= limit:
        return f"passed: 1-minute load average {l1} <= MAX_LOAD {spec.str('MAX_LOAD')} at start", loads
    verdict = (f"FORCED: 1-minute load average {l1} > MAX_LOAD {spec.str('MAX_LOAD')} at start (FORCE=1): "
               "not a quiet-host batch")
    if force:
        return verdict, loads
    lines = [f"refusing to start: the 1-minute load average is {l1} (5 min {l5}, 15 min {l15}),",
             f"above MAX_LOAD={spec.str('MAX_LOAD')}: other work shares the CPUs, and what it takes from QEMU "
             "and the load",
             "generator would be measured as the guests' speed (a quiet host measures 2-5x higher).",
             "what is running now (CPU over 1 s):"]
    lines += ["  " + line for line in hostcpu.busiest_lines(1.0, 5)]
    lines.append("wait for a quiet host, or run with FORCE=1 (the batch is then marked forced).")
    raise Refused("\n".join(f"{prefix}: {line}" for line in lines))


def read_loadavg(path="/proc/loadavg"):
    """(l1, l5, l15) as the strings the file holds, or None."""
    try:
        with open(path) as f:
            fields = f.read().split()
    except OSError:
        return None
    if len(fields) < 3 or not all(re.fullmatch(r"[0-9]+(\.[0-9]+)?", x) for x in fields[:3]):
        return None
    return tuple(fields[:3])
