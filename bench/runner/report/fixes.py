"""fixes.py: the report of a fixes batch (spec fixes; make bench-fixes):
what each fix is worth.

    bench/run summarise [--include-busy] [--no-chart] DIR      (a fixes-* folder)
    bench/run summarise --kind fixes DIR                       (any other)

calls write(DIR, runs, boots, meta, include_busy, chart) (report/), which
reads runs.csv, guests.csv and counters.csv (counters.py, optional; or
counters.csv.gz) of a batch whose guests are the named variants of
mk/variants.mk (baseline, step1-timed-wait ... all, all-minus-SWITCH,
idea-*) and linux, and writes
    fixes.md    the steps table in the shape of the reference write-up (one
                row per cumulative step, one column per load, median req/s
                (min-max) and the gain over the row above), the leave-one-out
                table (all vs all-minus-SWITCH, and the loss), the counters
                that explain the speed (key ratios per variant and load), and
                boot time and idle CPU per variant
    fixes.dat, fixes.gp, fixes.png   req/s per step per load (gnuplot)
With runs under the instruction-counting plugin (COUNT=1), the steps,
leave-one-out and write-up tables get instructions per request outside the
wait loop beside requests/s (median (min-max) over those runs, and the same
ratios), and the verdict is given on them too: is `all` at or below the
fewest instructions per request of any rival at every load.
A run counts as records.py says (no failed request, no non-2xx answer, the
load generator finished, and no other process took more than the busy
threshold of a core, unless --include-busy); the others are marked in the
cells ([n=counted/all]) and listed; a run whose guest did not shut down
cleanly counts but is marked (~). The report covers one emulator, placement
and load generator (the first of each in the batch); summary.md (http.py)
compares them. Standard library only.
"""
import csv
import gzip
import os

from ..records import AXES, LOADS, console_name, counts, counts_insns, ordered, under_plugin
from . import reqtrace
from .counters import KEY_RATIOS
from .tables import Results, Stat, batch_header, chart_cells, draw_chart, fmt_ratio, md_table, num, terminal, text_table
from .writeup import COMMITS

# The switches in the write-up's order, as mk/variants.mk names them
# (SWITCH_NAMES; tests/integration/bench/61-bench-fixes.sh checks they agree), with
# the step's name in the tables.
SWITCHES = [("timed-wait", "timed waits"), ("writev", "writev"), ("nodelay", "NODELAY"),
            ("poll-when-due", "poll when due"), ("egress-list", "egress list"),
            ("deadlines", "deadlines"), ("no-mark", "no-mark"), ("listener-flag", "listener flag"),
            ("spin-park", "spin-then-park"), ("timer-reload", "timer reload")]
# Key ratios as the counters tables name them.
RATIO_TITLES = {
    "visited_per_egress_pass": "sockets visited per egress pass",
    "net_polls_per_request": "network polls per request",
    "spins_per_request": "spins per request",
    "parks_per_request": "parks per request",
    "frames_out_per_request": "frames out per request",
    "reloads_skipped_pct": "timer reloads skipped (%)",
    "slots_per_listener_check": "listener slots walked per check",
}


