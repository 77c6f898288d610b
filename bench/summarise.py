#!/usr/bin/env python3
"""summarise.py: turn a benchmark results folder into a readable summary.

    bench/summarise.py [--ref GUEST] [--no-chart] RESULTS_DIR

Reads RESULTS_DIR/runs.csv (one row per ab run) and guests.csv (one row per
boot), both written by bench/run-bench, and writes
    summary.md   medians with min-max and run counts, each guest's ratio to
                 the reference guest, latency, server CPU, boot time, idle
                 CPU, image size, and every run that was not clean
    chart.dat    the numbers behind the chart
    chart.png    requests/s per load, one panel per back-end (gnuplot)
and prints the throughput tables. Only runs with status "ok" count towards
medians; the others are listed. Standard library only (Debian's python3).
"""
import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys

# Load names in display order, with what each one means.
LOADS = {
    "k1": "ab -k -c 1",
    "k8": "ab -k -c 8",
    "k64": "ab -k -c 64",
    "c1": "ab -c 1",
    "c16": "ab -c 16",
    "c64": "ab -c 64",
}
RUN_FIELDS = ["rep", "backend", "guest", "load", "keepalive", "concurrency", "requests", "secs",
              "rps", "failed", "non2xx", "mean_ms", "p99_ms", "server_cpu_s", "server_cpu_pct",
              "listen_overflows", "overflow", "status"]
GUEST_FIELDS = ["rep", "backend", "guest", "boot_s", "idle_cpu_pct", "image_bytes", "status"]


class InputError(Exception):
    """A results folder that cannot be summarised (missing or malformed)."""


