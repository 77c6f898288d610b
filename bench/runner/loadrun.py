"""loadrun.py: one load run of the benchmark, measured; one row of runs.csv.

    bench/run loadrun --csv RUNS --key REP,BACKEND,EMULATOR,PLACEMENT,GUEST
        --loadgen ab|wrk --load k1 --secs N --url URL --raw PREFIX
        [--server-pid PID] [--netns NS] [--cpu CORE] [--busy-pct P]
        [--console FILE --console-in FIFO --counters FILE]
        [--insns FILE --insns-ctl FIFO] [--warmup SECS]
    bench/run loadrun --csv RUNS --key ... --loadgen G --load L --status STATUS
        (a row for a load that could not run: no_boot)

The load generator runs inside network namespace NS (ip netns exec), when
--cpu is given on that CPU (taskset), under timeout. `ip netns exec` and
taskset exec into the next command and timeout waits for the load generator,
so the rusage of the one process this script reaps is the load generator's
(plus the wrappers' few milliseconds): no PID needs finding. Around it this
takes:
  - the guest's counters, when --console-in is given: Ctrl-T on its console
    right before the load generator starts and right after it exits, each
    answer cut from the console into the counters file under a mark line
    `@ LOAD LOADGEN before|after BOUND_MS`. BOUND_MS bounds how far the
    snapshot can lie from the load: before, from sending Ctrl-T to starting
    the load generator; after, from its exit to the end of the answer
    (the counters report reads the pairs);
  - CPU time: the server's (--server-pid: the QEMU process itself, from its
    pidfile, not qemu-run or `ip netns exec` above it; /proc/PID/stat sums
    every thread of it: vCPU, main loop, helpers, and those that ended; or
    the native server); the load generator's from its rusage when reaped;
    every CPU's busy time from /proc/stat (runner/hostcpu.py). What is left
    (busy - server - load generator, at least 0) is what other processes
    took; a run where that exceeds --busy-pct of a core is flagged busy;
  - the listen-overflow counter of the namespace the client runs in;
  - the guest's instructions, when --insns-ctl is given (a guest booted with
    tools/qemu-run --count FILE --count-ctl FIFO): a mark `LOAD-LOADGEN-before`
    written to the FIFO right before the load generator starts and
    `LOAD-LOADGEN-after` right after it exits, each answered by the plugin
    with a line of counts in FILE (tools/plugin/insncount.c); their
    difference over the requests completed gives the row's instructions per
    request: in all (insns_per_req), outside the wait loop (the classes
    other, kernel and user: insns_nowait_per_req), and for a guest with a
    user half, its kernel's and its user space's outside the idle loop
    (insns_kernel_per_req, insns_user_per_req); with more than one vCPU,
    each vCPU's outside the wait loop (insns_nowait_by_cpu, from the lines
    the plugin writes per vCPU before a mark's). Such a row is a run under the
    plugin (plugin 1): it slows the guest, so its requests/s are not the
    guest's (runner/records.py keeps them out of the medians);
  - --warmup SECS first runs the same load SECS seconds, unmeasured, so the
    measured run starts in the state the load keeps rather than the one the
    load before left: a new-connection load keeps the unikernel's pcbs in
    TIME_WAIT (2 s of connections, up to lwIP's pool), which lwIP walks to
    accept, demultiplex and remove a connection, so its instructions per
    request depend on that population (the http workload warms up the runs under
    the plugin).
Loads: kN = keep-alive, N connections; cN = a new connection per request.
ab: `ab -k` or not. wrk keeps connections alive by itself: for cN it sends
`Connection: close`, so the server closes after each answer and wrk connects
again (wrk's latency then starts at the request, after the connect; ab's
includes the connect). wrk's "Non-2xx or 3xx responses" (status >= 400) go to
non2xx; its socket errors (connect, read, write, timeout) to failed.
Standard library only.
"""
import argparse
import csv
import errno
import os
import re
import subprocess
import sys
import time

from .records import RUN_FIELDS, BUSY_PCT
from . import hostcpu

WRK_THREADS = int(os.environ.get("WRK_THREADS", "1"))  # wrk -t: one, as ab is one thread
TIMEOUT_S = 10  # a request slower than this fails (ab -s, wrk --timeout)


# ---- the load generators: command lines and what they print ---------------

def ab_argv(load, secs, url, pct_file):
    keepalive, conc = load[0] == "k", int(load[1:])
    cap = 2000000 if keepalive else 200000  # ab needs -n; -t ends the run first
    return (["ab", "-q", "-r", "-s", str(TIMEOUT_S)] + (["-k"] if keepalive else [])
            + ["-c", str(conc), "-t", str(secs), "-n", str(cap), "-e", pct_file, url])


