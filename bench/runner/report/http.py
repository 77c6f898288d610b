"""http.py: an HTTP batch's summary (the http workload; make bench).

    bench/run summarise [--ref GUEST] [--include-busy] [--no-chart] DIR

calls write(DIR, runs, boots, meta, ref, include_busy, chart) (report/), which
reads DIR's runs.csv (one row per load run), guests.csv (one row per boot)
and meta.txt, and writes
    summary.md   a header saying what kind of batch it was (load average at
                 start and end, whether the quiet-host guard passed or was
                 forced, how many runs other processes disturbed); when the
                 batch has a Linux guest (linux, or a name beginning linux-)
                 and another that is not native, per configuration "uk
                 against the best Linux guest": at each load, the Linux guest
                 with the highest median requests/s, named, and each other
                 guest's ratios to it; for every
                 configuration (back-end, emulator, placement, load
                 generator) the main table: requests/s, host CPU per request
                 (QEMU's whole process, or the native server), each with its
                 ratio to the reference guest, and p50 and p99 latency; then
                 where the CPU went, comparisons across emulators, placements
                 or load generators when the batch alternated them, boot time,
                 idle CPU, image size, and every run to read with care; with
                 runs under the instruction-counting plugin (COUNT=1),
                 instructions per request in the main table and a section of
                 their own (in all, outside the wait loop, a Linux guest's
                 kernel and user space, and what the plugin cost in
                 requests/s); for guests of more than one vCPU, smp.py's
                 tables (per-CPU counters per request, idle CPU per vCPU)
    chart.dat    the numbers behind the chart
    chart.png    per configuration: requests/s (log scale), and each guest's
                 ratios to the reference guest (requests/s and CPU per
                 request) (gnuplot)
and prints the requests/s tables. The reference guest: --ref, else the one
meta.txt's guests line names (ref GUEST), else the first guest that is not
native. Which runs count: see records.py (no failed request, no non-2xx
answer, the load generator finished; busy runs only with --include-busy).
Standard library only.
"""
import os

from ..records import AXES, NATIVE_EMULATOR, InputError, is_busy, load_label, ordered, under_plugin
from . import smp
from .tables import (Results, Stat, batch_header, chart_cells, draw_chart, fmt_ratio, fmt_x, md_table, num,
                     parse_meta, terminal, text_table)

AXIS_TITLES = {"emulator": "emulator", "placement": "placement", "loadgen": "load generator"}


def is_linux(guest):
    """A Linux guest: linux, linux-tuned, linux-epoll, linux-nginx, ..."""
    return guest == "linux" or guest.startswith("linux-")


def is_native(guest):
    """A server on the host, no VM: native, native-nginx, ..."""
    return guest == "native" or guest.startswith("native-")


