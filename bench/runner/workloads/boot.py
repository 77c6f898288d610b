"""boot.py: how fast a guest boots and how little it holds (make bench-boot).

Each boot starts a guest of GUESTS (tools/lib/guests.sh: the unikernel or a
Linux guest) on a machine of MACHINES (pc: the loader and the image, or
vmlinux and its initramfs; microvm: the image or vmlinux entered by its PVH
note) under an accelerator of ACCELS, with user networking and a forwarded
port, and measures
  - the wall time to its first answered HTTP request, from QEMU's start
    (the mtime of the pidfile QEMU writes once it has read its options) and
    from the start of tools/qemu-run (its shell before QEMU included). A
    client thread opens a connection every POLL_S from before the start and
    keeps each a while: a SYN the guest did not see yet (its NIC not up)
    waits in slirp, so a new connection, not a retry, meets the first
    listen; the time is the first 200's arrival;
  - the guest's own boot time, by the guest's clock, from its console: the
    unikernel's boot_time line (kernel option: its TSC from the first
    instruction, the loader's on pc and the kernel's under PVH, to the first
    listen), the Linux guest init's boot_time line (CLOCK_BOOTTIME, from the
    kernel's timekeeping start, when init first sees the listening socket);
  - QEMU's memory once it serves: proportional set size and resident set
    (/proc/PID/smaps_rollup), and the guest memory touched: the resident
    part of the one anonymous mapping of the guest's RAM size (smaps);
  - with COUNT=1, one more boot of each under the instruction-counting
    plugin: the guest's instructions from the first to the first answer (a
    mark written on the plugin's fifo as the answer arrives).
Boots go in turn (boot 1 of every configuration, then boot 2, ...), then
with MIN_MEM=1 a bisection per configuration for the smallest -m, in MiB,
that still answers within MIN_MEM_TIMEOUT. Records: boots.csv and
min-mem.csv; each boot's console in raw/; the table is report/boot.py's
summary.md.

The accelerator `nested` is KVM inside the nested-KVM host (L1: Debian's
kernel under TCG with an emulated SVM CPU, tools/nested/run-l1): one step
boots L1 once and runs bench/kvm/boot.sh there, BOOTS boots of every guest
on every machine in turn, each with L1's KVM counters and its kvm_exit
histogram read from just before QEMU starts to the guest's listening line.
Its output is raw/nested-l1.txt; its boots go to boots.csv as accel
kvm-nested (the first answer timed by L1's clock from QEMU's pidfile, no
qemu-run time and no memory: L1 is not this host), with `exits` the
exits counter's delta to the listening line, and each boot's exits by SVM
exit reason to exits.csv (guest, machine, accel, boot, reason, count).
"""
import csv
import os
import re
import selectors
import socket
import subprocess
import threading
import time

from .. import hostlib
from ..batch import Step
from ..boot import http_shutdown, stop_guest, uk_flags_file
from ..guest import Guest
from ..spec import ROOT, SpecError
from . import nested

APP_PORT = 8080
USER_GUEST_NET = "ip=10.0.2.15 gw=10.0.2.2 mask=255.255.255.0"  # slirp's defaults
POLL_S = 0.005          # a new connection this often until the first answer
CONN_LIFE_S = 1.0       # how long one connection may wait for its answer
BOOT_FIELDS = ["guest", "machine", "accel", "boot", "mem_mib", "status", "qemu_to_answer_ms", "run_to_answer_ms",
               "guest_boot_us", "guest_clock", "pss_kib", "rss_kib", "touched_kib", "insns", "exits"]
