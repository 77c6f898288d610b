"""loads.py: the HTTP loads, defined once.

A load's name says it: k = keep-alive, c = a new connection per request,
then the concurrency. The http workload runs them under ab or wrk
(loadrun.py), the kvm workload hands them to bench/kvm/exits.sh inside L1 as
NAME:KEEPALIVE:CONCURRENCY words, and the reports show them in this order.
Adding a load is one line here.
"""
from .spec import SpecError

# name -> (keep-alive, concurrency); the order is the tables' order.
HTTP_LOADS = {
    "k1": (True, 1),
    "k8": (True, 8),
    "k64": (True, 64),
    "c1": (False, 1),
    "c16": (False, 16),
    "c64": (False, 64),
}


def ab_label(name):
    keepalive, conc = HTTP_LOADS[name]
    return f"ab {'-k ' if keepalive else ''}-c {conc}"


def check(names, setting="LOADS"):
    for n in names:
        if n not in HTTP_LOADS:
            raise SpecError(f"unknown load '{n}' in {setting} ({' '.join(HTTP_LOADS)})")
    return names


def words(names):
    """NAME:KEEPALIVE:CONCURRENCY words (for scripts that run inside L1)."""
    return [f"{n}:{int(HTTP_LOADS[n][0])}:{HTTP_LOADS[n][1]}" for n in names]