class Summary(Results):
    """The runs of one results folder, grouped for reporting."""

    def __init__(self, runs, boots, ref, include_busy=False):
        super().__init__(runs, boots, include_busy)
        self.guests = ordered([r["guest"] for r in runs + boots], [ref, "native"])
        self.ref = ref  # the guest ratios are taken against

    # ---- cells ----------------------------------------------------------
    def ratio(self, config, guest, load, field):
        """The guest's median of a field over the reference guest's."""
        mine = self.stat(config, guest, load, field).median
        ref = self.stat(config, self.ref, load, field).median
        if mine is None or not ref:
            return None
        return mine / ref

    def marks(self, config, guest, load):
        """Results' marks, and b when a busy run counted (--include-busy)."""
        text = super().marks(config, guest, load)
        if any(is_busy(r) for r in self.counted(config, guest, load)):
            text += " b"
        return text

    def throughput_rows(self, config, with_ratio=True):
        """Requests/s: a row per load, a column per guest."""
        rows = []
        for load in self.loads:
            row = [load_label(load, config["loadgen"])]
            for g in self.guests:
                cell = self.stat(config, g, load, "rps").fmt()
                r = self.ratio(config, g, load, "rps")
                if with_ratio and r is not None and g != self.ref:
                    cell += f" x{r:.2f}"
                row.append(cell + self.marks(config, g, load))
            rows.append(row)
        return rows

    def best_linux(self, config, load):
        """The Linux guest with the highest median requests/s (the first
        of equals, in column order), or None when none has one."""
        best, top = None, None
        for g in self.guests:
            m = self.stat(config, g, load, "rps").median
            if is_linux(g) and m is not None and (top is None or m > top):
                best, top = g, m
        return best

    def contenders(self):
        """The guests set against the best Linux guest: neither Linux nor
        native (the unikernel builds)."""
        return [g for g in self.guests if not is_linux(g) and not is_native(g)]

    def paired(self, config, guest, other, load, field="rps"):
        """guest's field over other's in each repetition where both runs
        count, as "xLOW-HIGH (n)": the guests alternate within a
        repetition, so each pair met the host in the same state, and the
        range says what the ratio of medians alone does not (how far apart
        two builds' runs lie). '-' without a pair."""
        mine = {r["rep"]: num(r[field]) for r in self.counted(config, guest, load)}
        theirs = {r["rep"]: num(r[field]) for r in self.counted(config, other, load)}
        ratios = sorted(mine[k] / theirs[k] for k in mine
                        if k in theirs and mine[k] is not None and theirs[k])
        if not ratios:
            return "-"
        return f"{fmt_x(ratios[0])}-{fmt_ratio(ratios[-1])} ({len(ratios)})"

    def best_rows(self, config):
        """A row per load and contender: its requests/s, the best Linux
        guest there and its requests/s, the ratios of requests/s and of
        CPU per request to that guest's."""
        rows = []
        for load in self.loads:
            best = self.best_linux(config, load)
            for g in self.contenders():
                if not self.cell_runs(config, g, load):
                    continue
                mine = self.stat(config, g, load, "rps")
                row = [load_label(load, config["loadgen"]), g, mine.fmt() + self.marks(config, g, load)]
                if best is None:
                    rows.append(row + ["-", "-", "-", "-", "-"])
                    continue
                ref = self.stat(config, best, load, "rps")
                cpu, ref_cpu = (self.stat(config, x, load, "cpu_us_per_req").median for x in (g, best))
                rows.append(row + [best, ref.fmt() + self.marks(config, best, load),
                                   fmt_x(mine.median / ref.median if mine.median is not None and ref.median else None),
                                   self.paired(config, g, best, load),
                                   fmt_x(cpu / ref_cpu if cpu is not None and ref_cpu else None)])
        return rows

    def cells(self, config, runs_of):
        """(load, guest, runs) in table order where runs_of(config, guest,
        load) finds any."""
        for load in self.loads:
            for g in self.guests:
                runs = runs_of(config, g, load)
                if runs:
                    yield load, g, runs

    def main_rows(self, config):
        """The main table: a row per load and guest."""
        rows = []
        for load, g, mine in self.cells(config, self.cell_runs):
            used = self.counted(config, g, load)
            rps = self.stat(config, g, load, "rps")
            cpu = self.stat(config, g, load, "cpu_us_per_req")
            is_ref = g == self.ref
            row = [load_label(load, config["loadgen"]), g,
                   rps.fmt() + self.marks(config, g, load),
                   "ref" if is_ref else fmt_x(self.ratio(config, g, load, "rps")),
                   cpu.fmt(1),
                   "ref" if is_ref else fmt_x(self.ratio(config, g, load, "cpu_us_per_req")),
                   self.stat(config, g, load, "p50_ms").fmt(3, spread=False),
                   self.stat(config, g, load, "p99_ms").fmt(3, spread=False),
                   f"{len(used)}/{len(mine)}"]
            if self.has_insns:
                row[4:4] = [self.insns_stat(config, g, load).fmt(),
                            "ref" if is_ref else fmt_x(self.insns_ratio(config, g, load))]
            rows.append(row)
        return rows

    def insns_ratio(self, config, guest, load, field="insns_nowait_per_req"):
        """The guest's median instructions per request over the reference's."""
        mine = self.insns_stat(config, guest, load, field).median
        ref = self.insns_stat(config, self.ref, load, field).median
        return mine / ref if mine is not None and ref else None

    def insns_rows(self, config):
        """Instructions per request, a row per load and guest that has them:
        in all, outside the wait loop and its ratio to the reference guest,
        a Linux guest's kernel and user space outside the idle loop, how many
        runs, and the plugin's cost: its runs' requests/s over the timed ones'."""
        rows = []
        for load, g, runs in self.cells(config, self.insns_runs):
            timed = self.stat(config, g, load, "rps").median
            slowed = Stat([num(r["rps"]) for r in runs]).median
            total, work = self.insns_stat(config, g, load, "insns_per_req"), self.insns_stat(config, g, load)
            rows.append([load_label(load, config["loadgen"]), g,
                         total.fmt(), spread(total), work.fmt(), spread(work),
                         "ref" if g == self.ref else fmt_x(self.insns_ratio(config, g, load)),
                         self.insns_stat(config, g, load, "insns_kernel_per_req").fmt(),
                         self.insns_stat(config, g, load, "insns_user_per_req").fmt(),
                         str(len(runs)),
                         fmt_x(slowed / timed) if slowed is not None and timed else "-"])
        return rows

    def cpu_rows(self, config):
        """Where the CPU went: server, load generator, everyone else."""
        rows = []
        for load, g, used in self.cells(config, self.counted):
            gen = Stat([per_request(r, "loadgen_cpu_s") for r in used])
            rows.append([load_label(load, config["loadgen"]), g,
                         pct(self.stat(config, g, load, "server_cpu_pct").fmt(0, spread=False)),
                         gen.fmt(1, spread=False),
                         pct(self.stat(config, g, load, "others_cpu_pct").fmt(1)),
                         pct(self.stat(config, g, load, "steal_pct").fmt(1, spread=False))])
        return rows

    def axis_rows(self, axis, fixed):
        """One guest and load per row, a column per value of `axis`: req/s,
        its ratio to the reference guest and that of CPU per request under
        the same value, and the change against the first value."""
        rows = []
        values = self.values[axis]
        for g in self.guests:
            for load in self.loads:
                row = [g, load]
                first = self.stat(dict(fixed, **{axis: values[0]}), g, load, "rps").median
                for v in values:
                    c = dict(fixed, **{axis: v})
                    st = self.stat(c, g, load, "rps")
                    cell = st.fmt()
                    if g != self.ref and st.median is not None:
                        cell += f" x{fmt_ratio(self.ratio(c, g, load, 'rps'))}, CPU x" \
                                f"{fmt_ratio(self.ratio(c, g, load, 'cpu_us_per_req'))}"
                    if v != values[0] and st.median is not None and first:
                        cell += f", {100 * (st.median / first - 1):+.0f}%"
                    row.append(cell + self.marks(c, g, load))
                rows.append(row)
        return rows

    # ---- the report -----------------------------------------------------
    def header(self, meta):
        return batch_header(meta, self.runs, self.include_busy)

    def legend(self):
        return (f"Medians over the runs that count, (min-max) when more than one; x = ratio of the "
                f"median to {self.ref}'s in the same configuration and load (requests/s: higher is "
                f"better; CPU per request: lower is better). CPU per request: microseconds of host CPU "
                f"the server took per request (QEMU's whole process: vCPU, I/O thread and the rest; "
                f"for native, the server process). A run counts when every request completed with "
                f"a 2xx answer and, unless --include-busy, no other process took its CPU; "
                f"[n=K/M]: only K of M runs counted; !: a listen overflow on the host; ~: the guest's "
                f"shutdown was unclean; b: a busy run counted. {self.reps_seen()} repetition(s)."
                + (" instr/req: instructions the guest executed per request outside its wait loop "
                   "(the unikernel's spin and park, Linux's idle loop), median (min-max) over the runs "
                   "under the counting plugin, which are not among the runs above; see "
                   "\"Instructions per request\"." if self.has_insns else ""))

    def has_best_table(self):
        return any(is_linux(g) for g in self.guests) and bool(self.contenders())

    def reps_seen(self):
        return len({r["rep"] for r in self.runs + self.boots if not under_plugin(r)})

    def guest_rows(self):
        rows = []
        for config in self.configs():
            c = {k: config[k] for k in ("backend", "emulator", "placement")}
            for g in self.guests:
                mine = [b for b in self.boots if b["guest"] == g and self.matches(b, c) and not under_plugin(b)]
                if not mine or config["loadgen"] != self.values["loadgen"][0]:
                    continue  # a boot serves every load generator: one row
                if all(b["emulator"] == NATIVE_EMULATOR for b in mine) and config["emulator"] != self.values["emulator"][0]:
                    continue  # no emulator: one row
                ok = [b for b in mine if b["status"] == "ok"]
                boot = Stat([num(b["boot_s"]) for b in ok]).fmt(2)
                idle = Stat([num(b["idle_cpu_pct"]) for b in ok]).fmt(2)
                size = Stat([num(b["image_bytes"]) for b in mine]).median
                rows.append([self.label(c, ("backend",) + tuple(a for a in self.varying() if a != "loadgen")), g,
                             boot, pct(idle),
                             f"{size / 1e6:.2f} MB" if size else "-", f"{len(ok)}/{len(mine)}"])
        return rows

    def notes(self):
        """Runs left out of the medians, and runs counted with a warning."""
        out = [f"rep {r['rep']} {self.run_label(r)}" + (" (under the plugin)" if plugin else "") + ": " + ", ".join(why)
               for r, why, plugin in self.with_care(self.runs, "the guest's shutdown was unclean (counted)")]
        return out + self.bad_boots(self.boots, lambda b: f"{b['backend']} {b['emulator']} {b['placement']} {b['guest']}")

    def run_label(self, r):
        parts = [r["backend"]] + [r[a] for a in self.varying()] + [r["guest"], load_label(r["load"], r["loadgen"])]
        return " ".join(parts)

    def markdown(self, meta, smp_lines=()):
        """summary.md's text; smp_lines (smp.py's sections) go after the
        instructions."""
        out = ["# Benchmark summary", ""]
        out += self.header(meta) + [""]
        if meta:
            out += ["```", meta.strip(), "```", ""]
        out += [self.legend(), ""]
        if self.has_best_table():
            out += ["## uk against the best Linux guest", "",
                    "At each load, the Linux guest (linux, or a name beginning linux-) with the highest "
                    "median requests/s in that configuration, named, and each guest that is neither "
                    "Linux nor native against it: ratios of the medians of requests/s (higher is "
                    "better) and of CPU per request (lower is better); paired: the lowest and highest "
                    "ratio of requests/s within one repetition (the guests alternate), and how many "
                    "repetitions had both runs count.", ""]
            for config in self.configs():
                out += [f"### {self.label(config)}", "",
                        md_table(["load", "guest", "req/s", "best Linux guest", "its req/s", "x best",
                                  "paired x (n)", "CPU/req x best"], self.best_rows(config)), ""]
        head = ["load", "guest", "req/s", f"x {self.ref}", "CPU us/req", f"x {self.ref}", "p50 ms",
                "p99 ms", "runs"]
        if self.has_insns:
            head[4:4] = ["instr/req", f"x {self.ref}"]
        for config in self.configs():
            out += [f"## {self.label(config)}", "", md_table(head, self.main_rows(config)), ""]
        if self.has_insns:
            out += ["## Instructions per request", "",
                    "Counted by the TCG plugin (tools/plugin/insncount.c, docs/instruction-counts.md) "
                    "between marks right before and right after each load, over the requests completed; "
                    "median (min-max) over the runs under the plugin. All: every instruction the guest "
                    "executed; outside wait: less the wait loop (the unikernel's spin and park, the Linux "
                    f"guest's idle loop), with its ratio to {self.ref}'s; kernel and user: a Linux guest's "
                    "instructions outside its idle loop at kernel (upper-half) and user addresses. "
                    "Spread: (max - min) / median, how far one boot's count lies from another's. "
                    "Plugin cost: the plugin runs' requests/s over the timed runs' (medians).", ""]
            for config in self.configs():
                rows = self.insns_rows(config)
                if rows:
                    out += [f"### {self.label(config)}", "",
                            md_table(["load", "guest", "all", "spread", "outside wait", "spread", f"x {self.ref}",
                                      "kernel", "user", "runs", "plugin cost"], rows), ""]
        out += list(smp_lines)
        for config in self.configs():
            out += [f"### Requests/s, {self.label(config)}", "",
                    md_table(["load"] + self.guests, self.throughput_rows(config)), ""]
        out += ["## Where the CPU went", "",
                "The server's CPU in % of one core; the load generator's CPU per request (us); what "
                "every other process took, in % of one core (median (min-max)); the hypervisor's steal.", ""]
        for config in self.configs():
            out += [f"### {self.label(config)}", "",
                    md_table(["load", "guest", "server", "load gen us/req", "others", "steal"],
                             self.cpu_rows(config)), ""]
        for axis in self.varying():
            others = [a for a in AXES if a != axis]
            out += [f"## Each guest under each {AXIS_TITLES[axis]}", "",
                    f"x: ratio to {self.ref} under the same {AXIS_TITLES[axis]} (requests/s, then CPU per "
                    f"request); %: requests/s against the first {AXIS_TITLES[axis]}'s.", ""]
            seen = []
            for config in self.configs():
                fixed = {a: config[a] for a in others}
                if fixed in seen:
                    continue
                seen.append(fixed)
                out += [f"### {self.label(fixed, others)}", "",
                        md_table(["guest", "load"] + [f"{AXIS_TITLES[axis]} {v}" for v in self.values[axis]],
                                 self.axis_rows(axis, fixed)), ""]
        out += ["## Guests", "",
                "Boot: seconds from start to the first HTTP response. Idle: the server process's CPU "
                "over the idle sample (the first IDLE_REPS repetitions, 1 by default). Image: kernel + "
                "initramfs or app image; "
                "for a native guest, the server's binary (native-nginx: nginx-run and nginx, without "
                "its libraries).", ""]
        out += [md_table(["configuration", "guest", "boot s", "idle CPU", "image", "clean boots"],
                         self.guest_rows()), ""]
        notes = self.notes()
        out += ["## Runs to read with care", ""]
        out += [f"- {n}" for n in notes] if notes else ["None: every run was clean."]
        out += ["", "A listen overflow under `user` is the emulator's forwarded socket (backlog 1) "
                "dropping handshakes on the host: such a run measures QEMU's slirp, not the guest. "
                "A busy run shared the CPUs with other work: its figures are the host's, not the guest's."]
        return "\n".join(out) + "\n"

    # ---- the chart ------------------------------------------------------
    def chart_data(self):
        """Per configuration (a gnuplot index), a line per load: median min
        max of requests/s per guest, then per guest the ratios to the
        reference guest (requests/s, CPU per request)."""
        lines = ["# load " + " ".join(f"{g}_median {g}_min {g}_max" for g in self.guests)
                 + " " + " ".join(f"{g}_rps_ratio {g}_cpu_ratio" for g in self.guests)]
        for config in self.configs():
            for load in self.loads:
                cells = [load]
                for g in self.guests:
                    cells += chart_cells(self.stat(config, g, load, "rps"))
                for g in self.guests:
                    for field in ("rps", "cpu_us_per_req"):
                        r = self.ratio(config, g, load, field)
                        cells.append("NaN" if r is None else f"{r:.4f}")
                lines.append(" ".join(cells))
            lines += ["", ""]  # gnuplot index separator
        return "\n".join(lines) + "\n"