MIN_MEM_FIELDS = ["guest", "machine", "accel", "mem_mib", "served"]
EXIT_FIELDS = ["guest", "machine", "accel", "boot", "reason", "count"]
NESTED = "nested"               # the ACCELS word
NESTED_ACCEL = "kvm-nested"     # its rows' accel
NESTED_SCENARIO = "bench/kvm/boot.sh"
NESTED_RAW = "nested-l1.txt"
# L1's init beats every 5 s under --silence: this long without a line is an
# L1 that stopped (QEMU's emulated SVM, docs/kvm.md "The wedge"), which would
# otherwise hold the batch to its time limit (an hour and more).
NESTED_SILENCE_S = 120
GUEST_CLOCKS = {"uk": "tsc-from-entry", "linux": "linux-boottime"}
# bench/kvm/boot.sh's lines (its header says what each field is).
NESTED_BOOT = re.compile(r"boot (\d+) ([A-Za-z0-9._-]+) (pc|microvm) kind (uk|linux) status (\d+|\?) "
                         r"listen_ns (\d+|-) listen_ms ([0-9.]+|-) answer_ms ([0-9.]+|-) exits (\d+|-)")
NESTED_HIST = re.compile(r"hist (\d+) ([A-Za-z0-9._-]+) (pc|microvm) kvm_exit (\d+) (\d+)")
# The guests' own boot lines (kernel option boot_time; bench/linux/init.c's).
UK_LINE = re.compile(r"kernel: listening (\d+) ns after the first instruction")
LINUX_LINE = re.compile(r"init: listening (\d+) ns after the kernel's clock started")


def mem_mib(text, what):
    """'256M', '1G' or '256' (MiB) as MiB; SpecError otherwise."""
    m = re.fullmatch(r"(\d{1,6})([MG]?)", text)
    if not m or int(m.group(1)) == 0:
        raise SpecError(f"{what} must be a size such as 256M or 1G, not '{text}'")
    return int(m.group(1)) * (1024 if m.group(2) == "G" else 1)


def first_answer(port, stop, secs):
    """The time.time_ns() at which the first HTTP 200 came from
    127.0.0.1:port, None after secs or once stop (an Event) is set."""
    sel = selectors.DefaultSelector()
    conns = {}  # socket -> [opened at, bytes read so far, request sent]
    end = time.monotonic() + secs
    next_open = 0.0
    try:
        while time.monotonic() < end and not stop.is_set():
            now = time.monotonic()
            if now >= next_open:
                next_open = now + POLL_S
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                try:
                    s.connect(("127.0.0.1", port))
                except BlockingIOError:
                    pass
                except OSError:  # refused: QEMU not listening yet
                    s.close()
                    s = None
                if s is not None:
                    conns[s] = [now, b"", False]
                    sel.register(s, selectors.EVENT_WRITE)
            for key, _ in sel.select(timeout=POLL_S / 2):
                s = key.fileobj
                state = conns[s]
                try:
                    if not state[2]:
                        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                            raise OSError("connect failed")
                        s.send(b"GET / HTTP/1.0\r\n\r\n")
                        state[2] = True
                        sel.modify(s, selectors.EVENT_READ)
                        continue
                    data = s.recv(64)
                    if not data:
                        raise OSError("closed")
                    state[1] += data
                    if len(state[1]) >= 12:
                        if re.match(rb"HTTP/1\.[01] 200", state[1]):
                            return time.time_ns()
                        raise OSError("not 200")
                except OSError:
                    sel.unregister(s)
                    del conns[s]
                    s.close()
            for s in [s for s, st in conns.items() if now - st[0] > CONN_LIFE_S]:
                sel.unregister(s)
                del conns[s]
                s.close()
        return None
    finally:
        for s in conns:
            s.close()
        sel.close()