def wrk_argv(load, secs, url):
    keepalive, conc = load[0] == "k", int(load[1:])
    return (["wrk", "-t", str(max(1, min(WRK_THREADS, conc))), "-c", str(conc), "-d", f"{secs}s",
             "--timeout", f"{TIMEOUT_S}s", "--latency"]
            + ([] if keepalive else ["-H", "Connection: close"]) + [url])


def parse_ab(text, pct_text=""):
    """ab's report (and its -e percentile CSV) as runs.csv fields."""
    out = {"requests": 0, "secs": None, "rps": None, "failed": 0, "non2xx": 0,
           "mean_ms": None, "p50_ms": None, "p99_ms": None}
    for line in text.splitlines():
        f = line.split()
        if line.startswith("Complete requests:"):
            out["requests"] = int(f[2])
        elif line.startswith("Failed requests:"):
            out["failed"] = int(f[2])
        elif line.startswith("Non-2xx responses:"):
            out["non2xx"] = int(f[2])
        elif line.startswith("Time taken for tests:"):
            out["secs"] = float(f[4])
        elif line.startswith("Requests per second:"):
            out["rps"] = float(f[3])
        elif line.startswith("Time per request:") and line.rstrip().endswith("(mean)"):
            out["mean_ms"] = float(f[3])
    for line in pct_text.splitlines():
        f = line.split(",")
        if len(f) == 2 and f[0] in ("50", "99"):
            out[f"p{f[0]}_ms"] = float(f[1])
    return out


UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}


def wrk_ms(text):
    """A wrk time ("123.45us", "1.20ms", "2.00s", "1.00m") in milliseconds."""
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m|h)", text)
    if not m:
        raise ValueError(f"not a wrk time: {text!r}")
    return float(m.group(1)) * UNIT_MS[m.group(2)]


def parse_wrk(text):
    """wrk's report (run with --latency) as runs.csv fields."""
    out = {"requests": 0, "secs": None, "rps": None, "failed": 0, "non2xx": 0,
           "mean_ms": None, "p50_ms": None, "p99_ms": None}
    in_dist = False
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "Latency" and len(f) >= 2 and f[1] != "Distribution":
            out["mean_ms"] = wrk_ms(f[1])
        elif line.strip() == "Latency Distribution":
            in_dist = True
            continue
        elif in_dist and re.fullmatch(r"\d+%", f[0]):
            if f[0] in ("50%", "99%"):
                out[f"p{f[0][:-1]}_ms"] = wrk_ms(f[1])
            continue
        in_dist = False
        m = re.match(r"\s*(\d+) requests in ([0-9.]+(?:us|ms|s|m|h)),", line)
        if m:
            out["requests"] = int(m.group(1))
            out["secs"] = wrk_ms(m.group(2)) / 1000.0
        elif line.strip().startswith("Non-2xx or 3xx responses:"):
            out["non2xx"] = int(f[-1])
        elif line.strip().startswith("Socket errors:"):
            out["failed"] = sum(int(x) for x in re.findall(r"\d+", line))
        elif f[0] == "Requests/sec:":
            out["rps"] = float(f[1])
    return out


# ---- the guest's counters (Ctrl-T on its console) -------------------------

class Counters:
    """Ctrl-T dumps of a guest, cut from its console into a .counters file."""

    # The dump's last line: the kernel prints it after every other counter
    # line, the per-CPU and lock lines of an SMP guest included.
    END = re.compile(r"^kernel: time us[^\n]*\n", re.M)

    def __init__(self, console, console_in, path, header):
        self.console = console  # the guest's console output (a file QEMU appends to)
        self.fd = os.open(console_in, os.O_WRONLY | os.O_NONBLOCK)  # its input fifo
        self.path = path  # the .counters file
        self.header = header  # "# rep R backend B ..." for a new file

    def take(self, timeout=5.0):
        """(time sent, time the answer was whole, its text); text None on a timeout."""
        off = os.path.getsize(self.console)
        sent = time.monotonic()
        os.write(self.fd, b"\x14")
        while True:
            with open(self.console, "rb") as f:
                f.seek(off)
                text = f.read().decode(errors="replace").replace("\r", "")
            m = self.END.search(text)
            now = time.monotonic()
            if m:
                return sent, now, text[:m.end()]
            if now - sent > timeout:
                return sent, now, None
            time.sleep(0.001)

    def record(self, mark, bound_s, text):
        new = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
        with open(self.path, "a") as f:
            if new:
                f.write(self.header + "\n")
            f.write(f"@ {mark} {1000 * bound_s:.1f}\n")
            if text is not None:
                f.write(text)

    def close(self):
        os.close(self.fd)


