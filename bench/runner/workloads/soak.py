"""soak.py: a long run against the unikernel's httpd that must fail no request
and leak nothing (make soak; tests/integration/httpd/36-soak-short-tap.sh
runs a short one).

Boots IMAGE (default build/apps/httpd.elf) under tools/qemu-run on a tap
device in a private network namespace (tools/lib/netns.sh), its console input
a fifo so that Ctrl-T (0x14) makes the guest print its counters, then:
  1. warm-up: WARM_ROUNDS rounds of a little load at every concurrency the
     soak uses and at HEADROOM connections more, so ARP, the pools' first use
     and the heap's growth to its working size (and a little beyond) happen
     here
  2. idle, then the baseline: the newest `pools:` line after a Ctrl-T,
     retaken 1 s apart until two agree
  3. the load: KEEPALIVE requests with ab -k (split over CONC_K) and NEW
     requests on new connections with ab (split over CONC_N), every ab run
     bounded by TIMEOUT; each must complete all its requests, none failed,
     none non-2xx
  4. idle again (TIME_WAIT lasts 2 s here), the end snapshot, compared field
     by field with the baseline: every field must be equal, the heap's
     high-water mark included (it may only have grown during the warm-up),
     except the heap's break at idle, which may differ by TRIM_SLACK
  5. GET /__shutdown: the guest must exit with status 0 (qemu-run's 0 is the
     app's own: a crash, a reset or a QEMU failure comes out as 70 or
     201-205, with qemu-run's reason on the console)
bench/run exits 0 when all holds; 1 on a failed or unfinished load, a pool
that did not come back, or a bad exit (also when the guest never answers:
then no report); 2 on bad settings; 77 when no namespace can be made here
(not root, no ip, no /dev/net/tun, or `ip netns add` refused).

The settings (bench/specs/soak.toml; make passes SOAK_X as X):
  KEEPALIVE, NEW      requests in all, keep-alive and on new connections
  CONC_K, CONC_N      the concurrencies each is split over, evenly (the
                      remainder on the first)
  TIMEOUT             seconds one ab run may take
  SETTLE              seconds of idle before a snapshot (TIME_WAIT is 2 s)
  SETTLE_MAX          seconds the end snapshot may keep being retaken, 1 s
                      apart, until it equals the baseline: pcbs slow to leave
                      TIME_WAIT are not a leak, a pool that stays up is
  WARM_ROUNDS         warm-up rounds
  HEADROOM            connections beyond the highest concurrency in each
                      warm-up's keep-alive runs (~200 KiB of heap in httpd
                      and the socket layer): where newlib's malloc places
                      blocks depends on the order connections come and go,
                      so the same load's heap peak varies by a page or so;
                      the headroom sets the high-water mark above that
                      jitter, and the soak must then never pass it (0: none)
  TRIM_SLACK          bytes the heap's break at idle may differ by: newlib's
                      malloc returns free memory at the top of the heap only
                      past its trim threshold (128 KiB), so at idle the break
                      lies anywhere up to 128 KiB (plus a page) above the last
                      block in use; a leak shows in malloc-bytes, compared
                      exactly (0: exact)
  IMAGE               the guest (empty: $BUILD/apps/httpd.elf)
Out: report.md (the load table, the pools table and the verdict; printed at
the end too), loads.tsv (a row per ab run), meta.txt and batch.log, and in
raw/ console.log (the guest's console), counters.txt (every Ctrl-T answer
under a line `@ LABEL`) and ab-PHASE-N.txt (each ab run's output).
"""
import os
import platform
import re
import shutil
import subprocess
import time

from .. import boot, hostlib, loadrun
from ..batch import Step
from ..guest import Guest
from ..spec import ROOT, SpecError

PORT = 80
BOOT_SECS = 60  # the first HTTP answer, at most
SNAPSHOT_SECS = 10.0  # a whole Ctrl-T answer, at most
STOP_SECS = 30  # the guest's exit after /__shutdown, at most
# Rates for the plan's time estimates only (2-core TCG, docs/hardening.md).
EST_RPS_K, EST_RPS_N = 20000, 4000
TSV_HEADER = ["phase", "ab", "n", "c", "complete", "failed", "non2xx", "req_s", "ab_secs", "wall_secs", "status"]


class Dumps(loadrun.Counters):
    """Ctrl-T answers, as loadrun's Counters takes them (to the dump's last
    line, `kernel: time us`), but through the guest's own console input
    (Guest.fd)."""

    def __init__(self, console, fd):
        self.console, self.fd = console, fd