# The write-up's ideas that were wrong (mk/variants.mk IDEAS): what each
# changes, and the counters (title, numerator, denominator; "requests" is
# ab's count, None a plain delta per run) that say why it did or did not help.
IDEAS = [
    ("idea-zero-spin", "zero spin before parking",
     [("parks/request", "kernel.parks", "requests"), ("interrupts/request", "kernel.interrupts", "requests")]),
    ("idea-backlog16", "listen backlog 16",
     [("backlog overflows (resets)/run", "sockets.backlog_overflows", None),
      ("handshakes deferred/run", "net.handshakes_deferred", None), ("ab failed/run", "failed", None)]),
    ("idea-buf4k", "4 KiB socket buffers",
     [("frames out/request", "net.frames_out", "requests"), ("tcp_write ENOMEM/run", "sockets.tcp_write_enomem", None)]),
    ("idea-accept-skip", "accept-skip counter (listener flag off)",
     [("slots walked/check", "sockets.slots_walked", "sockets.listener_checks")]),
    ("idea-fast-wake", "faster wake from the NIC interrupt",
     [("parks/request", "kernel.parks", "requests"), ("fast wakes/request", "kernel.fast_wakes", "requests")]),
]
# Per switch, the counters that tell what its step changed (same form).
EXPLAIN = {
    "timed-wait": [("parks/request", "kernel.parks", "requests")],
    "writev": [("frames out/request", "net.frames_out", "requests"),
               ("nagle holds/request", "sockets.nagle_holds", "requests")],
    "nodelay": [("nagle holds/request", "sockets.nagle_holds", "requests")],
    "poll-when-due": [("net polls/request", "net.polls", "requests")],
    "egress-list": [("visited/pass", "sockets.sockets_visited", "sockets.egress_passes")],
    "deadlines": [("dispatches/pass", "sockets.dispatches", "sockets.egress_passes")],
    "no-mark": [("marks/request", "sockets.marks", "requests"), ("net polls/request", "net.polls", "requests")],
    "listener-flag": [("slots walked/check", "sockets.slots_walked", "sockets.listener_checks")],
    "spin-park": [("PAUSEs/request", "kernel.backoff_pauses", "requests"),
                  ("interrupts/request", "kernel.interrupts", "requests")],
    "timer-reload": [("timer reloads/request", "kernel.timer_reloads", "requests")],
}


def step_guest(i):
    """The build of step i (0: baseline; the last: all)."""
    if i == 0:
        return "baseline"
    if i == len(SWITCHES):
        return "all"
    return f"step{i}-{SWITCHES[i - 1][0]}"


def step_rows(guests):
    """[(row label, guest)] of the cumulative steps present, in order."""
    rows = [("linux", "linux"), ("baseline", "baseline")]
    for i, (sw, label) in enumerate(SWITCHES, start=1):
        if i < len(SWITCHES):
            rows.append((f"+{label}", f"step{i}-{sw}"))
        else:  # the last step is every switch on: `all` (step10-... is the same build)
            last = "all" if "all" in guests or f"step{i}-{sw}" not in guests else f"step{i}-{sw}"
            rows.append((f"+{label} (all)", last))
    rows = [(label, g) for label, g in rows if g in guests]
    # Without the step before it, `all` is not one step on from the row above.
    if len(rows) > 1 and rows[-1][1] != f"step{len(SWITCHES)}-{SWITCHES[-1][0]}" \
            and rows[-2][1] != f"step{len(SWITCHES) - 1}-{SWITCHES[-2][0]}" and rows[-1][1] == "all":
        rows[-1] = ("all", "all")
    return rows


def loo_rows(guests):
    rows = [("all", "all")] + [(f"all - {label}", f"all-minus-{sw}") for sw, label in SWITCHES]
    return [(label, g) for label, g in rows if g in guests]


fmt_num = fmt_ratio  # a ratio with the digits that matter at its size