# ---- the guest's instructions (the counting plugin's marks) ---------------

# Classes the plugin counts outside any region: not the wait loop.
WORK_CLASSES = ("other", "kernel", "user")
MARK_LINE = re.compile(r"^([A-Za-z0-9_.-]+): total (\d+)((?:, [a-z_]+ \d+)*)$")


def parse_mark(line):
    """(label, {class: count, "total": count}) of a plugin line, or None."""
    m = MARK_LINE.match(line.strip())
    if not m:
        return None
    counts = {"total": int(m.group(2))}
    for part in m.group(3).split(", ")[1:]:
        name, value = part.split()
        counts[name] = int(value)
    return m.group(1), counts


class Insns:
    """Marks of the counting plugin: a label to its FIFO, a line in its file."""

    def __init__(self, path, ctl, timeout=5.0):
        self.path = path  # the plugin's out=FILE
        self.fd = None  # its ctl=FIFO, which the plugin holds open from QEMU's start
        t0 = time.monotonic()
        while self.fd is None:
            try:
                self.fd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:  # ENXIO: no reader yet
                if e.errno != errno.ENXIO or time.monotonic() - t0 > timeout:
                    raise
                time.sleep(0.01)

    def mark(self, label, timeout=5.0):
        """The counts at a mark taken now; None when no line came in time."""
        off = os.path.getsize(self.path) if os.path.exists(self.path) else 0
        os.write(self.fd, (label + "\n").encode())
        t0 = time.monotonic()
        while True:
            with open(self.path, "rb") as f:
                f.seek(off)
                per_vcpu = {}  # the vCPUs' own lines, which come before the sum's
                for line in f.read().decode(errors="replace").splitlines():
                    got = parse_mark(line)
                    if got and got[0].startswith(label + ".vcpu") and got[0][len(label) + 5:].isdigit():
                        vcpu = got[0][len(label) + 1:]
                        per_vcpu.update({f"{vcpu}.{k}": v for k, v in got[1].items()})
                    elif got and got[0] == label:
                        return dict(got[1], **per_vcpu)
            if time.monotonic() - t0 > timeout:
                return None
            time.sleep(0.001)

    def close(self):
        os.close(self.fd)


def insns_fields(before, after, requests):
    """The runs.csv instruction columns of one load (empty when unknown)."""
    out = {k: "" for k in ("insns_per_req", "insns_nowait_per_req", "insns_kernel_per_req", "insns_user_per_req")}
    if before is None or after is None or not requests:
        return out
    d = {k: after[k] - before[k] for k in after if k in before}
    out["insns_per_req"] = f"{d['total'] / requests:.1f}"
    out["insns_nowait_per_req"] = f"{sum(d.get(k, 0) for k in WORK_CLASSES) / requests:.1f}"
    if "kernel" in d and "user" in d:
        out["insns_kernel_per_req"] = f"{d['kernel'] / requests:.1f}"
        out["insns_user_per_req"] = f"{d['user'] / requests:.1f}"
    return out


def insns_by_cpu(before, after, requests):
    """insns_nowait_by_cpu: each vCPU's instructions outside the wait loop
    per request, '/' between vCPUs in their order; '' with one vCPU (the
    plugin writes no vCPU lines then) or a mark missing."""
    if before is None or after is None or not requests:
        return ""
    vcpus = sorted({int(k.split(".")[0][4:]) for k in after if re.match(r"^vcpu\d+\.", k)})
    if len(vcpus) < 2:
        return ""
    work = lambda marks, v: sum(marks.get(f"vcpu{v}.{c}", 0) for c in WORK_CLASSES)  # noqa: E731
    return "/".join(f"{(work(after, v) - work(before, v)) / requests:.1f}" for v in vcpus)


# ---- one run --------------------------------------------------------------

def listen_overflows(netns):
    """TcpExt ListenOverflows in the client's namespace, None if unreadable."""
    cmd = (["ip", "netns", "exec", netns] if netns else []) + ["cat", "/proc/net/netstat"]
    try:
        text = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    col = None
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "TcpExt:":
            if col is None:
                col = f.index("ListenOverflows") if "ListenOverflows" in f else -1
            elif col > 0:
                return int(f[col])
    return None


