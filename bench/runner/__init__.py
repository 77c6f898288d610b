"""runner: the benchmark, as one package.

A batch is a spec (bench/specs/NAME.toml: which guests, machines, back-ends,
emulators, placements and workloads, how many repetitions, in what order,
under which guards) run by batch.py; a workload (workloads/) is the plug-in
that measures one step of it and writes its records; report/ turns a
batch's records into its tables. bench/run is the one entry point:

    bench/run SPEC [NAME=VALUE ...]       a batch (bench/run --list)
    bench/run summarise DIR               the tables of a batch, again
    bench/run TOOL ARGS                   one of the tools below

Standard library only.
"""
