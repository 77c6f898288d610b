"""placement.py: which CPU the guest and the load generator run on.

A placement is one of
    none    nothing pinned: the host's scheduler decides
    vcpu0   QEMU's vCPU thread on core A; every other QEMU thread (the main
            loop, which also runs the network back-end: slirp or the tap,
            and QEMU's helpers) and the load generator on core B
    vcpu1   the reverse: the vCPU thread on B, the rest and the load
            generator on A
A and B are the two cores of PIN_CORES (default "0 1"). For the native guest
the server process takes the vCPU's core. QEMU is started under taskset on
the I/O core, so every thread it makes inherits it; the vCPU thread alone is
then moved (tools/qemu-run turns on debug-threads, so it is named "CPU
0/TCG" or "CPU 0/KVM"). It exists before the guest's first instruction and
the pin lands within milliseconds of QEMU's start: the boot's first moments
may run on the I/O core.
"""
import os
import shutil
import sys
import time

from . import procfs
from .spec import SpecError

NAMES = ("none", "vcpu0", "vcpu1")


def cores(pin_cores):
    """PIN_CORES as two distinct usable core numbers, or SpecError."""
    ws = pin_cores.split()
    if len(ws) != 2 or not all(w.isdigit() for w in ws):
        raise SpecError(f"PIN_CORES must be two core numbers, not '{pin_cores}'")
    a, b = int(ws[0]), int(ws[1])
    if a == b:
        raise SpecError("PIN_CORES names one core twice")
    usable = os.sched_getaffinity(0)
    if a not in usable or b not in usable:
        raise SpecError(f"cores {a} and {b} are not both usable here ({os.cpu_count()} online)")
    return a, b


def check(name, pin_cores):
    if name not in NAMES:
        raise SpecError(f"unknown placement '{name}' (none, vcpu0, vcpu1)")
    if name == "none":
        return
    cores(pin_cores)
    if shutil.which("taskset") is None:
        raise SpecError(f"placement {name} needs taskset (util-linux)")


def split(name, pin_cores):
    """(vcpu core, I/O core) of a placement, each None when unpinned."""
    if name == "none":
        return None, None
    a, b = cores(pin_cores)
    return (a, b) if name == "vcpu0" else (b, a)


def prefix(core):
    """The words that run a command on core (none for None)."""
    return [] if core is None else ["taskset", "-c", str(core)]


def vcpu_thread(pid):
    for t in procfs.tasks(pid):
        if (procfs.task_file(pid, t, "comm") or "").startswith("CPU 0/"):
            return t
    return None


def pin_vcpu(pid, core):
    """Waits (5 s at most) for QEMU pid's vCPU thread and pins it to core;
    what each thread is allowed, or raises OSError with what went wrong."""
    tid = None
    for _ in range(500):
        tid = vcpu_thread(pid)
        if tid is not None or not os.path.exists(f"/proc/{pid}"):
            break
        time.sleep(0.01)
    if tid is None:
        raise OSError(f"no vCPU thread ('CPU 0/...') in QEMU {pid}")
    os.sched_setaffinity(tid, {core})
    out = []
    for t in procfs.tasks(pid):
        comm = (procfs.task_file(pid, t, "comm") or "?").strip().replace(" ", "_")
        status = procfs.task_file(pid, t, "status") or ""
        allowed = [ln.split(":", 1)[1].strip() for ln in status.splitlines() if ln.startswith("Cpus_allowed_list:")]
        out.append(f"{comm}={allowed[0] if allowed else '?'}")
    return " ".join(out)


def main(argv):
    """bench/run placement check|split NAME [PIN_CORES], or pin PID NAME
    [PIN_CORES]: the placement's check, its two cores ("VCPU IO", empty
    when unpinned), or the vCPU thread of QEMU PID pinned (for test 67)."""
    if len(argv) < 2 or argv[0] not in ("check", "split", "pin"):
        print("usage: bench/run placement check|split NAME [PIN_CORES] | pin PID NAME [PIN_CORES]", file=sys.stderr)
        return 2
    args = argv[1:]
    pid = int(args.pop(0)) if argv[0] == "pin" else None
    name = args[0] if args else ""
    pin_cores = args[1] if len(args) > 1 else "0 1"
    try:
        check(name, pin_cores)
        vcpu, io = split(name, pin_cores)
        if argv[0] == "split":
            print("" if vcpu is None else f"{vcpu} {io}")
        elif argv[0] == "pin":
            print(pin_vcpu(pid, vcpu))
    except (SpecError, OSError) as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    return 0
