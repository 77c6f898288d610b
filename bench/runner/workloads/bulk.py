"""bulk.py: bulk transfers against each guest on the tap back-end (make
bench-bulk): iperf3 -c from the host, inside the namespace, against an
iperf3 server in the guest, and ab -k fetching large bodies from httpd.

Guests (GUESTS, [NAME=]BASE[+KOPT...], each +KOPT a word added to that
guest's kernel command line before the network options):
    uk[:IMAGE]     the unikernel: IMAGE (default UK_IPERF, build/apps/
                   iperf-all.elf) serves iperf, UK_HTTPD (build/apps/
                   httpd-all.elf) http, or for an IMAGE DIR/iperf-NAME.elf,
                   DIR/httpd-NAME.elf where it exists
    linux          the Linux guest (build/linux/initrd-iperf.img) with our
                   iperf server (init's app=iperf), httpd for http
    linux-iperf3   the same guest running Debian's iperf3 -s (no http)
    native         our servers on the host (build/host/iperf, httpd)
    native-iperf3  Debian's iperf3 -s on the host (no http)
Loads: LOADS among up (one stream, host to guest), down (-R), p4 (-P 4),
small (-l 256 -N), SECS each; HTTP_LOADS, BYTES:CONCURRENCY words, ab -k
on HTTP_PATH (printf format of BYTES) for guests with our httpd.

Each repetition boots every guest in turn (A B C A B C ...: this machine
drifts between batches), runs the iperf loads against its iperf server,
stops it, then (with HTTP_LOADS) boots it again with httpd for the ab
loads. After each boot, WARMUP seconds of its first load go unrecorded (the
first transfer after a boot runs slow on some guests). One namespace serves
the whole batch; a native guest runs inside it too, at 127.0.0.1. Every
load records the bytes the receiver counted (iperf3's sum_received; ab's
total transferred), its Gbit/s, and the host CPU the server used: QEMU's
user+system time from /proc/PID/stat around the load (for native, the
server process's), as seconds per GB moved (10^9 bytes). Around each load
it also reads the tap's frame counts, the unikernel's counters (Ctrl-T on
its console) and, with KICKS=1, the virtio-net kicks and interrupts QEMU
traced for the guest (a line each, which QEMU's CPU pays for):
bulk_counters.py turns them into the row's last ten columns.
Out: runs.csv (a row per load; its columns are report/bulk.py's FIELDS),
meta.txt (each guest's build and command lines), raw/ (REP-NAME-APP.console,
REP-NAME-iperf-LOAD.json, REP-NAME-http-BYTES-cCONC.ab, the warm-ups'
REP-NAME-APP-warmup.*), and summary.md (report/bulk.py). Every step is
bounded in time; a guest that does not come up is recorded as such
(no_boot) and the batch goes on.
"""
import json
import os
import re
import shutil
import subprocess
import time

from .. import bulk_counters, hostcpu, hostlib
from ..batch import Step
from ..boot import accel, http_shutdown, stop_guest, uk_flags_file
from ..guest import Guest
from ..records import num
from ..report.bulk import FIELDS
from ..spec import ROOT, SpecError

IPERF_PORT, HTTP_PORT = 5201, 8080
SHUTDOWN_COOKIE = "----------shutdown-iperf------------"  # ends our iperf server
GUEST_LIMIT = 7200  # seconds any guest may run: a bound on a stuck one
IPERF_OPTIONS = {"up": [], "down": ["-R"], "p4": ["-P", "4"], "small": ["-l", "256", "-N"]}
# The console line that says an iperf server listens, by server.
LISTENING = {"ours": r"^iperf: listening", "iperf3": r"^Server listening on"}
NO_COUNTERS = [""] * len(bulk_counters.FIELDS)  # the row's last columns, unknown


def http_load_name(word):
    """An HTTP_LOADS word, BYTES:CONC, as runs.csv's load: http-BYTES-cCONC
    (raw/ names its files REP-NAME-http-BYTES-cCONC)."""
    size, conc = word.split(":")
    return f"http-{size}-c{conc}"


def format_path(fmt, size):
    """HTTP_PATH's path for size, as printf FMT SIZE gives it."""
    return fmt % int(size) if "%" in fmt else fmt


def bash_status(rc):
    """A subprocess's status as bash's $? gives it (128+N for signal N)."""
    return 128 - rc if rc < 0 else rc