def nested_records(path):
    """(boots.csv rows, exits.csv rows) as dicts from bench/kvm/boot.sh's
    output at path. A boot counts as ok when it answered and ended with
    status 0; bad_exit when it answered and ended otherwise; no_answer
    when it never answered. Lines that match neither form are L1's and the
    consoles': skipped."""
    boots, exits = [], []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            m = NESTED_BOOT.fullmatch(line)
            if m:
                n, guest, machine, kind, status, listen_ns, _listen_ms, answer, count = m.groups()
                state = "no_answer" if answer == "-" else ("ok" if status == "0" else "bad_exit")
                row = dict(guest=guest, machine=machine, accel=NESTED_ACCEL, boot=n, status=state,
                           qemu_to_answer_ms=answer if answer != "-" else "",
                           exits=count if count != "-" else "")
                if listen_ns != "-":
                    row.update(guest_boot_us=f"{int(listen_ns) / 1000:.1f}", guest_clock=GUEST_CLOCKS[kind])
                boots.append(row)
                continue
            m = NESTED_HIST.fullmatch(line)
            if m:
                n, guest, machine, reason, count = m.groups()
                exits.append(dict(guest=guest, machine=machine, accel=NESTED_ACCEL, boot=n,
                                  reason=f"0x{int(reason):x}", count=count))
    return boots, exits


def append_nested_records(raw_path, boots_csv, exits_csv, mem):
    """nested_records of raw_path appended to boots_csv (mem_mib: mem) and
    exits_csv, each begun with its header when empty or absent; the boot
    rows."""
    boots, exits = nested_records(raw_path)
    for path, fields, rows in ((boots_csv, BOOT_FIELDS, [dict(r, mem_mib=mem) for r in boots]),
                               (exits_csv, EXIT_FIELDS, exits)):
        fresh = not os.path.exists(path) or os.path.getsize(path) == 0
        with open(path, "a", newline="") as f:
            w = csv.writer(f)
            if fresh:
                w.writerow(fields)
            for r in rows:
                w.writerow([r.get(k, "") for k in fields])
    return boots


def repo_path(path, what):
    """path (absolute, or relative to the repository) as a path relative to
    the repository, for run-l1 --file; SpecError when outside it or unsafe
    for boot.sh's argument (its separators , : and +)."""
    rel = os.path.relpath(os.path.join(ROOT, path), ROOT)
    if rel.startswith("..") or re.search(r"[,:+\s]", rel):
        raise SpecError(f"{what} {path}: L1 carries files of the repository only, with no , : + or blank in the path")
    return rel


def qemu_memory(pid, ram_kib):
    """(pss KiB, rss KiB, guest RAM touched KiB) of QEMU's process; None for
    what cannot be read. The guest's RAM is the anonymous mapping whose size
    is the -m size (QEMU maps it whole); its resident part is what the guest
    (and QEMU's loading of the images) touched."""
    pss = rss = touched = None
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k == "Pss":
                    pss = int(v.split()[0])
                elif k == "Rss":
                    rss = int(v.split()[0])
        with open(f"/proc/{pid}/smaps") as f:
            size, anon = None, False
            for line in f:
                fields = line.split()
                if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                    anon = len(fields) < 6  # no path: an anonymous mapping
                    size = None
                elif fields[0] == "Size:":
                    size = int(fields[1])
                elif fields[0] == "Rss:" and anon and size == ram_kib and touched is None:
                    touched = int(fields[1])
    except (OSError, ValueError, IndexError):
        pass
    return pss, rss, touched


