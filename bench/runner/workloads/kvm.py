"""kvm.py: VM exits per request, by reason, under nested KVM (make bench-kvm).

REPS boots of L1, each running bench/kvm/exits.sh once over every back-end,
guest and load (L2's exits, interrupts and our kernel's counters around each
load); its output, with the repetition's number put in, goes to
raw/l1-REP.txt, and the kvm report takes medians over the repetitions.
Requests/s measured there are L1-bound (L1 runs under TCG): the exit counts
are the figures that carry to a KVM host.
"""
import os
import re

from .. import hostlib, loads
from ..batch import Step
from ..spec import SpecError
from . import nested

SCENARIO = "bench/kvm/exits.sh"
BACKENDS = ("vhost", "vhostpoll", "tap", "user")


class Workload:
    def __init__(self, spec):
        self.spec = spec
        self.reps = spec.int("REPS", 1, 50)
        self.requests = spec.int("REQUESTS", 1, 10000000)
        self.backends = spec.words("BACKENDS", BACKENDS, "back-end")
        self.guests = spec.words("GUESTS")
        for g in self.guests:
            if not re.fullmatch(r"[A-Za-z0-9._-]+=(linux|uk:[^,: ]+(:[^, ]+)?)", g):
                raise SpecError(f"guest '{g}' in GUESTS: not NAME=uk:IMAGE[:OPTIONS] or NAME=linux")
        self.loads = loads.check(spec.words("LOADS"))

    def plan(self):
        cells = len(self.guests) * len(self.backends) * len(self.loads)
        secs = 120 + cells * 15 * self.requests / 2000  # a rough guess: the progress line scales it
        return [Step(f"L1 boot {rep} of {self.reps}", secs, lambda b, r=rep: self.boot(b, r))
                for rep in range(1, self.reps + 1)]

    def start(self, batch):
        lines = [f"reps {self.reps} requests {self.requests} backends {','.join(self.backends)} guests "
                 f"{','.join(self.guests)} loads {','.join(self.loads)}",
                 f"L1: {nested.dry_run(SCENARIO)}"]
        for g in self.guests:
            name, kind = g.split("=", 1)
            if kind.startswith("uk:"):
                image = kind[3:].split(":")[0]
                flags = os.path.join("build", image[:-4] + ".flags")
                if os.path.isfile(flags):
                    lines.append(f"image {name}: build/{kind[3:]}: {hostlib.image_flags(flags)}")
        batch.meta(*lines)

    def boot(self, batch, rep):
        out = os.path.join(batch.raw, f"l1-{rep}.txt")
        mark = re.compile(r"^(run|delta|hist|dump|stopped) 1 ")
        nested.run_l1(SCENARIO, [1, self.requests, ",".join(self.backends), ",".join(self.guests),
                                 ",".join(loads.words(self.loads))], out, 3000,
                      rewrite=lambda line: mark.sub(lambda m: f"{m.group(1)} {rep} ", line))
        if not nested.lines_of(out, "kvm: exits done"):
            batch.log(f"L1 boot {rep} did not finish (see {out})")

    def finish(self, batch):
        return nested.summarise_and_show(batch, "summary.md")

    def cleanup(self):
        pass