def run(args):
    """Runs the load; returns the runs.csv row (a dict) and a log line."""
    prefix = (["ip", "netns", "exec", args.netns] if args.netns else []) + \
             (["taskset", "-c", args.cpu] if args.cpu else []) + \
             ["timeout", "-k", "5", str(args.secs + 45)]
    if args.loadgen == "ab":
        argv = ab_argv(args.load, args.secs, args.url, args.raw + ".pct")
    else:
        argv = wrk_argv(args.load, args.secs, args.url)
    out_path = f"{args.raw}.{args.loadgen}"
    counters = None
    if args.console_in:
        header = "# " + " ".join(f"{k} {v}" for k, v in zip(
            ("rep", "backend", "emulator", "placement", "guest"), args.key.split(",")))
        if args.insns_ctl:  # the plugin slows the guest: its stage times are not the guest's
            header += " plugin 1"
        counters = Counters(args.console, args.console_in, args.counters, header)
    if args.warmup:
        warm = ab_argv(args.load, args.warmup, args.url, args.raw + ".warmup.pct") if args.loadgen == "ab" \
            else wrk_argv(args.load, args.warmup, args.url)
        with open(f"{args.raw}.warmup.{args.loadgen}", "w") as out:
            subprocess.run(prefix[:-1] + [str(args.warmup + 45)] + warm, stdout=out, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
    insns = Insns(args.insns, args.insns_ctl) if args.insns_ctl else None
    ov0 = listen_overflows(args.netns)
    before = counters.take() if counters else None
    label = f"{args.load}-{args.loadgen}"
    insns0 = insns.mark(f"{label}-before") if insns else None

    with open(out_path, "w") as out:
        busy0, steal0 = hostcpu.cpu_ticks()
        srv0 = hostcpu.process_ticks(args.server_pid) if args.server_pid else None
        t0 = time.monotonic()
        proc = subprocess.Popen(prefix + argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        t1 = time.monotonic()
        busy1, steal1 = hostcpu.cpu_ticks()
        srv1 = hostcpu.process_ticks(args.server_pid) if args.server_pid else None
        proc.returncode = os.waitstatus_to_exitcode(status)
    insns1 = insns.mark(f"{label}-after") if insns else None
    after = counters.take() if counters else None
    if insns:
        insns.close()
    ov1 = listen_overflows(args.netns)
    if counters:
        mark = f"{args.load} {args.loadgen}"
        counters.record(f"{mark} before", t0 - before[0], before[2])
        counters.record(f"{mark} after", after[1] - t1, after[2])
        counters.close()

    with open(out_path, errors="replace") as f:
        text = f.read()
    if args.loadgen == "ab":
        try:
            with open(args.raw + ".pct") as f:
                pct = f.read()
        except OSError:
            pct = ""
        res = parse_ab(text, pct)
    else:
        res = parse_wrk(text)

    wall = t1 - t0
    server_s = (srv1 - srv0) / hostcpu.HZ if srv0 is not None and srv1 is not None else None
    gen_s = usage.ru_utime + usage.ru_stime
    others_s = (busy1 - busy0) / hostcpu.HZ - (server_s or 0) - gen_s
    others_pct = max(0.0, 100 * others_s / wall) if wall > 0 else 0.0
    steal_pct = 100 * (steal1 - steal0) / hostcpu.HZ / wall if wall > 0 else 0.0
    ov = (ov1 - ov0) if ov0 is not None and ov1 is not None else 0

    if proc.returncode != 0:
        state = f"{args.loadgen}_error"
    elif res["requests"] == 0:
        state = "no_requests"
    elif res["failed"] or res["non2xx"]:
        state = "errors"
    else:
        state = "ok"
    if args.server_pid and srv1 is None:
        state = "server_died"

    secs = res["secs"]
    row = dict(zip(("rep", "backend", "emulator", "placement", "guest"), args.key.split(",")))
    row.update({
        "loadgen": args.loadgen, "load": args.load, "keepalive": int(args.load[0] == "k"),
        "concurrency": int(args.load[1:]), "requests": res["requests"],
        "secs": f"{secs:.3f}" if secs is not None else "",
        "rps": f"{res['rps']:.1f}" if res["rps"] is not None else "",
        "failed": res["failed"], "non2xx": res["non2xx"],
        "mean_ms": fmt(res["mean_ms"], 3), "p50_ms": fmt(res["p50_ms"], 3), "p99_ms": fmt(res["p99_ms"], 3),
        "server_cpu_s": fmt(server_s, 2),
        "server_cpu_pct": fmt(100 * server_s / secs if server_s is not None and secs else None, 1),
        "cpu_us_per_req": fmt(1e6 * server_s / res["requests"] if server_s is not None and res["requests"] else None, 2),
        "loadgen_cpu_s": f"{gen_s:.2f}", "others_cpu_pct": f"{others_pct:.1f}",
        "steal_pct": f"{steal_pct:.1f}", "busy": int(others_pct > args.busy_pct),
        "listen_overflows": ov, "overflow": int(ov > 0), "status": state,
        "plugin": int(insns is not None),
    })
    if insns:
        row.update(insns_fields(insns0, insns1, res["requests"]))
        row["insns_nowait_by_cpu"] = insns_by_cpu(insns0, insns1, res["requests"])
    log = (f"{row['rps'] or '-'} req/s, {row['failed']} failed, {row['non2xx']} non-2xx, "
           f"p50 {row['p50_ms'] or '-'} p99 {row['p99_ms'] or '-'} ms, "
           f"{row['cpu_us_per_req'] or '-'} us CPU/req, others {row['others_cpu_pct']}% of a core"
           f"{' (BUSY)' if row['busy'] else ''}, overflow {row['overflow']}, {state}")
    if counters:
        log += (f"; counters {1000 * (t0 - before[0]):.0f} ms before, {1000 * (after[1] - t1):.0f} ms after"
                + ("" if before[2] is not None and after[2] is not None else " (a dump is missing)"))
    if insns:
        log += (f"; {row['insns_per_req']} instructions/req, {row['insns_nowait_per_req']} outside the wait"
                if row["insns_per_req"] else "; instructions: a mark is missing")
    return row, log


def fmt(v, digits):
    return "" if v is None else f"{v:.{digits}f}"


def append_row(path, row):
    with open(path, "a", newline="") as f:
        csv.DictWriter(f, fieldnames=RUN_FIELDS, restval="", lineterminator="\n").writerow(row)


def parse_args(argv):
    """The options of one run (the usage above); exits 2 on bad ones."""
    ap = argparse.ArgumentParser(prog="bench/run loadrun", description="One measured load run (a row of runs.csv).")
    ap.add_argument("--csv", required=True, help="runs.csv to append to")
    ap.add_argument("--key", required=True, help="REP,BACKEND,EMULATOR,PLACEMENT,GUEST")
    ap.add_argument("--loadgen", required=True, choices=["ab", "wrk"])
    ap.add_argument("--load", required=True)
    ap.add_argument("--status", help="write an empty row with this status and exit")
    ap.add_argument("--plugin", type=int, choices=[0, 1], default=0,
                    help="with --status: the row is of a run under the plugin")
    ap.add_argument("--secs", type=int, default=4)
    ap.add_argument("--url")
    ap.add_argument("--raw", help="prefix of the raw output files")
    ap.add_argument("--server-pid", type=int)
    ap.add_argument("--netns", default="")
    ap.add_argument("--cpu", default="", help="CPU the load generator runs on (taskset -c)")
    ap.add_argument("--busy-pct", type=float, default=BUSY_PCT)
    ap.add_argument("--console")
    ap.add_argument("--console-in")
    ap.add_argument("--counters")
    ap.add_argument("--insns", help="the counting plugin's out file (tools/qemu-run --count)")
    ap.add_argument("--insns-ctl", help="its mark FIFO (tools/qemu-run --count-ctl)")
    ap.add_argument("--warmup", type=int, default=0, help="seconds of the same load first, unmeasured")
    args = ap.parse_args(argv)
    if not re.fullmatch(r"[kc][1-9][0-9]*", args.load):
        ap.error(f"bad load {args.load!r}")
    if len(args.key.split(",")) != 5:
        ap.error("--key needs 5 fields")
    if args.status:
        return args
    if not args.url or not args.raw:
        ap.error("--url and --raw are needed")
    if args.console_in and not (args.console and args.counters):
        ap.error("--console-in needs --console and --counters")
    if bool(args.insns) != bool(args.insns_ctl):
        ap.error("--insns and --insns-ctl go together")
    return args


def measure(argv):
    """One run (or, with --status, its empty row) appended to --csv; the
    log line of a run, None for an empty row."""
    args = parse_args(argv)
    if args.status:
        row = dict(zip(("rep", "backend", "emulator", "placement", "guest"), args.key.split(",")))
        row.update({"loadgen": args.loadgen, "load": args.load, "keepalive": int(args.load[0] == "k"),
                    "concurrency": int(args.load[1:]), "status": args.status, "plugin": args.plugin})
        append_row(args.csv, row)
        return None
    row, log = run(args)
    append_row(args.csv, row)
    return log


def main(argv):
    log = measure(argv)
    if log is not None:
        print(log)
    return 0
