"""cli.py: bench/run's command line.

    bench/run SPEC [NAME=VALUE ...]   run the batch bench/specs/SPEC.toml; a
                                      NAME=VALUE (or the environment variable
                                      NAME) overrides one of its settings
    bench/run --list                  the specs, a line each
    bench/run --show SPEC [NAME=VALUE ...]
                                      the settings a batch would run with, and
                                      its plan, without running it
    bench/run TOOL ARGS               one of TOOLS below (TOOL --help)
Exit: 0 done; 1 the batch ran and a check failed (soak, kvm-stress); 2 bad
settings or usage; 3 refused by the quiet-host guard; 77 soak: no network
namespace could be made here (test 36 skips on it).
"""
import importlib
import sys

from . import spec as specs

# Tools: module (whose main(argv) takes the arguments after the tool's
# name) and what it does.
TOOLS = {
    "summarise": ("runner.report", "write every table of a batch folder again from its records"),
    "loadrun": ("runner.loadrun", "one measured HTTP load run: a row of runs.csv"),
    "hostcpu": ("runner.hostcpu", "the processes that took the most CPU over a few seconds"),
    "placement": ("runner.placement", "check a placement, its cores, or pin QEMU's vCPU thread (test 67)"),
    "experiment": ("runner.experiments", "an experiment of bench/experiments (experiment --help)"),
}


def usage(out):
    print("usage: bench/run SPEC [NAME=VALUE ...] | --list | --show SPEC | TOOL ARGS", file=out)
    print("specs: " + " ".join(specs.names()), file=out)
    print("tools: " + " ".join(TOOLS), file=out)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        usage(sys.stdout if argv else sys.stderr)
        print(__doc__, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "--list":
        for name in specs.names():
            print(f"{name:12} {specs.describe(name)}")
        return 0
    if argv[0] in TOOLS:
        module = importlib.import_module(TOOLS[argv[0]][0])
        return module.main(argv[1:])
    show = argv[0] == "--show"
    if show:
        argv = argv[1:]
        if not argv:
            usage(sys.stderr)
            return 2
    from . import batch
    try:
        spec = specs.load(argv[0], argv[1:])
    except specs.SpecError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    return batch.run(spec, show=show)