def per_request(run, field):
    """Microseconds of a CPU-seconds field per completed request."""
    v, req = num(run.get(field)), num(run.get("requests"))
    return v * 1e6 / req if v is not None and req else None


def spread(stat):
    """(max - min) / median of a Stat, in %; '-' for fewer than two values."""
    if stat.n < 2 or not stat.median:
        return "-"
    return f"{100 * (stat.high - stat.low) / stat.median:.1f}%"


def pct(text):
    """A formatted percentage, '-' left alone."""
    return text if text == "-" else text + "%"


def gnuplot_script(summary, data, png):
    configs = summary.configs()
    n = len(configs)
    ng = len(summary.guests)
    s = [terminal(1400, 380 * n, "sans,9"),
         f"set output '{png}'",
         f"set multiplot layout {n},2",
         "set style data histograms",
         "set style fill solid 0.8 border -1",
         "set grid ytics", "set key top left", "set xtics nomirror",
         "set xlabel 'load: k = keep-alive, c = a new connection per request; number = concurrency'"]
    for i, config in enumerate(configs):
        name = summary.label(config).replace("`", "")
        # Left: requests/s, log scale, bars min-max.
        s += ["set style histogram errorbars gap 1 lw 1", "set logscale y", "set yrange [10:*]",
              "set ylabel 'requests/s (log scale)'", "unset arrow",
              f"set title 'requests/s, {name}: median, bars min-max'"]
        plots = []
        for j, g in enumerate(summary.guests):
            # gnuplot refuses a series without a point: leave out a guest
            # with no counted run here, keeping each guest's colour.
            if all(summary.stat(config, g, load, "rps").median is None for load in summary.loads):
                continue
            c = 2 + 3 * j
            plots.append(f"'{data}' index {i} using {c}:{c + 1}:{c + 2}{'' if plots else ':xtic(1)'} "
                         f"title '{g}' lc {j + 1}")
        s += plot_or_empty(plots)
        # Right: ratios to the reference guest (1 = the same), log scale.
        s += ["set style histogram clustered gap 1", "set logscale y", "set yrange [*:*]",
              f"set ylabel 'ratio to {summary.ref} (log scale)'",
              "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 front",
              f"set title 'ratio to {summary.ref}, {name}: requests/s (solid), CPU per request (hatched)'"]
        plots = []
        for j, g in enumerate(summary.guests):
            if g == summary.ref or all(summary.ratio(config, g, load, "rps") is None for load in summary.loads):
                continue
            c = 2 + 3 * ng + 2 * j
            plots.append(f"'{data}' index {i} using {c}{'' if plots else ':xtic(1)'} "
                         f"title '{g} req/s' lc {j + 1} fs solid 0.8")
            plots.append(f"'{data}' index {i} using {c + 1} title '{g} CPU/req' lc {j + 1} fs pattern 4")
        s += plot_or_empty(plots)
    s.append("unset multiplot")
    return "\n".join(s) + "\n"