class Fixes:
    """The runs of one fixes batch, grouped for the report."""

    def __init__(self, runs, boots, counters, include_busy=False):
        data = Results(runs, boots, include_busy)
        # One emulator, placement and load generator: the first of each.
        self.config = {a: data.values[a][0] for a in AXES[1:]}  # what the report covers
        self.others = {a: data.values[a][1:] for a in AXES[1:] if len(data.values[a]) > 1}  # left out
        self.data = data
        self.runs = [r for r in runs if data.matches(r, self.config)]  # runs.csv rows
        self.boots = [b for b in boots if data.matches(b, self.config)]  # guests.csv rows
        self.counters = [c for c in counters if data.matches(c, self.config)]  # counters.csv rows
        self.include_busy = include_busy  # busy runs count too
        self.backends = ordered([r["backend"] for r in self.runs], ["tap", "passt", "user"])
        self.loads = ordered([r["load"] for r in self.runs], list(LOADS))
        self.guests = ordered([r["guest"] for r in self.runs + self.boots], [])
        self.clean_keys = {(r["rep"], r["backend"], r["guest"], r["load"]) for r in self.runs
                           if counts(r, include_busy)}
        self.has_insns = any(counts_insns(r) for r in self.runs)  # runs under the counting plugin

    def cfg(self, backend):
        """The configuration of a back-end's cells."""
        return dict(self.config, backend=backend)

    def cell_runs(self, backend, guest, load):
        """The timed runs of a cell (not those under the counting plugin)."""
        return self.data.cell_runs(self.cfg(backend), guest, load)

    def insns(self, backend, guest, load):
        """Stat of instructions per request outside the wait loop, over the
        runs under the counting plugin that finished cleanly."""
        return self.data.insns_stat(self.cfg(backend), guest, load)

    def head(self, first):
        """A table's header: a column per load, and with instruction counts
        one more beside each."""
        if not self.has_insns:
            return [first] + self.loads
        return [first] + [h for l in self.loads for h in (l, f"{l} instr/req")]

    def rps(self, backend, guest, load):
        """Stat of req/s over the clean runs."""
        return self.data.stat(self.cfg(backend), guest, load, "rps")

    def marks(self, backend, guest, load):
        """[n=clean/all] when some runs did not count; ! for a listen
        overflow; ~ for a guest whose shutdown was unclean."""
        return self.data.marks(self.cfg(backend), guest, load)

    def steps_table(self, backend):
        """Rows of the steps table: req/s and the gain over the row above."""
        rows, prev = [], None
        for label, guest in step_rows(self.guests):
            row = [label]
            for load in self.loads:
                st = self.rps(backend, guest, load)
                cell = st.fmt()
                if prev is not None:
                    before = self.rps(backend, prev, load).median
                    if st.median is not None and before:
                        cell += f" x{st.median / before:.2f}"
                row.append(cell + self.marks(backend, guest, load))
                if self.has_insns:
                    st = self.insns(backend, guest, load)
                    before = self.insns(backend, prev, load).median if prev is not None else None
                    row.append(st.fmt() + (f" x{st.median / before:.2f}" if st.median is not None and before else ""))
            rows.append(row)
            prev = guest
        # The whole way: all over baseline, all over linux.
        for base in ("baseline", "linux"):
            if base in self.guests and "all" in self.guests:
                row = [f"all / {base}"]
                for load in self.loads:
                    for stat in (self.rps, self.insns) if self.has_insns else (self.rps,):
                        a, b = stat(backend, "all", load).median, stat(backend, base, load).median
                        row.append(f"x{a / b:.2f}" if a is not None and b else "-")
                rows.append(row)
        return rows

    def loo_table(self, backend):
        """Rows of the leave-one-out table: req/s and the loss against all."""
        rows = []
        for label, guest in loo_rows(self.guests):
            row = [label]
            for load in self.loads:
                st = self.rps(backend, guest, load)
                cell = st.fmt()
                ref = self.rps(backend, "all", load).median
                if guest != "all" and st.median is not None and ref:
                    cell += f" {100 * (st.median / ref - 1):+.0f}%"
                row.append(cell + self.marks(backend, guest, load))
                if self.has_insns:
                    st, ref = self.insns(backend, guest, load), self.insns(backend, "all", load).median
                    row.append(st.fmt() + (f" {100 * (st.median / ref - 1):+.1f}%"
                                           if guest != "all" and st.median is not None and ref else ""))
            rows.append(row)
        return rows

    # all must be at least as fast as each of these (issue 11's criterion):
    # baseline, every step short of all, every all-minus-SWITCH.
    IDLE_LIMIT_PCT = 0.5  # and idle at or below this much of a core

    def rivals(self):
        names = [g for _, g in step_rows(self.guests) + loo_rows(self.guests)]
        return [g for g in ordered(names, []) if g not in ("linux", "all")]

    def verdict_rows(self, backend):
        """Per load: all, the fastest rival, and whether all holds. all holds
        when its median is at least the rival's, or the rival's median lies
        within all's own runs (a tie: the spread of one build's boots on this
        host is as wide as that); it is behind otherwise. With instruction
        counts, the same on them (fewer is better) in four more columns:
        all, the rival with the fewest, the ratio, the verdict."""
        rows = []
        for load in self.loads:
            row = [load] + self.verdict_cells(self.rps(backend, "all", load),
                                              [(g, self.rps(backend, g, load)) for g in self.rivals()], 1)
            if self.has_insns:
                row += self.verdict_cells(self.insns(backend, "all", load),
                                          [(g, self.insns(backend, g, load)) for g in self.rivals()], -1)
            if any(c != "-" for c in row[1:]):
                rows.append(row)
        return rows

    @staticmethod
    def verdict_cells(mine, rivals, better):
        """all's cell, the best rival's (better=1: the highest median, -1: the
        lowest), their ratio and the word; dashes when either is missing."""
        best, best_st = None, None
        for g, st in rivals:
            if st.median is not None and (best_st is None or better * (st.median - best_st.median) > 0):
                best, best_st = g, st
        if mine.median is None or best_st is None:
            return ["-"] * 4
        if better * (mine.median - best_st.median) >= 0:
            word = "ahead"
        elif (best_st.median <= mine.high) if better > 0 else (best_st.median >= mine.low):
            word = "tie"
        else:
            word = "behind"
        return [mine.fmt(), f"{best}: {best_st.fmt()}", f"x{mine.median / best_st.median:.2f}", word]

    def ok_boots(self, backend, guest):
        return [b for b in self.boots if b["backend"] == backend and b["guest"] == guest and b["status"] == "ok"
                and not under_plugin(b)]

    def idle_stat(self, backend, guest):
        return Stat([num(b["idle_cpu_pct"]) for b in self.ok_boots(backend, guest)])

    def verdict(self, backend):
        """Lines of the verdict section, or [] without all and a rival."""
        rows = self.verdict_rows(backend)
        if not rows:
            return []
        behind = [r[0] for r in rows if r[4] == "behind"]
        idle = self.idle_stat(backend, "all")
        idle_ok = idle.median is not None and idle.high <= self.IDLE_LIMIT_PCT
        held = not behind and idle_ok
        head = ["load", "all", "fastest rival", "all / rival", "verdict"]
        if self.has_insns:
            head += ["all instr/req", "fewest-instruction rival", "all / rival", "verdict on instructions"]
        out = [f"## Is `all` the fastest build? back-end `{backend}`", "",
               "`all` against the fastest of baseline, the steps and the all-minus builds at each "
               "load: ahead (its median is at least the rival's), tie (the rival's median lies "
               "within all's runs) or behind."
               + (" Then the same on instructions per request outside the wait loop (runs under the "
                  "counting plugin), against the rival with the fewest: ahead (all's median is at "
                  "most the rival's), tie (the rival's median lies within all's runs) or behind."
                  if self.has_insns else ""), "",
               md_table(head, rows), "",
               f"Idle CPU of `all`: {idle.fmt(2)}{'%' if idle.n else ''} (limit {self.IDLE_LIMIT_PCT}%).", "",
               "Verdict: " + ("no clean timed run to judge." if all(r[4] == "-" for r in rows) else
                              "held at every load." if held else
                              "not held: " + ", ".join(
                                  ([f"behind at {' '.join(behind)}"] if behind else [])
                                  + ([] if idle_ok else ["idle CPU above the limit"])) + "."), ""]
        if self.has_insns:
            behind = [r[0] for r in rows if r[8] == "behind"]
            missing = [r[0] for r in rows if r[8] == "-"]
            out += ["Verdict on instructions: " + (
                "held at every load." if not behind and not missing else
                "not held: " + ", ".join(([f"behind at {' '.join(behind)}"] if behind else [])
                                         + ([f"no count at {' '.join(missing)}"] if missing else [])) + "."), ""]
        return out

    def variants(self):
        """Unikernel variants in report order: steps, then leave-one-out."""
        names = [g for _, g in step_rows(self.guests) + loo_rows(self.guests) if g != "linux"]
        return ordered(names, [])

    def ratio(self, backend, guest, load, name):
        """Median of a key ratio over the clean runs (counters.csv)."""
        return Stat([num(c.get(name)) for c in self.counters
                     if (c["backend"], c["guest"], c["load"]) == (backend, guest, load)
                     and (c["rep"], backend, guest, load) in self.clean_keys]).median

    def counters_tables(self, backend):
        out = []
        names = [n for n in KEY_RATIOS if any(c.get(n) for c in self.counters if c["backend"] == backend)]
        if not names:
            return out
        # The headline: each ratio from baseline to all, per load.
        if "baseline" in self.guests and "all" in self.guests:
            rows = []
            for n in names:
                rows.append([RATIO_TITLES.get(n, n)] + [
                    f"{fmt_num(self.ratio(backend, 'baseline', l, n))} -> {fmt_num(self.ratio(backend, 'all', l, n))}"
                    for l in self.loads])
            out += [f"### baseline -> all, back-end `{backend}`", "",
                    md_table(["ratio"] + self.loads, rows), ""]
        for n in names:
            have = {c["guest"] for c in self.counters if c["backend"] == backend}
            rows = [[g] + [fmt_num(self.ratio(backend, g, l, n)) for l in self.loads]
                    for g in self.variants() if g in have]
            out += [f"### {RATIO_TITLES.get(n, n)}, back-end `{backend}`", "",
                    md_table(["variant"] + self.loads, rows), ""]
        return out

    def guests_table(self):
        rows = []
        for g in ["linux"] + self.variants():
            if g not in self.guests:
                continue
            row = [g]
            for backend in self.backends:
                ok = self.ok_boots(backend, g)
                idle = Stat([num(b["idle_cpu_pct"]) for b in ok])
                row += [Stat([num(b["boot_s"]) for b in ok]).fmt(2), idle.fmt(2) + ("%" if idle.n else "")]
            rows.append(row)
        head = ["guest"] + [f"{h} ({b})" for b in self.backends for h in ("boot s", "idle CPU")]
        return md_table(head, rows)

    def not_counted(self):
        """Runs that did not count, and runs to read with care."""
        notes = []
        for r, why, plugin in self.data.with_care(self.runs, "unclean shutdown (counted)", overflow=False):
            label = f"rep {r['rep']} {r['backend']} {r['guest']} {r['load']}"
            notes.append(f"{label} (under the plugin): {', '.join(why)}" if plugin else
                         f"{label}: {', '.join(why)} (console: raw/{console_name(r)}.console)")
        return notes + self.data.bad_boots(self.boots, lambda b: f"{b['backend']} {b['guest']}")

    def counter(self, backend, guest, load, column, per):
        """Median over the clean runs of a counter's delta per `per` (a
        counters.csv column, or None: per run). ab's `failed` comes from
        runs.csv, over every run (it is what made them not count)."""
        if column == "failed":
            return Stat([num(r["failed"]) for r in self.cell_runs(backend, guest, load)]).median
        vals = []
        for c in self.counters:
            if (c["backend"], c["guest"], c["load"]) != (backend, guest, load):
                continue
            if column not in ("sockets.backlog_overflows", "net.handshakes_deferred") and \
                    (c["rep"], backend, guest, load) not in self.clean_keys or c.get("plugin") == "1":
                continue
            v, d = num(c.get(column)), num(c.get(per)) if per else 1
            if v is not None and d:
                vals.append(v / d)
        return Stat(vals).median

    def ideas_table(self, backend):
        """Rows: each idea against all, req/s and the counters that say why."""
        rows = []
        for guest, what, ratios in IDEAS:
            if guest not in self.guests:
                continue
            row = [f"{guest}: {what}"]
            for load in self.loads:
                st, ref = self.rps(backend, guest, load), self.rps(backend, "all", load)
                cell = st.fmt()
                if st.median is not None and ref.median:
                    cell += f" {100 * (st.median / ref.median - 1):+.0f}%"
                cell += self.marks(backend, guest, load)
                why = [f"{t} {fmt_num(self.counter(backend, 'all', load, n, d))} -> "
                       f"{fmt_num(self.counter(backend, guest, load, n, d))}" for t, n, d in ratios]
                row.append(cell + "; " + ", ".join(why) if self.counters else cell)
            rows.append(row)
        return rows

    def writeup_table(self, backend):
        """Rows: each write-up commit, its figures as published, ours (the step
        before and after it, median (min-max) and ratio), and the counters."""
        rows = []
        index = {sw: i for i, (sw, _) in enumerate(SWITCHES, start=1)}
        for commit, what, sw, figures, note in COMMITS:
            i = index[sw]
            before, after = step_guest(i - 1), step_guest(i)
            for load, pub_b, pub_a in figures or [("k1", None, None)]:
                if load not in self.loads:
                    continue
                theirs = f"{pub_b} -> {pub_a} x{pub_a / pub_b:.2f}" if pub_b else "-"
                b, a = self.rps(backend, before, load), self.rps(backend, after, load)
                ours = "-"
                if b.median is not None and a.median is not None:
                    ours = f"{b.fmt()} -> {a.fmt()} x{a.median / b.median:.2f}"
                why = ", ".join(f"{t} {fmt_num(self.counter(backend, before, load, n, d))} -> "
                                f"{fmt_num(self.counter(backend, after, load, n, d))}" for t, n, d in EXPLAIN[sw])
                row = [commit, what, load, theirs, ours, why if self.counters else "-", note or ""]
                if self.has_insns:
                    b, a = self.insns(backend, before, load), self.insns(backend, after, load)
                    row[5:5] = [f"{b.fmt()} -> {a.fmt()} x{a.median / b.median:.2f}"
                                if b.median and a.median is not None else "-"]
                rows.append(row)
        return rows

    def time_breakdown(self, backend, results):
        """The per-stage table of `all` at k1 from the kernel's trace lines."""
        rows = reqtrace.collect(results).get((backend, "all", "k1")) if results else None
        return reqtrace.md(backend, "all", "k1", rows) if rows else ""

    def markdown(self, meta, results=None):
        reps = len({r["rep"] for r in self.runs if not under_plugin(r)})
        out = ["# What each fix is worth", ""]
        out += batch_header(meta, self.runs, self.include_busy) + [""]
        if meta:
            out += ["```", meta.strip(), "```", ""]
        if self.others:
            out += ["This report covers " + ", ".join(f"{a} {v}" for a, v in self.config.items())
                    + "; the batch also ran " + "; ".join(f"{a} {' '.join(v)}" for a, v in self.others.items())
                    + " (summary.md compares them).", ""]
        out += [f"Requests/s, median over the clean runs (min-max), {reps} repetition(s), builds "
                "alternating in each. A run is clean when ab saw no failed request and no non-2xx "
                "answer and no other process took its CPU (busy); [n=K/M]: only K of M runs were clean; "
                "!: a listen overflow on the host (user back-end); ~: the guest's shutdown was unclean. Loads: " + ", ".join(f"{k} = {v}" for k, v in LOADS.items() if k in self.loads)
                + ".", ""]
        if self.has_insns:
            plugin_reps = len({r["rep"] for r in self.runs if under_plugin(r)})
            out += [f"Instructions per request (instr/req): what the guest executed per request outside its "
                    f"wait loop (the unikernel's spin and park, the Linux guest's idle loop), counted by the "
                    f"TCG plugin between marks right before and right after each load (docs/instruction-counts.md); "
                    f"median (min-max) over {plugin_reps} repetition(s) under the plugin, which are runs of "
                    f"their own: their requests/s are in no cell here. Fewer is better.", ""]
        for backend in self.backends:
            out += self.verdict(backend)
        for backend in self.backends:
            out += [f"## Steps, back-end `{backend}`", "",
                    "Each row adds one switch to the row above; xG = its median over the row above's.", "",
                    md_table(self.head("step"), self.steps_table(backend)), ""]
        for backend in self.backends:
            rows = self.loo_table(backend)
            if len(rows) > 1:
                out += [f"## Leave one out, back-end `{backend}`", "",
                        "Every switch on but one; the percentage is its median against all's.", "",
                        md_table(self.head("variant"), rows), ""]
        for backend in self.backends:
            rows = self.ideas_table(backend)
            if rows:
                out += [f"## The write-up's ideas that were wrong, back-end `{backend}`", "",
                        "Each idea is `all` with one change; the percentage is its median against "
                        "all's; then the counters, all -> the idea.", "",
                        md_table(["idea"] + self.loads, rows), ""]
        for backend in self.backends:
            rows = self.writeup_table(backend)
            if rows:
                out += [f"## Beside the write-up, back-end `{backend}`", "",
                        "Each commit of the write-up as published (its batch, its machine) and our step "
                        "that reproduces it: the build before and after, median (min-max) and ratio, in "
                        "this batch; then the counters, before -> after.", "",
                        md_table(["commit", "what", "load", "write-up", "ours"]
                                 + (["ours, instr/req"] if self.has_insns else []) + ["counters", "note"], rows), ""]
        for backend in self.backends:
            table = self.time_breakdown(backend, results)
            if table:
                out += ["## Where the time goes: one k1 keep-alive request of `all`", "",
                        "From the kernel's sampled requests (kernel/trace.c; "
                        "trace.md has every guest and load).", "", table]
        if self.counters:
            out += ["## Counters", "",
                    "Deltas of the guest's counters across each load (Ctrl-T before and after), "
                    "divided as named; median over the clean runs. Every counter is in counters.csv.", ""]
            for backend in self.backends:
                out += self.counters_tables(backend)
        out += ["## Boot and idle", "",
                "Boot: seconds from start to the first HTTP response; idle CPU: QEMU's CPU over the "
                "idle sample (first repetition).", "", self.guests_table(), ""]
        notes = self.not_counted()
        out += ["## Runs that did not count, and runs to read with care", ""]
        out += [f"- {n}" for n in notes] if notes else ["None: every run was clean."]
        return "\n".join(out) + "\n"

    def chart_data(self):
        """Per back-end (a gnuplot index): step number, label, median min max per load."""
        lines = ["# step label " + " ".join(f"{l}_median {l}_min {l}_max" for l in self.loads)]
        for backend in self.backends:
            for i, (label, guest) in enumerate(step_rows(self.guests)):
                cells = [str(i), '"' + label.replace(" (all)", "") + '"']
                for load in self.loads:
                    cells += chart_cells(self.rps(backend, guest, load))
                lines.append(" ".join(cells))
            lines += ["", ""]
        return "\n".join(lines) + "\n"


