"""kvm_stress.py: does the guest ever wedge under KVM (make kvm-stress)?

BOOTS boots of L1, the back-ends taken in turn; in each, bench/kvm/stress.sh
boots the image as L2 and runs REQUESTS new connections at each
concurrency of CONC, then stops it: a boot passes when every ab completed
every request and the guest exited 0. Each boot's console goes to
boot-N.txt, its stress lines and verdict to summary.txt; bench/run exits 1
unless every boot passed. Unguarded: it hunts wedges, it measures nothing.
"""
import os

from ..batch import Step
from ..spec import SpecError
from . import nested


class Workload:
    def __init__(self, spec):
        self.spec = spec
        self.boots = spec.int("BOOTS", 1, 1000)
        self.requests = spec.int("REQUESTS", 1, 10000000)
        self.conc = spec.words("CONC")
        for c in self.conc:
            if not c.lstrip("k").isdigit():
                raise SpecError(f"CONC: '{c}' is not N or kN")
        self.image = spec.str("IMAGE")
        self.backends = spec.words("BACKENDS", ("user", "tap", "vhost"), "back-end")
        if not self.backends:
            raise SpecError("BACKENDS is empty")
        self.l0 = spec.str("L0")
        self.passed = 0

    def plan(self):
        return [Step(f"boot {b} of {self.boots} ({self.backend(b)})", 60 + 0.02 * self.requests * len(self.conc),
                     lambda batch, n=b: self.boot(batch, n)) for b in range(1, self.boots + 1)]

    def backend(self, n):
        return self.backends[(n - 1) % len(self.backends)]

    def summary(self, batch, *lines):
        with open(os.path.join(batch.out, "summary.txt"), "a") as f:
            f.write("".join(line + "\n" for line in lines))

    def start(self, batch):
        batch.meta(f"image {self.image}; boots {self.boots}; requests {self.requests}; conc {' '.join(self.conc)}; "
                   f"backends {' '.join(self.backends)}")

    def boot(self, batch, n):
        backend = self.backend(n)
        out = os.path.join(batch.out, f"boot-{n}.txt")
        rc = nested.run_l1("bench/kvm/stress.sh", [backend, self.image, 1, self.requests] + self.conc, out, 3000,
                           l0=self.l0)
        self.summary(batch, *[f"boot {n} {backend}: " + line[len("kvm: "):]
                              for line in nested.lines_of(out, "kvm: stress:")])
        if rc == 0 and "kvm: stress: 1 rounds passed" in nested.lines_of(out, "kvm: stress: 1 rounds passed"):
            self.passed += 1
            verdict = f"boot {n} ({backend}): passed"
        else:
            verdict = f"boot {n} ({backend}): FAILED (status {rc}; see {out})"
        self.summary(batch, verdict)
        batch.log(verdict)

    def finish(self, batch):
        line = f"{self.passed} of {self.boots} boots passed"
        self.summary(batch, line)
        batch.meta(line)
        batch.log(line)
        return 0 if self.passed == self.boots else 1

    def cleanup(self):
        pass