class Workload:
    def __init__(self, spec):
        self.spec = spec
        self.build = os.environ.get("BUILD", "build")
        self.machines = spec.words("MACHINES", ("pc", "microvm"), "machine")
        self.accels = spec.words("ACCELS", ("tcg", "kvm", NESTED), "accelerator")
        self.boots = spec.int("BOOTS", 1, 1000)
        self.mem = mem_mib(spec.str("MEM"), "MEM")
        self.timeout = spec.int("TIMEOUT", 1, 3600)
        self.min_mem = spec.choice("MIN_MEM", ("0", "1")) == "1"
        self.min_mem_lo = spec.int("MIN_MEM_LO", 1, 65536)
        self.min_mem_timeout = spec.int("MIN_MEM_TIMEOUT", 1, 3600)
        self.count = spec.choice("COUNT", ("0", "1")) == "1"
        if not self.machines or not self.accels:
            raise SpecError("MACHINES and ACCELS must name at least one each")
        if self.count and "tcg" not in self.accels:
            raise SpecError("COUNT=1 counts under TCG: ACCELS must hold tcg")
        env = dict(os.environ, BUILD=self.build)
        self.guests = []
        for g in spec.words("GUESTS"):
            try:
                r = hostlib.guest_resolve(g, env)
            except ValueError as e:
                raise SpecError(str(e)) from None
            if r["kind"] not in ("uk", "linux"):
                raise SpecError(f"guest {g}: only guests booted under QEMU (uk, linux) have a boot to time")
            self.guests.append(r)
        if not self.guests:
            raise SpecError("GUESTS is empty")
        self.nested = NESTED in self.accels
        self.local_accels = [a for a in self.accels if a != NESTED]  # boots on this host
        if self.nested:
            self.nested_guests = []  # boot.sh's NAME:KIND:FILE:FILE[:WORDS]
            self.nested_files = []   # what run-l1 carries besides its own set
            for g in self.guests:
                files = [repo_path(g["kernel"], f"guest {g['name']}:"), repo_path(g["initrd"], f"guest {g['name']}:")]
                words = g["prefix"].split()
                if any(re.search(r"[,:+]", w) for w in words):
                    raise SpecError(f"guest {g['name']}: its options {g['prefix']!r} hold , : or +, which boot.sh "
                                    "cannot take")
                self.nested_guests.append(":".join([g["name"], g["kind"]] + files + (["+".join(words)] if words else [])))
                self.nested_files += [f for f in files if f not in self.nested_files]
        self.current = None  # the Guest a step runs, for cleanup
        self.stop = threading.Event()

    def configs(self):
        """The configurations booted on this host (nested ones boot in L1)."""
        return [(g, m, a) for g in self.guests for m in self.machines for a in self.local_accels]

    def plan(self):
        steps = []
        for n in range(1, self.boots + 1):
            for g, m, a in self.configs():
                steps.append(Step(f"boot {n} of {self.boots}: {g['name']} on {m} ({a})",
                                  4 if g["kind"] == "linux" else 1.5,
                                  lambda b, c=(g, m, a, n): self.timed_boot(b, *c)))
        if self.nested:
            # A rough guess from L1 runs on a quiet host: L1's boot, then
            # each boot of our kernel a few seconds, of the Linux guest 10-30 s.
            per_round = sum((20 if g["kind"] == "linux" else 5) * len(self.machines) for g in self.guests)
            steps.append(Step(f"nested KVM: {self.boots} boot(s) of each guest on each machine in one L1 boot",
                              60 + self.boots * per_round, self.nested_boots))
        if self.count:
            for g, m, a in self.configs():
                if a == "tcg":
                    steps.append(Step(f"{g['name']} on {m} under the plugin", 15 if g["kind"] == "linux" else 5,
                                      lambda b, c=(g, m, a): self.timed_boot(b, *c, 0, "plugin")))
        if self.min_mem:
            for g, m, a in self.configs():
                steps.append(Step(f"smallest -m: {g['name']} on {m} ({a})", 40 if g["kind"] == "linux" else 10,
                                  lambda b, c=(g, m, a): self.bisect_mem(b, *c)))
        return steps

    def start(self, batch):
        self.boots_csv = os.path.join(batch.out, "boots.csv")
        self.min_csv = os.path.join(batch.out, "min-mem.csv")
        self.exits_csv = os.path.join(batch.out, "exits.csv")
        records = [(self.boots_csv, BOOT_FIELDS), (self.min_csv, MIN_MEM_FIELDS)]
        if self.nested:
            records.append((self.exits_csv, EXIT_FIELDS))
        for path, fields in records:
            with open(path, "w", newline="") as f:
                csv.writer(f).writerow(fields)
        p = subprocess.run(["tools/qemu-run", "--version"], cwd=ROOT, capture_output=True, text=True)
        lines = [f"emulator: {p.stdout.strip() or '?'}",
                 f"boots {self.boots}, -m {self.mem}M, user networking, first answer polled every "
                 f"{POLL_S * 1000:.0f} ms"]
        for g in self.guests:
            if g["kind"] == "uk":
                lines.append(f"guest {g['name']}: {g['initrd']} ({hostlib.image_flags(uk_flags_file(g['initrd']))})")
            else:
                lines.append(f"guest {g['name']}: {g['kernel']} {g['initrd']}")
        if self.nested:
            lines.append(f"nested: {NESTED_SCENARIO} in L1 ({nested.dry_run(NESTED_SCENARIO).strip()})")
        batch.meta(*lines)

    def command(self, g, machine, accel, mem, port, limit, count_files=None):
        """tools/qemu-run's arguments for one boot of g."""
        args = ["tools/qemu-run", "--machine", machine, "--accel", accel, "--mem", f"{mem}M", "--net", "user",
                "--hostfwd", f"{port}:{APP_PORT}", "--timeout", str(limit)]
        if count_files:
            args += ["--count", count_files[0], "--count-ctl", count_files[1]]
        app = f"{USER_GUEST_NET} -- -p {APP_PORT} -q -s"
        args += ["--append", " ".join(w for w in (g["prefix"], "boot_time", app) if w)]
        if g["kind"] == "uk" and machine == "microvm":
            return args + [g["initrd"]]  # PVH: the image alone
        return args + [g["kernel"], g["initrd"]]

    def boot(self, batch, g, machine, accel, mem, raw, answer_secs, count=False):
        """One boot to its first answer and its end: a dict of what was seen."""
        port = hostlib.free_port()
        count_files = None
        if count:
            count_files = (raw + ".insns", raw + ".insns-ctl")
            for f in count_files:
                if os.path.lexists(f):
                    os.unlink(f)
            os.mkfifo(count_files[1])
        cmd = self.command(g, machine, accel, mem, port, answer_secs + 30, count_files)
        pidfile = raw + ".pid"
        found = {}
        self.stop.clear()
        poller = threading.Thread(target=lambda: found.update(t=first_answer(port, self.stop, answer_secs + 5)))
        t_run = time.time_ns()
        poller.start()
        guest = Guest(cmd, raw + ".console", pidfile)
        self.current = guest
        try:
            t_qemu = os.stat(pidfile).st_mtime_ns
        except OSError:
            t_qemu = None
        while poller.is_alive():
            poller.join(0.1)
            if not guest.alive() or time.time_ns() - t_run > answer_secs * 1e9:
                self.stop.set()
        t_answer = found.get("t")
        rec = {"status": "ok" if t_answer else "no_answer"}
        if t_answer:
            if count_files:
                self.mark(batch, count_files[1])
            rec["run_to_answer_ms"] = f"{(t_answer - t_run) / 1e6:.1f}"
            if t_qemu:
                rec["qemu_to_answer_ms"] = f"{(t_answer - t_qemu) / 1e6:.1f}"
            if guest.pid:
                pss, rss, touched = qemu_memory(guest.pid, mem * 1024)
                rec.update(pss_kib=pss or "", rss_kib=rss or "", touched_kib=touched or "")
        if t_answer:
            if not stop_guest(batch, guest, f"{g['name']} on {machine}",
                              http_shutdown(f"http://127.0.0.1:{port}/"), 15):
                rec["status"] = "bad_exit"
        else:
            guest.kill()
        self.current = None
        try:
            with open(raw + ".console", errors="replace") as f:
                console = f.read()
        except OSError:
            console = ""
        m = (UK_LINE if g["kind"] == "uk" else LINUX_LINE).search(console)
        if m:
            rec["guest_boot_us"] = f"{int(m.group(1)) / 1000:.1f}"
            rec["guest_clock"] = "tsc-from-entry" if g["kind"] == "uk" else "linux-boottime"
        if count_files:
            rec["insns"] = self.insns(count_files[0])
            os.unlink(count_files[1])
        if os.path.exists(pidfile):
            os.unlink(pidfile)
        return rec

    @staticmethod
    def mark(batch, fifo):
        """The plugin's mark "answered": its counts as the answer came."""
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:  # ENXIO: no plugin reads it
            batch.log(f"no mark for the plugin ({fifo}: {e})")
            return
        try:
            os.write(fd, b"answered\n")
        finally:
            os.close(fd)

    @staticmethod
    def insns(path):
        try:
            with open(path) as f:
                for line in f:
                    m = re.match(r"answered: total (\d+)", line)
                    if m:
                        return m.group(1)
        except OSError:
            pass
        return ""

    def timed_boot(self, batch, g, machine, accel, n, tag=None):
        name = f"{g['name']}-{machine}-{accel}-{tag or n}"
        rec = self.boot(batch, g, machine, accel, self.mem, os.path.join(batch.raw, name), self.timeout,
                        count=tag == "plugin")
        row = dict(guest=g["name"], machine=machine, accel=accel, boot=tag or n, mem_mib=self.mem, **rec)
        with open(self.boots_csv, "a", newline="") as f:
            csv.writer(f).writerow([row.get(k, "") for k in BOOT_FIELDS])
        batch.log(f"{name}: {rec['status']}, answered {rec.get('qemu_to_answer_ms', '-')} ms after QEMU's start "
                  f"({rec.get('run_to_answer_ms', '-')} after qemu-run's), guest boot {rec.get('guest_boot_us', '-')} "
                  f"us, PSS {rec.get('pss_kib', '-')} KiB" + (f", {rec['insns']} instructions" if tag else ""))

    def nested_boots(self, batch):
        """Every nested boot in one L1 boot: bench/kvm/boot.sh's output to
        raw/nested-l1.txt, its boots to boots.csv and exits.csv."""
        out = os.path.join(batch.raw, NESTED_RAW)
        limit = 300 + self.boots * len(self.guests) * len(self.machines) * 120
        rc = nested.run_l1(NESTED_SCENARIO, [self.boots, ",".join(self.nested_guests), ",".join(self.machines),
                                             f"{self.mem}M"], out, limit, files=self.nested_files,
                             silence=NESTED_SILENCE_S)
        boots = append_nested_records(out, self.boots_csv, self.exits_csv, self.mem)
        for r in boots:
            batch.log(f"{r['guest']}-{r['machine']}-{NESTED_ACCEL}-{r['boot']}: {r['status']}, {r['exits'] or '-'} "
                      f"exits to listening, guest boot {r.get('guest_boot_us', '-')} us, answered "
                      f"{r['qemu_to_answer_ms'] or '-'} ms after QEMU's start (L1's clock)")
        want = self.boots * len(self.guests) * len(self.machines)
        if rc != 0 or len(boots) != want or not nested.lines_of(out, "kvm: boots done"):
            batch.log(f"nested: run-l1 status {rc}, {len(boots)} of {want} boots recorded (see {out})")

    def bisect_mem(self, batch, g, machine, accel):
        """The smallest -m (MiB) in (MIN_MEM_LO, MEM] that answers: MEM is
        taken to serve (the timed boots), MIN_MEM_LO not to."""
        lo, hi = self.min_mem_lo, self.mem
        served = {}
        while hi - lo > 1:
            mid = (lo + hi) // 2
            raw = os.path.join(batch.raw, f"minmem-{g['name']}-{machine}-{accel}-{mid}M")
            ok = self.boot(batch, g, machine, accel, mid, raw, self.min_mem_timeout)["status"] == "ok"
            served[mid] = ok
            with open(self.min_csv, "a", newline="") as f:
                csv.writer(f).writerow([g["name"], machine, accel, mid, int(ok)])
            lo, hi = (lo, mid) if ok else (mid, hi)
        batch.log(f"smallest -m for {g['name']} on {machine} ({accel}): {hi}M")

    def finish(self, batch):
        from .. import report
        report.summarise(batch.out)
        path = os.path.join(batch.out, "summary.md")
        if os.path.isfile(path):
            with open(path) as f:
                print(f.read(), end="")
        return 0

    def cleanup(self):
        self.stop.set()
        if self.current is not None:
            self.current.kill()
            self.current = None
