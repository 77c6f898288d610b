"""procfs.py: a process's threads and what /proc says of each.

The runner reads /proc for three things: the children of a process (a
native guest's server below its command), the thread QEMU names "CPU 0/..."
(to pin it), and the CPU time of every thread (the idle sample, and the
vCPU threads' share of it). Each reads
/proc/PID/task/TID/NAME, for threads that may end while it reads.
"""
import os


def tasks(pid):
    """The thread ids of pid (none once it has ended)."""
    try:
        return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return []


def task_file(pid, tid, name):
    """The text of /proc/PID/task/TID/NAME, or None once the thread is gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/{name}") as f:
            return f.read()
    except OSError:
        return None


def children(pid, name=None):
    """The pids of pid's children (named name, if given)."""
    out = []
    for t in tasks(pid):
        out += [int(c) for c in (task_file(pid, t, "children") or "").split()]
    return out if name is None else [c for c in out if process_name(c) == name]


def process_name(pid):
    comm = task_file(pid, pid, "comm")
    return comm.strip() if comm is not None else None


def cpu_ns(pid):
    """Nanoseconds on a CPU of pid's live threads (schedstat), None when it
    is gone: the idle sample's clock, finer than /proc's ticks."""
    return cpu_ns_split(pid)[0]


def cpu_ns_split(pid):
    """(all of pid's live threads, those QEMU names "CPU N/..." alone): the
    nanoseconds of cpu_ns, the second the vCPU threads' share; (None, None)
    when it is gone."""
    total, vcpus, seen = 0, 0, False
    for t in tasks(pid):
        s = (task_file(pid, t, "schedstat") or "").split()
        if not s or not s[0].isdigit():
            continue
        seen = True
        total += int(s[0])
        if (task_file(pid, t, "comm") or "").startswith("CPU "):
            vcpus += int(s[0])
    return (total, vcpus) if seen else (None, None)
