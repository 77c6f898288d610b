"""experiments: measurements that answer one question each, run by hand on a
quiet host (bench/experiments/README.md); not tests, not batches.

    bench/run experiment NAME [ARGS...]     NAME's main(ARGS)
    bench/run experiment --help             the experiments, a line each

Each module's docstring says what it measures, its arguments and what it
writes. The shell halves (bench/experiments/layouts.sh, notify.sh,
hostevents/ab) stay in bench/experiments/.
"""
import importlib
import os
import sys

# The repository's root: the experiments run tools/, build/ and bench/ by path.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# Name -> (module, what it answers).
EXPERIMENTS = {
    "drift": ("drift", "how far one build's speed moves with nothing but time changing"),
    "layouts": ("layouts", "an http batch of layouts.sh's images, per commit over layouts"),
    "hostevents": ("hostevents", "what the host did per request (perf stat -a around ab), as counts"),
    "plugin-cost": ("plugin_cost", "what the instruction-counting plugin costs a guest"),
    "counters": ("counters", "the guest's own counters per request in an http batch, per guest and load"),
}


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        out = sys.stdout if argv else sys.stderr
        print("usage: bench/run experiment NAME [ARGS...]", file=out)
        for name, (_, what) in EXPERIMENTS.items():
            print(f"  {name:12} {what}", file=out)
        return 0 if argv else 2
    name = argv[0].replace("_", "-")
    if name not in EXPERIMENTS:
        print(f"experiment: no experiment {argv[0]!r} (one of {', '.join(EXPERIMENTS)})", file=sys.stderr)
        return 2
    module = importlib.import_module(f".{EXPERIMENTS[name][0]}", __name__)
    return module.main(argv[1:])
