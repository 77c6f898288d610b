"""nested.py: a scenario run inside the nested-KVM host (L1), for the kvm,
costs and kvm_stress workloads.

tools/nested/run-l1 boots L1 (Debian's kernel under TCG with an emulated SVM
CPU) and runs a scenario of bench/kvm/ there; L1's console is run-l1's
output. This runs it bounded, keeps that output (carriage returns dropped,
as L1's serial console writes them) in a file, and returns run-l1's status.
"""
import os
import subprocess

from ..spec import ROOT


def run_l1(scenario, args, out_path, timeout=3000, l0="", rewrite=None, files=(), silence=None):
    """run-l1 --timeout TIMEOUT [--l0 L0] [--file F...] [--silence S] SCENARIO
    -- ARGS into out_path, each line through rewrite (if given); run-l1's
    exit status. files: more files of the repository (relative paths) to
    carry into L1. silence: stop an L1 that printed nothing (not even its
    init's heartbeat) for that many seconds: L1 itself stopped."""
    cmd = ["tools/nested/run-l1"] + (["--l0", l0] if l0 else [])
    if silence:
        cmd += ["--silence", str(silence)]
    for f in files:
        cmd += ["--file", f]
    cmd += ["--timeout", str(timeout), scenario, "--"]
    cmd += [str(a) for a in args]
    with open(out_path, "w") as out:
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            for raw in p.stdout:
                line = raw.decode("utf-8", "replace").replace("\r", "")
                out.write(rewrite(line) if rewrite else line)
        finally:
            if p.poll() is None:
                p.terminate()
            rc = p.wait()
    return rc


def lines_of(path, prefix):
    """The lines of path that begin with prefix."""
    with open(path, errors="replace") as f:
        return [line.rstrip("\n") for line in f if line.startswith(prefix)]


def dry_run(scenario):
    p = subprocess.run(["tools/nested/run-l1", "--dry-run", scenario], cwd=ROOT, capture_output=True, text=True)
    return p.stdout[:300]


def summarise_and_show(batch, table):
    """The batch's tables (report/), then the one named table printed, as
    the nested batches end."""
    from .. import report
    report.summarise(batch.out)
    path = os.path.join(batch.out, table)
    if os.path.isfile(path):
        with open(path) as f:
            print(f.read(), end="")
    return 0