def plot_or_empty(plots):
    if plots:
        return ["plot " + ", ".join(plots)]
    return ["set label 1 'no run counted' at graph 0.5, 0.5 center", "unset logscale y",
            "plot [0:1] [0:1] NaN notitle", "unset label 1"]


def default_ref(runs, meta):
    """The guest a batch took its ratios against: the one meta.txt's guests
    line names (ref GUEST), else the first that is not native."""
    names = ordered([r["guest"] for r in runs], [])
    guests = parse_meta(meta).get("guests", "")
    named = guests.rsplit("(ref ", 1)[-1].split(")")[0] if "(ref " in guests else None
    if named in names:
        return named
    return next((g for g in names if not is_native(g)), names[0])


def write(out_dir, runs, boots, meta, ref=None, include_busy=False, chart=True):
    """summary.md (and chart.*) of an HTTP batch's records; prints the
    requests/s tables. InputError for a --ref that is not in the batch."""
    names = ordered([r["guest"] for r in runs], [])
    ref = ref or default_ref(runs, meta)
    if ref not in names:
        raise InputError(f"--ref {ref}: no such guest in this batch ({' '.join(names)})")
    summary = Summary(runs, boots, ref, include_busy)
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write(summary.markdown(meta, smp.sections(summary, out_dir)))
    for line in summary.header(meta):
        print(line.replace("**", ""))
    for config in summary.configs():
        print(f"\nrequests/s, {summary.label(config).replace('`', '')} (median (min-max) over the runs "
              f"that count; x = ratio to {ref}; !: listen overflow)")
        print(text_table(["load"] + summary.guests, summary.throughput_rows(config)))
    if summary.has_best_table():
        for config in summary.configs():
            print(f"\nagainst the best Linux guest at each load, {summary.label(config).replace('`', '')}")
            print(text_table(["load", "guest", "req/s", "best Linux guest", "its req/s", "x best", "paired x (n)",
                              "CPU/req x best"],
                             summary.best_rows(config)))
    notes = summary.notes()
    if notes:
        print(f"\n{len(notes)} run(s) to read with care (see summary.md)")
    if chart:
        draw_chart(out_dir, "chart", summary.chart_data(), lambda data, png: gnuplot_script(summary, data, png))
    print(f"\nsummary: {os.path.join(out_dir, 'summary.md')}")
