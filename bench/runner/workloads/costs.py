"""costs.py: what each primitive costs under TCG 7.2, TCG 10 and nested KVM
(make bench-costs).

Each repetition boots the costs image (bench/images/costs.c) once per
accelerator: under TCG on this host through tools/qemu-run, under KVM
inside L1 (bench/kvm/costs.sh). It prints a "cost:" line per primitive and
"costs: done" at its end; each boot's lines go to raw/ACCEL-REP.txt and the
costs report takes medians over the repetitions.
"""
import os
import re
import subprocess

from ..batch import Step
from ..spec import ROOT
from . import nested

ACCELS = ("tcg-7.2", "tcg-10", "kvm")
COST_LINE = re.compile(r"^costs?: ")


class Workload:
    def __init__(self, spec):
        self.spec = spec
        self.reps = spec.int("REPS", 1, 50)
        self.rounds = spec.int("ROUNDS", 1, 1000000)
        self.build = os.environ.get("BUILD", "build")

    def plan(self):
        return [Step(f"{accel} rep {rep}", 40 if accel.startswith("tcg") else 120,
                     lambda b, a=accel, r=rep: self.boot(b, a, r))
                for rep in range(1, self.reps + 1) for accel in ACCELS]

    def start(self, batch):
        lines = [f"reps {self.reps} rounds {self.rounds}"]
        for emu in ("7.2", "10"):
            p = subprocess.run(["tools/qemu-run", "--version"], cwd=ROOT, capture_output=True, text=True,
                               env=dict(os.environ, QEMU=emu))
            if p.returncode == 0:
                lines.append(f"emulator {emu}: {p.stdout.strip()}")
        batch.meta(*lines)

    def boot(self, batch, accel, rep):
        path = os.path.join(batch.raw, f"{accel}-{rep}.txt")
        if accel == "kvm":
            whole = path + ".l1"
            nested.run_l1("bench/kvm/costs.sh", [1, self.rounds], whole, 600)
            with open(whole, errors="replace") as f:
                text = f.read()
            os.unlink(whole)
            start, end = text.find("costs-run"), text.find("costs-end")
            lines = text[start:end].splitlines() if start >= 0 else []
        else:
            p = subprocess.run(["tools/qemu-run", "--net", "user", "--timeout", "300", "--append",
                                f"quiet -- {self.rounds}", f"{self.build}/loader/loader.elf",
                                f"{self.build}/apps/costs.elf"], cwd=ROOT, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=dict(os.environ, QEMU=accel[4:]))
            lines = p.stdout.decode("utf-8", "replace").replace("\r", "").splitlines()
        kept = [line for line in lines if COST_LINE.match(line)]
        with open(path, "w") as f:
            f.write("".join(line + "\n" for line in kept))
        if "costs: done" not in kept:
            batch.log(f"{accel} rep {rep} did not finish (see {path})")
        batch.log(f"{accel} rep {rep}: {sum(1 for line in kept if line.startswith('cost:'))} primitives")

    def finish(self, batch):
        return nested.summarise_and_show(batch, "costs.md")

    def cleanup(self):
        pass