def iperf_fields(path, rc, cpu0, cpu1):
    """bytes..status of runs.csv for iperf3's JSON report in path, the
    client's exit status and the server's CPU seconds ("%.2f", "" when
    unknown) before and after."""
    status, nbytes, gbit, client = "ok", "", "", ""
    try:
        with open(path) as f:
            report = json.load(f)
        if "error" in report:
            status = "iperf3_error"
        else:
            received = report["end"]["sum_received"]
            nbytes, gbit = received["bytes"], f"{received['bits_per_second'] / 1e9:.4f}"
            client = f"{report['end']['cpu_utilization_percent']['host_total']:.1f}"
    except (OSError, ValueError, KeyError, TypeError):
        status = "no_output"
    if rc != 0 and status == "ok":
        status = f"iperf3_exit_{rc}"
    cpu = per_gb = ""
    if cpu0 and cpu1:
        secs = float(cpu1) - float(cpu0)
        if nbytes:
            per_gb = f"{secs / (nbytes / 1e9):.3f}"
        cpu = f"{secs:.2f}"
    elif status == "ok":
        status = "server_died"
    return [str(nbytes), gbit, cpu, per_gb, client, status]


def ab_fields(path, rc, cpu0, cpu1, size):
    """The same for ab's report in path, a run fetching bodies of size bytes
    (client_cpu_pct stays empty: ab does not say)."""
    # The report's lines read and which word of each (0-based) is the value;
    # where a line comes twice, the last counts.
    wanted = {"Document Length:": ("doclen", 2), "Failed requests:": ("failed", 2),
              "Non-2xx responses:": ("non2xx", 2), "Time taken for tests:": ("secs", 4),
              "Total transferred:": ("total", 2)}
    found = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                words = line.split()
                for head, (key, index) in wanted.items():
                    if line.startswith(head) and len(words) > index:
                        found[key] = words[index]
    except OSError:
        pass
    total, secs = num(found.get("total")) or 0, num(found.get("secs")) or 0
    status = "ok"
    if rc != 0:
        status = "ab_error"
    elif (num(found.get("failed")) or 0) > 0 or (num(found.get("non2xx")) or 0) > 0:
        status = "failed_requests"
    elif (num(found.get("doclen")) or 0) != float(size):
        status = "wrong_body_length"
    cpu = per_gb = ""
    if cpu0 == "" or cpu1 == "":
        if status == "ok":
            status = "server_died"
    else:
        used = float(cpu1) - float(cpu0)
        cpu, per_gb = f"{used:.2f}", f"{used / (total / 1e9):.3f}" if total > 0 else ""
    gbit = f"{total * 8 / secs / 1e9:.4f}" if secs > 0 else ""
    return [found.get("total", ""), gbit, cpu, per_gb, "", status]


def cpu_secs(pid):
    """User+system CPU seconds of process pid, "%.2f"; "" once it is gone."""
    ticks = hostcpu.process_ticks(pid) if pid else None
    return "" if ticks is None else f"{ticks / hostcpu.HZ:.2f}"


