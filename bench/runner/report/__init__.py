"""report: every table of a batch, from its records.

    bench/run summarise [--ref GUEST] [--include-busy] [--no-chart] [--kind KIND] DIR

writes DIR's tables again from the records its workload left there; the
batch runner calls summarise(DIR, ...) when a batch ends. The batch's kind
comes from meta.txt's `workload: KIND` line (and `spec: fixes`, an http
batch that gets the fixes report too); in a folder from before those lines,
from its files: runs.csv and guests.csv an http batch (fixes, when the
folder's name begins fixes-), a runs.csv with bulk columns a bulk batch,
raw/l1-*.txt (or a runs.csv of kvm.py's) a kvm one, raw/*.txt with cost
lines (or a costs.md) a costs one. --kind forces it (fixes: http and the
fixes report). What each kind gets:
    http      counters.csv from raw/*.counters where there are any
              (counters.py); summary.md and chart.* (http.py)
    fixes     the same, then trace.md (reqtrace.py) and fixes.md and
              fixes.* (fixes.py)
    bulk      summary.md (bulk.py)
    kvm       summary.md and runs.csv (kvm.py)
    costs     costs.md (costs.py)
    density   summary.md from steps.csv (density.py)
    boot      summary.md (boot.py)
    soak, kvm-stress
              none here: their workloads write their reports as they run
--ref is the guest the ratios are taken against (http: default the batch's
own, from meta.txt; bulk: default linux); --include-busy counts runs other
processes disturbed; --no-chart draws no PNG. The shared statistics and
markdown are tables.py's.
Exit: 0 done; 1 a kvm or costs batch with no record in raw/; 2 no batch,
unreadable records or bad usage. Standard library only.
"""
import argparse
import csv
import glob
import os
import sys

from ..records import InputError
from . import boot, bulk, costs, counters, density, fixes, http, kvm, reqtrace
from .tables import parse_meta, read_batch, read_meta

KINDS = ("http", "fixes", "bulk", "kvm", "costs", "boot", "density", "soak", "kvm-stress")


def is_fixes(name):
    """A fixes spec's or folder's name: fixes, or fixes-..."""
    return name == "fixes" or name.startswith("fixes-")


def kind_of(out_dir):
    """The kind of the batch in out_dir (one of KINDS), None when nothing
    there says."""
    meta = parse_meta(read_meta(out_dir))
    workload, spec = meta.get("workload"), (meta.get("spec", "").split() or [""])[0]
    if workload:
        return "fixes" if workload == "http" and is_fixes(spec) else workload
    if glob.glob(os.path.join(out_dir, "raw", "l1-*.txt")):
        return "kvm"
    try:
        with open(os.path.join(out_dir, "runs.csv"), newline="") as f:
            header = next(csv.reader(f), [])
    except OSError:
        header = None
    if header is not None:
        if header in (bulk.FIELDS, bulk.FIELDS_V2, bulk.FIELDS_V1):
            return "bulk"
        if header[:3] == ["backend", "guest", "load"]:  # what kvm.py writes
            return "kvm"
        return "fixes" if is_fixes(os.path.basename(os.path.normpath(out_dir))) else "http"
    if costs.has_costs(out_dir) or os.path.exists(os.path.join(out_dir, "costs.md")):
        return "costs"
    if glob.glob(os.path.join(out_dir, "boot-*.txt")) and os.path.exists(os.path.join(out_dir, "summary.txt")):
        return "kvm-stress"
    if os.path.exists(os.path.join(out_dir, "loads.tsv")):
        return "soak"
    if os.path.exists(os.path.join(out_dir, boot.BOOTS)):
        return "boot"
    return None


def http_tables(out_dir, kind, ref, include_busy, chart):
    if glob.glob(os.path.join(out_dir, "raw", "*.counters")):
        n = counters.write_csv(out_dir)
        print(f"counters: {n} row(s) in {os.path.join(out_dir, 'counters.csv')}")
    runs, boots, meta = read_batch(out_dir)
    http.write(out_dir, runs, boots, meta, ref, include_busy, chart)
    if kind == "fixes":
        reqtrace.write(out_dir)
        fixes.write(out_dir, runs, boots, meta, include_busy, chart)
    return 0


def summarise(out_dir, kind=None, ref=None, include_busy=False, chart=True):
    """Writes every table of the batch in out_dir (kind: one of KINDS, or
    None to tell it from the folder); returns the exit status (see above).
    Prints what it wrote, and errors on stderr."""
    if not os.path.isdir(out_dir):
        print(f"summarise: {out_dir}: no such folder", file=sys.stderr)
        return 2
    kind = kind or kind_of(out_dir)
    if kind is None:
        print(f"summarise: {out_dir}: no records to summarise (runs.csv, raw/l1-*.txt, raw/*.txt with cost "
              "lines) and no `workload:` line in meta.txt (--kind KIND)", file=sys.stderr)
        return 2
    try:
        if kind in ("http", "fixes"):
            return http_tables(out_dir, kind, ref, include_busy, chart)
        if kind == "bulk":
            bulk.write(out_dir, ref)
            return 0
        if kind == "kvm":
            return kvm.write(out_dir)
        if kind == "costs":
            return costs.write(out_dir)
        if kind == "density":
            return density.write(out_dir)
        if kind == "boot":
            return boot.write(out_dir)
    except InputError as e:
        print(f"summarise: {e}", file=sys.stderr)
        return 2
    if kind in ("soak", "kvm-stress"):
        print(f"summarise: a {kind} batch: its workload wrote its report as it ran; no table to write again")
        return 0
    print(f"summarise: {out_dir}: unknown kind {kind!r} (one of {', '.join(KINDS)})", file=sys.stderr)
    return 2


def main(argv):
    ap = argparse.ArgumentParser(prog="bench/run summarise",
                                 description="Write every table of a batch folder again from its records.")
    ap.add_argument("--ref", help="the guest ratios are taken against (http: default the batch's own, else the "
                                  "first guest that is neither native nor native-*; bulk: default linux)")
    ap.add_argument("--include-busy", action="store_true",
                    help="count runs that other processes disturbed (flagged busy) in medians")
    ap.add_argument("--no-chart", action="store_true", help="skip the PNGs")
    ap.add_argument("--kind", choices=KINDS, help="the batch's kind, instead of telling it from the folder")
    ap.add_argument("dir")
    args = ap.parse_args(argv)
    return summarise(args.dir, args.kind, args.ref, args.include_busy, not args.no_chart)