def read_csv(path, fields):
    """Rows of a CSV as dicts, after checking its header."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames != fields:
                raise InputError(f"{path}: unexpected header {reader.fieldnames}")
            rows = list(reader)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from e
    for i, row in enumerate(rows, start=2):
        if None in row or any(v is None for v in row.values()):
            raise InputError(f"{path}:{i}: wrong number of fields")
    return rows


def num(text):
    """A float, or None for an empty or unreadable cell."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def ordered(values, order):
    """Distinct values, those named in `order` first, in first-seen order."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return [v for v in order if v in seen] + [v for v in seen if v not in order]


class Stat:
    """Median, min, max and count of a list of numbers (None when empty)."""

    def __init__(self, values):
        values = [v for v in values if v is not None]
        self.n = len(values)  # how many values
        self.median = statistics.median(values) if values else None  # their median
        self.low = min(values) if values else None  # the smallest
        self.high = max(values) if values else None  # the largest

    def fmt(self, digits=0, spread=True):
        if self.median is None:
            return "-"
        text = f"{self.median:.{digits}f}"
        if spread and self.n > 1:
            text += f" ({self.low:.{digits}f}-{self.high:.{digits}f})"
        return text


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(header, rows):
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


class Summary:
    """The runs of one results folder, grouped for reporting."""

    def __init__(self, runs, boots, ref):
        self.runs = runs  # runs.csv rows
        self.boots = boots  # guests.csv rows
        self.backends = ordered([r["backend"] for r in runs + boots], ["tap", "user"])
        self.guests = ordered([r["guest"] for r in runs + boots], [ref, "native"])
        self.loads = ordered([r["load"] for r in runs], list(LOADS))
        self.ref = ref  # the guest ratios are taken against
        self.reps = len({r["rep"] for r in runs + boots})  # repetitions seen

    def ok_runs(self, backend, guest, load):
        return [r for r in self.runs if r["backend"] == backend and r["guest"] == guest
                and r["load"] == load and r["status"] == "ok"]

    def stat(self, backend, guest, load, field):
        return Stat([num(r[field]) for r in self.ok_runs(backend, guest, load)])

    def ratio(self, backend, guest, load):
        mine = self.stat(backend, guest, load, "rps").median
        ref = self.stat(backend, self.ref, load, "rps").median
        if mine is None or not ref:
            return None
        return mine / ref

    def throughput_rows(self, backend, with_ratio=True):
        rows = []
        for load in self.loads:
            row = [LOADS.get(load, load)]
            for g in self.guests:
                st = self.stat(backend, g, load, "rps")
                cell = st.fmt()
                r = self.ratio(backend, g, load)
                if with_ratio and r is not None and g != self.ref:
                    cell += f" x{r:.2f}"
                if 0 < st.n < self.reps:
                    cell += f" [n={st.n}]"
                if any(x["overflow"] == "1" for x in self.ok_runs(backend, g, load)):
                    cell += " !"
                row.append(cell)
            rows.append(row)
        return rows

    def unclean(self):
        """Runs that did not count, or that counted but carry a warning."""
        notes = []
        for r in self.runs:
            why = []
            if r["status"] == "no_boot":
                continue  # reported once, with the boot
            if r["status"] != "ok":
                why.append(r["status"])
            if (num(r["failed"]) or 0) > 0:
                why.append(f"{r['failed']} failed")
            if (num(r["non2xx"]) or 0) > 0:
                why.append(f"{r['non2xx']} non-2xx")
            if r["overflow"] == "1":
                why.append(f"listen overflow ({r['listen_overflows']} drops)")
            if why:
                notes.append(f"rep {r['rep']} {r['backend']} {r['guest']} {LOADS.get(r['load'], r['load'])}: "
                             + ", ".join(why))
        for b in self.boots:
            if b["status"] != "ok":
                notes.append(f"rep {b['rep']} {b['backend']} {b['guest']}: {b['status']}")
        return notes

    def markdown(self, meta):
        out = ["# Benchmark summary", ""]
        if meta:
            out += ["```", meta.strip(), "```", ""]
        out += [f"Medians over the clean runs, (min-max) when more than one; x = ratio of the "
                f"median to {self.ref}'s on the same back-end and load; [n=K]: only K clean runs; "
                f"!: some of the runs hit a listen overflow (see the end). {self.reps} repetition(s).", ""]
        head = ["load"] + self.guests
        for backend in self.backends:
            out += [f"## Requests/s, back-end `{backend}`", "", md_table(head, self.throughput_rows(backend)), ""]
        for backend in self.backends:
            out += [f"## Latency (ms, mean / p99) and server CPU (% of a core), back-end `{backend}`", ""]
            rows = []
            for load in self.loads:
                row = [LOADS.get(load, load)]
                for g in self.guests:
                    mean = self.stat(backend, g, load, "mean_ms").fmt(2, spread=False)
                    p99 = self.stat(backend, g, load, "p99_ms").fmt(2, spread=False)
                    cpu = self.stat(backend, g, load, "server_cpu_pct").fmt(0, spread=False)
                    row.append(f"{mean} / {p99}, {cpu}%")
                rows.append(row)
            out += [md_table(head, rows), ""]
        out += ["## Guests", "",
                "Boot: seconds from start to the first HTTP response. Idle: the server process's CPU "
                "over the idle sample (first repetition). Image: kernel + initramfs or app image; "
                "for native, the httpd binary.", ""]
        rows = []
        for backend in self.backends:
            for g in self.guests:
                mine = [b for b in self.boots if b["backend"] == backend and b["guest"] == g]
                if not mine:
                    continue
                ok = [b for b in mine if b["status"] == "ok"]
                boot = Stat([num(b["boot_s"]) for b in ok]).fmt(2)
                idle = Stat([num(b["idle_cpu_pct"]) for b in ok]).fmt(2)
                size = Stat([num(b["image_bytes"]) for b in mine]).median
                rows.append([backend, g, boot, idle + ("%" if idle != "-" else ""),
                             f"{size / 1e6:.2f} MB" if size else "-", f"{len(ok)}/{len(mine)}"])
        out += [md_table(["back-end", "guest", "boot s", "idle CPU", "image", "clean boots"], rows), ""]
        notes = self.unclean()
        out += ["## Runs to read with care", ""]
        out += [f"- {n}" for n in notes] if notes else ["None: every run was clean."]
        out += ["", "A listen overflow under `user` is the emulator's forwarded socket (backlog 1) "
                "dropping handshakes on the host: such a run measures QEMU's slirp, not the guest."]
        return "\n".join(out) + "\n"

    def chart_data(self):
        """One line per back-end and load: label, then median min max per guest."""
        lines = ["# backend load " + " ".join(f"{g}_median {g}_min {g}_max" for g in self.guests)]
        for backend in self.backends:
            for load in self.loads:
                cells = [backend, load]
                for g in self.guests:
                    s = self.stat(backend, g, load, "rps")
                    cells += ["NaN"] * 3 if s.median is None else [f"{s.median:.1f}", f"{s.low:.1f}", f"{s.high:.1f}"]
                lines.append(" ".join(cells))
            lines += ["", ""]  # gnuplot index separator
        return "\n".join(lines) + "\n"


def gnuplot_script(summary, data, png):
    n = len(summary.backends)
    s = [f"set terminal pngcairo size 1100,{420 * n} font 'sans,10'" if has_cairo() else
         f"set terminal png size 1100,{420 * n}",
         f"set output '{png}'",
         f"set multiplot layout {n},1",
         "set style data histograms",
         "set style histogram errorbars gap 1 lw 1",
         "set style fill solid 0.8 border -1",
         "set logscale y", "set yrange [10:*]", "set grid ytics",
         "set ylabel 'requests/s (log scale)'", "set key top right",
         "set xtics nomirror",
         "set xlabel 'load: k = ab -k (keep-alive), c = a new connection per request; number = concurrency'"]
    for i, backend in enumerate(summary.backends):
        s.append(f"set title 'httpd requests/s, back-end {backend}: median, bars min-max "
                 f"({summary.reps} repetition(s))'")
        plots = []
        for j, g in enumerate(summary.guests):
            # gnuplot refuses a series without a point: leave out a guest
            # with no clean run here, keeping each guest's colour.
            if all(summary.stat(backend, g, load, "rps").median is None for load in summary.loads):
                continue
            c = 3 + 3 * j
            plots.append(f"'{data}' index {i} using {c}:{c + 1}:{c + 2}{'' if plots else ':xtic(2)'} "
                         f"title '{g}' lc {j + 1}")
        if plots:
            s.append("plot " + ", ".join(plots))
        else:
            s += ["set label 1 'no clean runs' at graph 0.5, 0.5 center", "unset logscale y",
                  "plot [0:1] [0:1] NaN notitle", "unset label 1", "set logscale y"]
    s.append("unset multiplot")
    return "\n".join(s) + "\n"


def has_cairo():
    try:
        out = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "pngcairo" in out.stdout + out.stderr


def main(argv):
    ap = argparse.ArgumentParser(description="Summarise a bench/results folder.")
    ap.add_argument("--ref", help="reference guest for ratios (default: first non-native guest)")
    ap.add_argument("--no-chart", action="store_true", help="skip the PNG")
    ap.add_argument("dir")
    args = ap.parse_args(argv)
    try:
        runs = read_csv(os.path.join(args.dir, "runs.csv"), RUN_FIELDS)
        boots = read_csv(os.path.join(args.dir, "guests.csv"), GUEST_FIELDS)
    except InputError as e:
        print(f"summarise: {e}", file=sys.stderr)
        return 2
    if not runs:
        print("summarise: no runs recorded", file=sys.stderr)
        return 2
    names = ordered([r["guest"] for r in runs], [])
    ref = args.ref or next((g for g in names if g != "native"), names[0])
    summary = Summary(runs, boots, ref)
    meta = ""
    try:
        with open(os.path.join(args.dir, "meta.txt")) as f:
            meta = f.read()
    except OSError:
        pass

    with open(os.path.join(args.dir, "summary.md"), "w") as f:
        f.write(summary.markdown(meta))
    for backend in summary.backends:
        print(f"\nrequests/s, back-end {backend} (median (min-max) over clean runs; x = ratio to {ref};"
              " !: listen overflow)")
        print(text_table(["load"] + summary.guests, summary.throughput_rows(backend)))
    notes = summary.unclean()
    if notes:
        print(f"\n{len(notes)} run(s) to read with care (see summary.md)")

    if not args.no_chart:
        data = os.path.join(args.dir, "chart.dat")
        png = os.path.join(args.dir, "chart.png")
        with open(data, "w") as f:
            f.write(summary.chart_data())
        if shutil.which("gnuplot"):
            script = gnuplot_script(summary, data, png)
            with open(os.path.join(args.dir, "chart.gp"), "w") as f:
                f.write(script)
            r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True, timeout=60)
            if r.returncode != 0:  # the numbers above still stand
                print(f"summarise: warning: gnuplot failed, no chart: {r.stderr.strip()}", file=sys.stderr)
        else:
            print("summarise: gnuplot not found, no chart", file=sys.stderr)
    print(f"\nsummary: {os.path.join(args.dir, 'summary.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