def pools_fields(line):
    """[(field, value)] of a `pools:` line: "pools: RAW_PCB 0 ...; lwip-heap
    312; ... heap-bytes N high-water N" is name/value pairs once the ';' go.
    report/counters.py's parse_line does not fit: it lowercases the names into
    columns, and PBUF_REF/ROM is no label to it (its count comes out as
    pools.sys_timeout_pbuf_pool), where this table shows the guest's names."""
    words = line[len("pools:"):].replace(";", " ").split() if line else []
    return [("heap-high-water" if k == "high-water" else k, v) for k, v in zip(words[0::2], words[1::2])]


def counts_part(line):
    """A pools line up to its heap figures: the part that must come back
    exactly and only falls back with time (the heap's are judged per field)."""
    i = line.rfind("; heap-bytes ")
    return line if i < 0 else line[:i]


def split_requests(total, concs):
    """[(n, c)]: total requests split evenly over the concurrencies, the
    remainder on the first; ab needs at least as many requests as
    connections."""
    each, out = total // len(concs), []
    for i, c in enumerate(concs):
        n = each + (total % len(concs) if i == 0 else 0)
        if n < c:
            raise SpecError(f"{total} requests cannot be split over concurrencies {' '.join(map(str, concs))}: "
                            f"{n} < {c}")
        out.append((n, c))
    return out


