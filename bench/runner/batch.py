"""batch.py: one batch run from its spec.

The steps, in order: the workload checks the settings and lays out its plan
(a list of steps, each a labelled piece of work with an estimate of its
seconds); the quiet-host guard (guard.py) decides whether it may start; the
results folder gets meta.txt's opening lines (which spec, which settings,
git, host, load, the guard's verdict) and the workload's own; the steps run
in order with a progress line each (what runs, how far, how long is left)
on the terminal and every message in OUT/batch.log; the workload closes
meta.txt and writes its tables (report/). INT or TERM stops the batch
between or inside a step, the workload's cleanup runs either way (a guest
killed, a namespace removed), and bench/run exits 130.
"""
import importlib
import os
import platform
import signal
import subprocess
import sys
import time

from . import guard
from .spec import ROOT, SpecError


class Step:
    """One piece of a plan: .label (what the progress line says), .secs (the
    workload's estimate, for the time left), .run (a callable taking the
    batch)."""

    def __init__(self, label, secs, run):
        self.label, self.secs, self.run = label, secs, run


class Batch:
    """What a running batch gives its workload: .spec, .out, .raw (OUT/raw),
    .meta_path, log(msg), meta(line), .t_start."""

    def __init__(self, spec, prefix):
        self.spec, self.prefix = spec, prefix
        self.out = spec.out
        self.raw = os.path.join(self.out, "raw")
        self.meta_path = os.path.join(self.out, "meta.txt")
        self.log_path = os.path.join(self.out, "batch.log")
        self.t_start = time.monotonic()

    def log(self, msg):
        line = f"{self.prefix}: {msg}"
        print(line, file=sys.stderr, flush=True)
        with open(self.log_path, "a") as f:
            f.write(time.strftime("%H:%M:%S ") + line + "\n")

    def meta(self, *lines):
        with open(self.meta_path, "a") as f:
            for line in lines:
                f.write(line + "\n")

    def took(self):
        return time.monotonic() - self.t_start


def git_line():
    def git(*args):
        p = subprocess.run(["git"] + list(args), cwd=ROOT, capture_output=True, text=True)
        return p.stdout if p.returncode == 0 else ""
    head = git("rev-parse", "--short", "HEAD").strip() or "none"
    dirty = " ".join(line.split()[1] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()
                     if len(line.split()) > 1)
    return head + (f" (images built with uncommitted changes in: {dirty})" if dirty else "")


def fmt_secs(s):
    s = int(s + 0.5)
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def load_workload(spec):
    try:
        module = importlib.import_module(f"runner.workloads.{spec.workload.replace('-', '_')}")
    except ModuleNotFoundError:
        raise SpecError(f"{spec.path}: no workload '{spec.workload}' (runner/workloads/)") from None
    return module.Workload(spec)


def run(spec, show=False):
    prefix = spec.name
    try:
        workload = load_workload(spec)
        steps = workload.plan()
    except SpecError as e:
        print(f"{prefix}: {e}", file=sys.stderr)
        return 2
    if show:
        print(f"spec {spec.name} ({spec.path}): {spec.description}")
        print(f"workload {spec.workload}; out {spec.out}")
        for k in sorted(spec.settings):
            print(f"  {k}={spec.settings[k]}{'   (given)' if k in spec.given else ''}")
        total = sum(s.secs for s in steps)
        print(f"{len(steps)} steps, about {fmt_secs(total)}:")
        for i, s in enumerate(steps, 1):
            print(f"  {i:4} {s.label}")
        return 0
    verdict, loads = "none (this spec runs unguarded)", guard.read_loadavg() or ("?", "?", "?")
    if spec.guard:
        try:
            verdict, loads = guard.check(spec, prefix)
        except guard.Refused as e:
            print(e, file=sys.stderr)
            return 3
        except SpecError as e:
            print(f"{prefix}: {e}", file=sys.stderr)
            return 2
        if verdict.startswith("FORCED"):
            print(f"{prefix}: {verdict}", file=sys.stderr)
    try:
        os.makedirs(os.path.join(spec.out, "raw"), exist_ok=True)
    except OSError as e:
        print(f"{prefix}: cannot create {spec.out}: {e}", file=sys.stderr)
        return 2
    batch = Batch(spec, prefix)
    batch.meta(f"spec: {spec.name} ({os.path.relpath(spec.path, ROOT)})",
               f"workload: {spec.workload}",
               "settings: " + " ".join(f"{k}={spec.settings[k]!r}" if " " in spec.settings[k] or not spec.settings[k]
                                       else f"{k}={spec.settings[k]}" for k in sorted(spec.settings)),
               f"date: {time.strftime('%Y-%m-%dT%H:%M:%S%z')}",
               f"git: {git_line()}",
               f"host: {platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} cpus",
               f"load at start: {' '.join(loads)}",
               f"guard: {verdict}")

    def interrupted(signum, frame):
        raise KeyboardInterrupt
    old = {s: signal.signal(s, interrupted) for s in (signal.SIGINT, signal.SIGTERM)}
    rc = 0
    try:
        workload.start(batch)
        total = sum(s.secs for s in steps) or 1.0
        done_est = 0.0
        batch.log(f"results in {spec.out}; {len(steps)} steps, about {fmt_secs(total)}")
        for i, step in enumerate(steps, 1):
            took = batch.took()
            left = (total - done_est) * (took / done_est if done_est > 0 else 1.0)
            batch.log(f"[{i}/{len(steps)}, {fmt_secs(took)} in, ~{fmt_secs(left)} left] {step.label}")
            step.run(batch)
            done_est += step.secs
        l1, l5, l15 = guard.read_loadavg(spec.settings.get("LOADAVG_FILE", "/proc/loadavg")) or ("?", "?", "?")
        batch.meta(f"load at end: {l1} {l5} {l15}")
        rc = workload.finish(batch)
        batch.meta(f"took: {batch.took():.2f}s")
        batch.log(f"done in {fmt_secs(batch.took())}; results in {spec.out}")
    except KeyboardInterrupt:
        batch.log("interrupted")
        rc = 130
    finally:
        workload.cleanup()
        for s, h in old.items():
            signal.signal(s, h)
    return rc