def gnuplot_script(fx, data, png):
    n = len(fx.backends)
    s = [terminal(1100, 460 * n, "sans,10"),
         f"set output '{png}'", f"set multiplot layout {n},1",
         "set logscale y", "set grid ytics", "set ylabel 'requests/s (log scale)'",
         "set key outside right", "set xtics rotate by -30 nomirror", "set offsets 0.3, 0.3, 0, 0"]
    for i, backend in enumerate(fx.backends):
        s.append(f"set title 'httpd requests/s per step, back-end {backend}: median, bars min-max'")
        plots = []
        for j, load in enumerate(fx.loads):
            if all(fx.rps(backend, g, load).median is None for _, g in step_rows(fx.guests)):
                continue  # gnuplot refuses a series without a point
            c = 3 + 3 * j
            plots.append(f"'{data}' index {i} using 1:{c}:{c + 1}:{c + 2}:xtic(2) with yerrorlines "
                         f"title '{LOADS.get(load, load)}' lc {j + 1} pt {j + 4}")
        s.append("plot " + ", ".join(plots) if plots else "plot [0:1] [1:10] NaN notitle")
    s.append("unset multiplot")
    return "\n".join(s) + "\n"


def read_counters(path):
    """counters.csv rows, or counters.csv.gz's (how a committed batch keeps a
    big one); [] when there is neither (e.g. only Linux guests)."""
    for name, opener in ((path, open), (path + ".gz", gzip.open)):
        try:
            with opener(name, "rt", newline="") as f:
                return list(csv.DictReader(f))
        except OSError:
            continue
    return []


def write(out_dir, runs, boots, meta, include_busy=False, chart=True):
    """fixes.md (and fixes.*) of a fixes batch's records; prints the steps
    tables."""
    fx = Fixes(runs, boots, read_counters(os.path.join(out_dir, "counters.csv")), include_busy)
    with open(os.path.join(out_dir, "fixes.md"), "w") as f:
        f.write(fx.markdown(meta, out_dir))
    for backend in fx.backends:
        print(f"\nrequests/s per step, back-end {backend} (median (min-max) over clean runs; x = gain over the row above)")
        print(text_table(fx.head("step"), fx.steps_table(backend)))
    if chart:
        draw_chart(out_dir, "fixes", fx.chart_data(), lambda data, png: gnuplot_script(fx, data, png))
    print(f"\nreport: {os.path.join(out_dir, 'fixes.md')}")