class Workload:
    def __init__(self, spec):
        self.spec = s = spec
        big = 10 ** 12
        for k in ("KEEPALIVE", "NEW", "TIMEOUT", "SETTLE", "SETTLE_MAX", "WARM_ROUNDS", "HEADROOM", "TRIM_SLACK"):
            setattr(self, k.lower(), s.int(k, 0, big))
        self.conc = {}
        for k in ("CONC_K", "CONC_N"):
            words = s.str(k).split()
            if not words:
                raise SpecError("CONC_K and CONC_N must name at least one concurrency")
            for w in words:
                if not w.isdigit() or int(w) == 0:
                    raise SpecError(f"CONC_K and CONC_N take concurrencies > 0, not '{w}'")
            self.conc[k] = [int(w) for w in words]
        build = os.environ.get("BUILD") or "build"
        self.image = s.str("IMAGE") or f"{build}/apps/httpd.elf"
        self.smp = s.int("SMP", 1, 64)
        self.kopts = s.str("KOPTS").split()
        for w in self.kopts:
            if not re.fullmatch(r"[a-z0-9_]+(=[A-Za-z0-9_.:,-]+)?", w):
                raise SpecError(f"KOPTS: '{w}' is not a kernel option (name or name=value)")
        self.loader = f"{build}/loader/loader.elf"
        for f in (self.image, self.loader):
            if not os.path.isfile(os.path.join(ROOT, f)):
                raise SpecError(f"no {self.image} or {self.loader} (run make)")
        if shutil.which("ab") is None or shutil.which("curl") is None:
            raise SpecError("ab and curl are needed")
        self.plan_k = split_requests(self.keepalive, self.conc["CONC_K"])
        self.plan_n = split_requests(self.new, self.conc["CONC_N"])
        self.cmax = max(self.conc["CONC_K"] + self.conc["CONC_N"])
        self.url = f"http://{hostlib.NETNS['NETNS_GUEST_IP']}"
        self.ns, self.guest, self.out = "", None, None
        self.fatal = None  # bench/run's status when the soak stopped before its report
        self.failures, self.rows = [], []
        self.snaps = {"boot": "", "warm": "", "end": "", "exit": ""}
        self.warm_broken = self.keepalive_ok = False
        self.soak_t0 = self.soak_secs = self.settle_secs = 0
        self.exit_rc = "?"

    # ---- the plan ------------------------------------------------------------
    def warm_plan(self):
        """The warm-up's runs: ([(n, c)] keep-alive, [(n, c)] new)."""
        ks = self.conc["CONC_K"] + ([self.cmax + self.headroom] if self.headroom > 0 else [])
        return ([(max(c * 50, 2000), c) for c in ks], [(max(c * 50, 1000), c) for c in self.conc["CONC_N"]])

    def plan(self):
        wk, wn = self.warm_plan()
        warm_secs = sum(n for n, _ in wk) / EST_RPS_K + sum(n for n, _ in wn) / EST_RPS_N + self.settle + 2
        over = lambda k: ", -c ".join(map(str, self.conc[k]))  # noqa: E731
        steps = [Step(f"boot {self.image} on tap", 10, self.boot_guest)]
        steps += [Step(f"warm-up, round {r} of {self.warm_rounds}", warm_secs, lambda b, r=r: self.warm_up(b, r))
                  for r in range(1, self.warm_rounds + 1)]
        steps += [Step("baseline: the pools after the warm-up", 3, self.baseline),
                  Step(f"keep-alive: {self.keepalive} requests over -c {over('CONC_K')}",
                       self.keepalive / EST_RPS_K, self.keepalive_phase),
                  Step(f"new connections: {self.new} requests over -c {over('CONC_N')}",
                       self.new / EST_RPS_N, self.new_phase),
                  Step("idle, then the pools after the load", self.settle + 2, self.end),
                  Step("GET /__shutdown", 2, self.shutdown)]
        return steps

    def start(self, batch):
        self.batch, self.out = batch, batch.out
        self.console = os.path.join(batch.raw, "console.raw")
        self.tsv = os.path.join(batch.out, "loads.tsv")
        with open(self.tsv, "w") as f:
            f.write("\t".join(TSV_HEADER) + "\n")
        self.accel = boot.accel().split()[-1]  # "accel tcg" -> tcg
        flags = hostlib.image_flags(os.path.join(ROOT, boot.uk_flags_file(self.image)))
        batch.meta(f"image: {self.image}, {flags} (loader {self.loader}); tap back-end; QEMU accel {self.accel}",
                   "ab runs: keep-alive " + ", ".join(f"{n} at -c {c}" for n, c in self.plan_k)
                   + "; new connections " + ", ".join(f"{n} at -c {c}" for n, c in self.plan_n))

    # ---- messages ------------------------------------------------------------
    def failure(self, msg):
        """A check that failed: the soak goes on, so the pools are still
        compared, and the verdict lists it."""
        self.failures.append(msg)
        self.batch.log(f"FAILED: {msg}")

    def net_exec(self):
        return ["ip", "netns", "exec", self.ns]

    # ---- the guest -------------------------------------------------------------
    def boot_guest(self, batch):
        if not hostlib.netns_usable():
            batch.log("the tap back-end needs root, ip and /dev/net/tun")
            self.fatal = 77
            return
        ns = f"soak-{os.getpid()}"
        if not hostlib.netns_create(ns):
            batch.log("cannot create a network namespace here")
            self.fatal = 77
            return
        self.ns = ns
        # QEMU itself is bounded too: every ab run at its limit plus boot and idles.
        nruns = (len(self.conc["CONC_K"]) + len(self.conc["CONC_N"]) + 1) * (self.warm_rounds + 1)
        n = hostlib.NETNS
        kopts = "".join(w + " " for w in self.kopts)
        qemu = [os.path.join(ROOT, "tools/qemu-run"), "--net", "tap", "--tap", n["NETNS_TAP"], "--smp", str(self.smp),
                "--timeout", str(nruns * self.timeout + 600), "--append",
                f"{kopts}ip={n['NETNS_GUEST_IP']} gw={n['NETNS_HOST_IP']} mask={n['NETNS_MASK']} -- -p {PORT} -s -q",
                os.path.join(ROOT, self.loader), os.path.join(ROOT, self.image)]
        self.guest = Guest(self.net_exec() + qemu, self.console, os.path.join(batch.raw, "qemu.pid"),
                           os.path.join(batch.raw, "console-in.fifo"))
        if self.guest.fd is None:
            batch.log("no fifo for the console")
            self.fatal = 2
            return
        self.dumps = Dumps(self.console, self.guest.fd)
        batch.log(f"booting {self.image} in namespace {ns}; results in {self.out}")
        if not self.guest.wait_http(self.url + "/", BOOT_SECS, self.net_exec()):
            print(self.console_text(), end="")
            batch.log("no HTTP answer from the guest")
            self.fatal = 1
            return
        self.snaps["boot"] = self.snapshot("boot")

    def console_text(self):
        try:
            with open(self.console, errors="replace") as f:
                return f.read().replace("\r", "")
        except OSError:
            return ""

    def last_console_line(self, prefix):
        lines = [ln for ln in self.console_text().split("\n") if ln.startswith(prefix)]
        return lines[-1] if lines else ""

    def snapshot(self, label):
        """Ctrl-T and the whole answer, appended to counters.txt under
        `@ LABEL`; its pools line, or "" (a failure) when none came."""
        text = None
        if self.guest.alive():
            _, _, text = self.dumps.take(SNAPSHOT_SECS)
        if text is not None:
            with open(os.path.join(self.batch.raw, "counters.txt"), "a") as f:
                f.write(f"@ {label}\n{text}")
        pools = [ln for ln in (text or "").split("\n") if ln.startswith("pools:")]
        if pools:
            return pools[-1]
        self.failure(f"no counters from the guest for '{label}'")
        return ""

    # ---- loads -------------------------------------------------------------------
    def run_ab(self, name, phase, n, c, keepalive):
        """One ab run: a loads.tsv row; False (and a failure) unless it
        completed every request, none failed and none non-2xx."""
        path = os.path.join(self.batch.raw, f"ab-{name}.txt")
        cmd = f"ab {'-k ' if keepalive else ''}-n {n} -c {c}"
        t0 = time.monotonic()
        with open(path, "w") as f:
            rc = subprocess.run(self.net_exec() + ["timeout", str(self.timeout), "ab"] + (["-k"] if keepalive else [])
                                + ["-n", str(n), "-c", str(c), "-s", "30", self.url + "/"],
                                stdout=f, stderr=subprocess.STDOUT).returncode
        wall = f"{time.monotonic() - t0:.1f}"
        with open(path, errors="replace") as f:
            text = f.read()
        ab = loadrun.parse_ab(text)
        # ab prints its report whole or not at all: without it, no figures.
        told = bool(re.search(r"^Complete requests:", text, re.M))
        complete, failed = (str(ab["requests"]), str(ab["failed"])) if told else ("", "")
        rps = f"{ab['rps']:.2f}" if ab["rps"] is not None else ""
        taken = f"{ab['secs']:.3f}" if ab["secs"] is not None else ""
        status = "ok"
        if rc == 124:
            status = f"did not finish within TIMEOUT={self.timeout}s"
        elif rc != 0:
            said = [ln for ln in text.split("\n") if ln and not ln.startswith(("Completed", "Finished"))]
            status = f"ab exited with {rc}: {said[-1] if said else ''}"
        elif complete != str(n):
            status = f"{complete} of {n} complete"
        elif failed != "0":
            status = f"{failed} failed"
        elif ab["non2xx"]:
            status = f"{ab['non2xx']} non-2xx"
        row = [phase, cmd, str(n), str(c), complete or "-", failed or "-", str(ab["non2xx"]), rps or "-",
               taken or "-", wall, status]
        self.rows.append(row)
        with open(self.tsv, "a") as f:
            f.write("\t".join(row) + "\n")
        self.batch.log(f"  {cmd}: {complete or '?'} complete, {failed or '?'} failed, {rps or '?'} req/s, "
                       f"{wall}s: {status}")
        if status != "ok":
            self.failure(f"{cmd} ({name}): {status}")
        return status == "ok"

    def run_phase(self, phase, runs, keepalive):
        """The runs of one phase in order, up to the first that fails."""
        return all(self.run_ab(f"{phase}-{i}", phase, n, c, keepalive) for i, (n, c) in enumerate(runs, 1))

    def warm_up(self, batch, r):
        """A round of the warm-up. The first grows the heap from its boot
        state; later ones start, as the soak does, from a trimmed heap whose
        free chunks lie elsewhere; the run at HEADROOM connections more than
        any the soak makes sets the heap's peak."""
        if self.fatal or self.warm_broken:
            return
        wk, wn = self.warm_plan()
        if not (self.run_phase(f"warmup{r}-k", wk, True) and self.run_phase(f"warmup{r}-new", wn, False)):
            self.warm_broken = True
            return
        time.sleep(self.settle)
        if r != self.warm_rounds:
            snap = self.snapshot(f"warm-up round {r}")
            if snap:
                batch.log(f"  {snap}")

    def baseline(self, batch):
        """Snapshots 1 s apart until two agree: the last warm-up connections
        may still be leaving TIME_WAIT."""
        if self.fatal:
            return
        warm = self.snapshot("warm")
        t1 = time.monotonic()
        while warm:
            time.sleep(1)
            snap = self.snapshot("warm")
            if not snap or snap == warm:
                break
            warm = snap
            if time.monotonic() - t1 >= self.settle_max:
                self.failure("the pools did not settle after the warm-up")
                break
        self.snaps["warm"] = warm
        batch.log(f"baseline: {warm}")

    def keepalive_phase(self, batch):
        if self.fatal:
            return
        self.soak_t0 = time.monotonic()
        if self.failures:  # the warm-up failed: no soak
            batch.log("skipped: the warm-up failed")
            return
        self.keepalive_ok = self.run_phase("keepalive", self.plan_k, True)

    def new_phase(self, batch):
        if self.fatal:
            return
        if self.keepalive_ok:
            self.run_phase("new", self.plan_n, False)
        else:
            batch.log("skipped")
        self.soak_secs = round(time.monotonic() - self.soak_t0)

    def end(self, batch):
        """Idle for SETTLE, then retaken 1 s apart while its counts differ
        from the baseline's, for SETTLE_MAX at most; how long it took goes
        into the report."""
        if self.fatal:
            return
        time.sleep(self.settle)
        t1, end = time.monotonic(), ""
        while True:
            snap = self.snapshot("end")
            if not snap:
                break
            end = snap
            if counts_part(end) == counts_part(self.snaps["warm"]) or time.monotonic() - t1 >= self.settle_max:
                break
            time.sleep(1)
        self.settle_secs = self.settle + round(time.monotonic() - t1)
        self.snaps["end"] = end
        batch.log(f"end:      {end}")

    def shutdown(self, batch):
        if self.fatal:
            return
        boot.stop_guest(batch, self.guest, "the guest", boot.http_shutdown(self.url, self.net_exec()), STOP_SECS)
        rc = self.guest.rc  # None: it was killed
        if rc is None:
            self.failure("the guest did not stop on /__shutdown")
            self.exit_rc = "killed"
        else:
            self.exit_rc = str(rc)
            why = self.last_console_line("qemu-run:")
            if rc != 0:
                self.failure(f"the guest exited with status {rc}, not 0" + (f" ({why})" if why else ""))
        self.snaps["exit"] = self.last_console_line("pools:")

    # ---- the report ----------------------------------------------------------------
    def fields_table(self):
        """Rows: field, boot, after warm-up, after the load, at exit, verdict;
        in the guest's order."""
        fields = {k: dict(pools_fields(v)) for k, v in self.snaps.items()}
        order = [f for f, _ in pools_fields(self.snaps["warm"] or self.snaps["end"])]
        order += [f for f, _ in pools_fields(self.snaps["end"]) if f not in order]
        rows = []
        for f in order:
            b, w, e, x = (fields[k].get(f, "") for k in ("boot", "warm", "end", "exit"))
            if w and w == e:
                v = "equal"
            elif w and e:
                d = int(e) - int(w)
                v = (f"within the trim slack ({d:+d})" if f == "heap-bytes" and abs(d) <= self.trim_slack
                     else f"**DIFFERS** ({d:+d})")
            else:
                v = "**DIFFERS** (missing)"
            rows.append((f, f"| {f} | {b or '-'} | {w or '-'} | {e or '-'} | {x or '-'} | {v} |"))
        return rows

    def phase_totals(self, phase):
        """A phase's row: requests, failures, elapsed (ab's own time, else the
        wall time) and the rate over it."""
        rows = [r for r in self.rows if r[0] == phase]
        num = lambda v: 0.0 if v == "-" else float(v)  # noqa: E731
        n, c, f, x = (int(sum(num(r[i]) for r in rows)) for i in (2, 4, 5, 6))
        t = sum(num(r[9]) if r[8] == "-" else num(r[8]) for r in rows)
        w = sum(num(r[9]) for r in rows)
        ok = all(r[10] == "ok" for r in rows)
        return (f"| {phase} | {n} | {c} | {f} | {x} | {c / t if t > 0 else 0:.0f} | {t:.1f} | {w:.1f} | "
                f"{'ok' if ok else '**FAILED**'} |")

    def git_state(self):
        def git(*args):
            return subprocess.run(["git"] + list(args), cwd=ROOT, capture_output=True, text=True)
        head = git("rev-parse", "--short", "HEAD").stdout.strip()
        return head + ("" if git("diff", "--quiet", "HEAD", "--").returncode == 0 else ", tree modified")

    def report(self):
        s, warm, end = self.spec, self.snaps["warm"], self.snaps["end"]
        table = []
        if not warm or not end:
            self.failure(f"no pools snapshot to compare (baseline '{'ok' if warm else ''}', end '{'ok' if end else ''}')")
        else:
            rows = self.fields_table()
            table = [line for _, line in rows]
            differs = [f for f, line in rows if "**DIFFERS**" in line]
            if differs:
                self.failure(f"pools not back to the baseline after the load: {' '.join(differs)}")
        verdict = "FAIL" if self.failures else "PASS"
        try:
            with open("/proc/loadavg") as f:
                load = " ".join(f.read().split()[:3])
        except OSError:
            load = "?"
        phases = list(dict.fromkeys(r[0] for r in self.rows))
        warm_conns = self.cmax + self.headroom if self.headroom > 0 else self.cmax
        out = [
            f"# Soak: {time.strftime('%Y-%m-%d %H:%M:%S')}",
            "",
            f"Image `{self.image}` (git {self.git_state()}),",
            f"tap back-end, {platform.node()}, {len(os.sched_getaffinity(0))} CPUs, QEMU accel {self.accel}; "
            f"load average at the end: {load}.",
            f"Settings: KEEPALIVE={self.keepalive} NEW={self.new} CONC_K=\"{s.str('CONC_K')}\" "
            f"CONC_N=\"{s.str('CONC_N')}\" TIMEOUT={self.timeout} SETTLE={self.settle} SETTLE_MAX={self.settle_max}",
            f"WARM_ROUNDS={self.warm_rounds} HEADROOM={self.headroom} TRIM_SLACK={self.trim_slack}.",
            "",
            "## Loads",
            "",
            "| phase | run | requests | complete | failed | non-2xx | req/s | ab time (s) | wall (s) | status |",
            "|---|---|---|---|---|---|---|---|---|---|"]
        out += [f"| {r[0]} | `{r[1]}` | {' | '.join(r[2:3] + r[4:])} |" for r in self.rows]
        out += [
            "",
            "Per phase (req/s = complete requests / ab's time):",
            "",
            "| phase | requests | complete | failed | non-2xx | req/s | elapsed (s) | wall (s) | status |",
            "|---|---|---|---|---|---|---|---|---|"]
        out += [self.phase_totals(p) for p in phases]
        out += [
            "",
            f"Soak (keep-alive + new connections) wall time: {self.soak_secs}s.",
            "",
            "## Pools",
            "",
            f"Compared: **after warm-up** (idle {self.settle}s, then steady across two snapshots) against "
            "**after the load**",
            f"(idle {self.settle_secs}s, until its counts matched or for at most SETTLE+SETTLE_MAX s). Every field "
            "must be equal,",
            f"the heap's high-water mark included (the warm-up ran up to {warm_conns} connections at once, the soak "
            f"{self.cmax}),",
            f"except heap-bytes, the heap's break at idle, which may differ by up to TRIM_SLACK={self.trim_slack} "
            "bytes",
            "(newlib's malloc keeps up to 128 KiB free at the top; bytes in use are malloc-bytes, compared exactly).",
            "*boot* (before the warm-up, where the heap grows) and *exit* (after the shutdown request: the listener",
            "and the app's descriptors are gone) are shown for reference only.",
            "",
            "| field | boot | after warm-up | after load | exit | after load vs after warm-up |",
            "|---|---|---|---|---|---|",
            "\n".join(table),
            "",
            f"Guest exit status after /__shutdown: {self.exit_rc}.",
            "",
            f"## Verdict: {verdict}",
            ""]
        out += [f"- {f}" for f in self.failures]
        if verdict == "PASS":
            out.append("Every request succeeded and every pool came back to its value after the warm-up.")
        return verdict, "\n".join(out) + "\n"

    def finish(self, batch):
        if self.fatal:
            return self.fatal
        verdict, text = self.report()
        with open(os.path.join(batch.out, "report.md"), "w") as f:
            f.write(text)
        batch.meta(f"verdict: {verdict}" + "".join(f"; {f}" for f in self.failures))
        print()
        print(text, end="")
        return 0 if verdict == "PASS" else 1

    def cleanup(self):
        """The guest killed if it still runs, the namespace removed, and the
        console kept without its carriage returns (raw/console.log)."""
        guest, self.guest = self.guest, None
        if guest is not None:
            guest.kill()
        ns, self.ns = self.ns, ""
        hostlib.netns_destroy(ns)
        if self.out is None:
            return
        raw = os.path.join(self.out, "raw")
        for name in ("console-in.fifo", "qemu.pid"):
            if os.path.lexists(os.path.join(raw, name)):
                os.unlink(os.path.join(raw, name))
        if os.path.exists(self.console):
            text = self.console_text()
            with open(os.path.join(raw, "console.log"), "w") as f:
                f.write(text)
            os.unlink(self.console)