class KickCount:
    """Kicks of the transmit and receive queues and interrupts in QEMU's trace
    of a guest's virtio-net (virtio_queue_notify on queue 1 and 0,
    virtio_notify), counted as the file grows: it holds a line per event."""

    def __init__(self, path):
        self.path, self.offset, self.counts = path, 0, [0, 0, 0]

    def read(self):
        """ "TX RX INTERRUPTS" so far; "" while there is no trace."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                text = f.read()
        except OSError:
            return ""
        whole = text[:text.rfind(b"\n") + 1]  # a line QEMU is still writing waits for the next read
        self.offset += len(whole)
        for line in whole.split(b"\n"):
            words = line.split()
            if len(words) > 4 and words[0] == b"virtio_queue_notify":
                queue = num(words[4])
                if queue in (0, 1):
                    self.counts[1 - int(queue)] += 1
            elif words[:1] == [b"virtio_notify"]:
                self.counts[2] += 1
        return " ".join(str(c) for c in self.counts)


class Workload:
    def __init__(self, spec):
        self.spec = s = spec
        self.build = os.environ.get("BUILD", "build")
        self.uk_iperf = s.str("UK_IPERF") or f"{self.build}/apps/iperf-all.elf"
        self.uk_httpd = s.str("UK_HTTPD") or f"{self.build}/apps/httpd-all.elf"
        self.linux_initrd = f"{self.build}/linux/initrd-iperf.img"
        self.reps = s.int("REPS", 1, 50)
        self.secs = s.int("SECS", 1, 300)
        self.warmup = s.int("WARMUP", 0, 86400)
        self.boot_timeout = s.int("BOOT_TIMEOUT", 1, 3600)
        self.kicks = s.choice("KICKS", ("0", "1")) == "1"
        self.loads = s.words("LOADS", list(IPERF_OPTIONS), "load")
        if not self.loads:
            raise SpecError("LOADS names no load (up down p4 small)")
        self.http_loads = [] if s.str("HTTP_LOADS") == "none" else s.words("HTTP_LOADS")
        for word in self.http_loads:
            if not re.fullmatch(r"[0-9]+:[0-9]+", word):
                raise SpecError(f"HTTP_LOADS words are BYTES:CONCURRENCY, not '{word}'")
        self.http_path = s.str("HTTP_PATH")
        try:
            format_path(self.http_path, 1)
        except (TypeError, ValueError):
            raise SpecError(f"HTTP_PATH must be a format of one number (/bytes/%s), not '{self.http_path}'") from None
        if not hostlib.netns_usable():
            raise SpecError("the tap back-end needs root, ip and /dev/net/tun")
        if shutil.which("iperf3") is None:
            raise SpecError("iperf3 is needed (mk/deps.sh installs it)")
        if self.http_loads and shutil.which("ab") is None:
            raise SpecError("ab is needed for HTTP_LOADS (apache2-utils)")
        self.guests = {}
        for word in s.str("GUESTS").split():  # whitespace only: a kernel option may hold a comma
            g = self.resolve(word)
            if g["name"] in self.guests:
                raise SpecError(f"guest name {g['name']} given twice")
            self.guests[g["name"]] = g
        if not self.guests:
            raise SpecError("no guest to measure (GUESTS)")
        self.ns, self.net_exec = "", []  # the batch's namespace, once made, and the prefix that runs in it
        self.guest = None  # the Guest of the step running
        self.trace = None  # its QEMU trace file (KICKS=1)
        self.commands = set()  # each guest's command line, for meta.txt

    # ---- guests ----------------------------------------------------------------
    def resolve(self, word):
        """A guest spec as a dict: guests.sh's GUEST_* (hostlib.guest_resolve)
        and spec, kopts, iperf_server (ours, or Debian's iperf3), http (the
        image, initrd or program serving http; "" for none), iperf (a native
        guest's iperf server) and flags (how its servers were built)."""
        name, eq, rest = word.partition("=")
        if not eq:
            name, rest = "", word
        base, _, kopts = rest.partition("+")
        name = name or ("uk" if base.startswith("uk:") else base)
        g = {"spec": word, "kopts": kopts.replace("+", " "), "iperf_server": "ours", "http": "", "iperf": ""}
        flags_of = hostlib.image_flags
        try:
            if base == "uk" or (base.startswith("uk:") and len(base) > 3):
                g.update(hostlib.guest_resolve(f"{name}=" + (f"uk:{self.uk_iperf}" if base == "uk" else base),
                                               {"BUILD": self.build}))
                g["http"] = self.uk_httpd
                # An iperf image iperf-NAME.elf serves http with httpd-NAME.elf beside it.
                cut = g["initrd"].rfind("/iperf-")
                if cut >= 0 and g["initrd"].endswith(".elf"):
                    twin = g["initrd"][:cut] + "/httpd-" + g["initrd"][cut + len("/iperf-"):]
                    if os.path.isfile(twin):
                        g["http"] = twin
                g["flags"] = (f"iperf {flags_of(uk_flags_file(g['initrd']))}; "
                              f"httpd {flags_of(uk_flags_file(g['http']))}")
            elif base in ("linux", "linux-iperf3"):
                g.update(hostlib.guest_resolve(f"{name}=linux:{self.build}/linux/vmlinux:{self.linux_initrd}",
                                               {"BUILD": self.build}))
                if base == "linux":
                    g["http"] = self.linux_initrd
                    g["flags"] = (f"iperf {flags_of(f'{self.build}/host/iperf.flags')}; "
                                  f"httpd {flags_of(f'{self.build}/host/httpd.flags')}")
                else:
                    g["iperf_server"], g["flags"] = "iperf3", "Debian's iperf3"
            elif base in ("native", "native-iperf3"):
                g.update(hostlib.guest_resolve(f"{name}=native", {"BUILD": self.build}))
                if g["kopts"]:
                    raise SpecError(f"bad guest '{word}': native takes no kernel options")
                if base == "native":
                    g["iperf"], g["http"] = f"{self.build}/host/iperf", f"{self.build}/host/httpd"
                    g["flags"] = f"iperf {flags_of(g['iperf'] + '.flags')}; httpd {flags_of(g['http'] + '.flags')}"
                    if not os.access(g["iperf"], os.X_OK):
                        raise SpecError(f"bad guest '{word}': {g['iperf']} missing (make iperf-host)")
                else:
                    g["iperf"], g["iperf_server"], g["flags"] = shutil.which("iperf3"), "iperf3", "Debian's iperf3"
            else:
                raise SpecError(f"bad guest '{word}': unknown (uk[:IMAGE], linux, linux-iperf3, native, "
                                "native-iperf3)")
        except ValueError as e:
            raise SpecError(f"bad guest '{word}': {e}") from None
        if g["http"] and not os.path.isfile(g["http"]):
            g["http"] = ""  # http loads only where httpd exists
        return g

    def apps(self, g):
        """What the guest serves in turn: iperf, then http where it has loads."""
        return ["iperf"] + (["http"] if self.http_loads and g["http"] else [])

    # ---- the plan ------------------------------------------------------------------
    def plan(self):
        steps = []
        for rep in range(1, self.reps + 1):
            for name, g in self.guests.items():
                for app in self.apps(g):
                    loads = self.loads if app == "iperf" else self.http_loads
                    secs = 10 + (self.warmup + 1 if self.warmup else 0) + len(loads) * (self.secs + 2)
                    steps.append(Step(f"rep {rep} {name} ({app})", secs,
                                      lambda b, a=(rep, name, app): self.boot(b, *a)))
        return steps

    # ---- meta and records ------------------------------------------------------------
    def start(self, batch):
        self.batch = batch
        self.runs = os.path.join(batch.out, "runs.csv")
        with open(self.runs, "w") as f:
            f.write(",".join(FIELDS) + "\n")
        qemu = subprocess.run(["tools/qemu-run", "--version"], cwd=ROOT, capture_output=True, text=True)
        iperf3 = subprocess.run(["iperf3", "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
        http = f"; http: {' '.join(self.http_loads)} ({self.http_path})" if self.http_loads else ""
        batch.meta(f"qemu: {qemu.stdout.strip()}",
                   f"accel: {accel()}",
                   f"iperf3: {iperf3[0] if iperf3 else ''}",
                   f"back-end: tap (client in the namespace, guest {hostlib.NETNS['NETNS_GUEST_IP']})",
                   f"loads: {' '.join(self.loads)}{http}; {self.secs}s each; reps: {self.reps}; "
                   f"warm-up {self.warmup}s per boot",
                   "kicks: " + ("traced by QEMU (virtio_queue_notify, virtio_notify)" if self.kicks else "not traced"),
                   *[f"guest {n}: {g['spec']}; built: {g['flags']}" for n, g in self.guests.items()])
        batch.log(f"guests: {' '.join(self.guests)}; loads: {' '.join(self.loads)}"
                  + (f" + http {' '.join(self.http_loads)}" if self.http_loads else "")
                  + f"; {self.reps} repetition(s), {self.secs}s each")
        ns = f"bulk-{os.getpid()}"
        if not hostlib.netns_create(ns):
            raise SpecError(f"cannot create network namespace {ns}")
        self.ns, self.net_exec = ns, ["ip", "netns", "exec", ns]

    def row(self, rep, name, server, load, fields):
        with open(self.runs, "a") as f:
            f.write(",".join([str(rep), name, server, load, str(self.secs)] + fields) + "\n")

    # ---- one boot: a guest serving one app ---------------------------------------------
    def boot(self, batch, rep, name, app):
        g = self.guests[name]
        raw = os.path.join(batch.raw, f"{rep}-{name}-{app}")
        if app == "iperf":
            loads, server = self.loads, g["iperf_server"]
        else:
            loads, server = [http_load_name(w) for w in self.http_loads], "httpd"
        try:
            self.start_server(g, app, raw + ".console")
            if not self.wait_ready(g, app):
                batch.log(f"rep {rep} {name} ({app}): not up within {self.boot_timeout}s (console: {raw}.console)")
                for load in loads:
                    self.row(rep, name, server, load, ["", "", "", "", "", "no_boot"] + NO_COUNTERS)
                return
            time.sleep(1)  # the boot's tail
            if self.warmup:
                self.measure(g, app, loads[0], f"{raw}-warmup", self.warmup)
            for load in loads:
                # raw/: REP-NAME-iperf-LOAD, REP-NAME-http-BYTES-cCONC
                fields = self.measure(g, app, load, f"{raw}-{load.removeprefix('http-')}", self.secs)
                self.row(rep, name, server, load, fields)
                batch.log(f"rep {rep} {name} {load}: {fields[1]} Gbit/s, {fields[3]} CPU s/GB, {fields[5]}")
                time.sleep(1)
            self.stop_server(g, app)
        finally:
            self.release()

    def address(self, g):
        return "127.0.0.1" if g["kind"] == "native" else hostlib.NETNS["NETNS_GUEST_IP"]

    def start_server(self, g, app, console):
        """Boots the guest serving app (iperf or http), its console (a native
        server's output) in console; self.guest and self.server_pid."""
        if app == "iperf":
            args = ["-s", "-p", str(IPERF_PORT)] if g["iperf_server"] == "iperf3" else ["-p", str(IPERF_PORT), "-s"]
        else:
            args = ["-p", str(HTTP_PORT), "-q", "-s"]
        self.console, self.kick_count = console, None
        if g["kind"] == "native":
            prog = g["iperf"] if app == "iperf" else g["http"]
            self.commands.add(f"native: {prog} {' '.join(args)}")
            self.guest = Guest(self.net_exec + ["timeout", "-k", "5", str(GUEST_LIMIT), prog] + args, console)
            self.server_pid = self.guest.server_pid([os.path.basename(prog)])
            return
        words = [g["prefix"], g["kopts"]]
        initrd = g["initrd"]
        if g["kind"] == "linux":
            # One initramfs holds every server; init's app= picks (httpd by default).
            if app == "iperf":
                words.append("app=" + ("iperf3" if g["iperf_server"] == "iperf3" else "iperf"))
        elif app == "http":
            initrd = g["http"]
        words += [f"ip={hostlib.NETNS['NETNS_GUEST_IP']} gw={hostlib.NETNS['NETNS_HOST_IP']} "
                  f"mask={hostlib.NETNS['NETNS_MASK']} --"] + args
        append = " ".join(" ".join(words).split())
        self.commands.add(f"{g['name']} ({app}): {g['kernel']} {initrd}: {append}")
        cmd = self.net_exec + ["tools/qemu-run", "--net", "tap", "--tap", hostlib.NETNS["NETNS_TAP"], "--timeout",
                               str(GUEST_LIMIT), "--append", append, g["kernel"], initrd]
        if self.kicks:
            # The trace is large (a line per kick): kept only while the guest runs.
            self.trace = os.path.join(self.batch.raw, "qemu-trace.tmp")
            if os.path.lexists(self.trace):
                os.unlink(self.trace)
            cmd += ["--", "-trace", f"virtio_queue_notify,file={self.trace}",
                    "-trace", f"virtio_notify,file={self.trace}"]
            self.kick_count = KickCount(self.trace)
        # The unikernel's console input: Ctrl-T around each load (uk_dump).
        console_in = os.path.join(self.batch.raw, "console.in") if g["ctrl_t"] else None
        self.guest = Guest(cmd, console, os.path.join(self.batch.raw, "qemu.pid"), console_in)
        if console_in and self.guest.fd is None:
            self.batch.log("no fifo for the console: no counters")
        self.server_pid = self.guest.pid

    def wait_ready(self, g, app):
        """Until the server is up: its console says so, or (native iperf,
        whose output iperf3 writes in blocks) its socket listens; httpd
        answers. False after BOOT_TIMEOUT or once the guest has ended."""
        if app == "http":
            return self.guest.wait_http(f"http://{self.address(g)}:{HTTP_PORT}/", self.boot_timeout, self.net_exec)
        if g["kind"] != "native":
            return self.guest.wait_console(LISTENING[g["iperf_server"]], self.boot_timeout)
        end = time.monotonic() + self.boot_timeout
        while time.monotonic() < end:
            if not self.guest.alive():
                return False
            ss = subprocess.run(self.net_exec + ["ss", "-Hltn", f"sport = :{IPERF_PORT}"], capture_output=True,
                                text=True)
            if ss.stdout.strip():
                return True
            time.sleep(0.1)
        return False

    def stop_server(self, g, app):
        """Our servers end on their shutdown request (httpd's GET /__shutdown,
        iperf's cookie); Debian's iperf3 -s is killed."""
        addr = self.address(g)
        if app == "http":
            request = http_shutdown(f"http://{addr}:{HTTP_PORT}/", self.net_exec)
        elif g["iperf_server"] == "ours":
            request = self.net_exec + ["timeout", "5", "bash", "-c",
                                       f"printf '%s\\0' {SHUTDOWN_COOKIE} >/dev/tcp/{addr}/{IPERF_PORT}"]
        else:
            request = None
        stop_guest(self.batch, self.guest, g["name"], request, 10)

    def release(self):
        """Kills what is left of the step's guest and removes its trace."""
        guest, self.guest = self.guest, None
        if guest is not None:
            guest.kill()
        if self.trace and os.path.lexists(self.trace):
            os.unlink(self.trace)
        self.trace = None

    # ---- one load ----------------------------------------------------------------------
    def measure(self, g, app, load, raw, secs):
        """One load of secs seconds (an iperf load, or an http-BYTES-cCONC
        one), its client's output in raw.json or raw.ab: runs.csv's fields
        from bytes on."""
        addr = self.address(g)
        if app == "iperf":
            out = raw + ".json"
            argv = ["iperf3", "-c", addr, "-p", str(IPERF_PORT), "-t", str(secs)] + IPERF_OPTIONS[load] + ["--json"]
        else:
            size, conc = load.removeprefix("http-").split("-c")
            path = format_path(self.http_path, size)
            out = raw + ".ab"
            argv = ["ab", "-q", "-k", "-r", "-s", "20", "-c", conc, "-t", str(secs), "-n", "10000000",
                    f"http://{addr}:{HTTP_PORT}{path}"]
        dump0, frames0, kicks0 = self.uk_dump(g), self.tap_frames(g), self.kicks_now()
        cpu0 = cpu_secs(self.server_pid)
        with open(out, "w") as f:
            rc = subprocess.run(self.net_exec + ["timeout", "-k", "5", str(secs + 60)] + argv, stdout=f,
                                stderr=subprocess.STDOUT).returncode
        cpu1 = cpu_secs(self.server_pid)
        kicks1, frames1, dump1 = self.kicks_now(), self.tap_frames(g), self.uk_dump(g)
        counters = bulk_counters.fields(self.console, dump0, dump1, frames0, frames1, kicks0, kicks1)
        if app == "iperf":
            return iperf_fields(out, bash_status(rc), cpu0, cpu1) + counters
        return ab_fields(out, bash_status(rc), cpu0, cpu1, size) + counters

    def tap_frames(self, g):
        """ "FROM_GUEST TO_GUEST": the tap's received and sent packet counts (a
        merged or segmented frame is one packet there, as on the ring); ""
        for a native guest."""
        if g["kind"] == "native":
            return ""
        stats = f"/sys/class/net/{hostlib.NETNS['NETNS_TAP']}/statistics"
        p = subprocess.run(self.net_exec + ["cat", f"{stats}/rx_packets", f"{stats}/tx_packets"],
                           capture_output=True, text=True)
        return p.stdout.replace("\n", " ")

    def kicks_now(self):
        """QEMU's count of the guest's kicks and interrupts so far (KickCount):
        the same count for every guest, taken outside it. Under TCG every
        kick is a register write QEMU handles (no ioeventfd), so each one is
        traced. "" for native or with KICKS=0."""
        return self.kick_count.read() if self.kick_count else ""

    def uk_dump(self, g):
        """The unikernel's counters now: Ctrl-T on its console, then
        "FIRST:LAST", the console lines its dump took (LAST is its "pools:"
        line); "" for other guests, or when no dump came within 5 s."""
        if g["kind"] != "uk" or self.guest.fd is None:
            return ""
        with open(self.console, "rb") as f:
            before = f.read().count(b"\n")
        try:
            os.write(self.guest.fd, b"\x14")
        except OSError:
            return ""
        end = time.monotonic() + 5
        while time.monotonic() < end:
            with open(self.console, "rb") as f:
                lines = f.read().split(b"\n")
            last = next((i + 1 for i in range(before, len(lines)) if lines[i].startswith(b"pools:")), None)
            if last:
                return f"{before + 1}:{last}"
            time.sleep(0.1)
        return ""

    # ---- the end ---------------------------------------------------------------------------
    def finish(self, batch):
        hostlib.netns_destroy(self.ns)
        self.ns = ""
        if self.commands:
            batch.meta("command lines:", *sorted(self.commands))
        pidfile = os.path.join(batch.raw, "qemu.pid")
        if os.path.lexists(pidfile):
            os.unlink(pidfile)
        from .. import report
        return 0 if report.summarise(batch.out) == 0 else 1

    def cleanup(self):
        self.release()
        hostlib.netns_destroy(self.ns)
        self.ns = ""
