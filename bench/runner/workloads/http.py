"""http.py: httpd in each guest under a load generator (make bench, bench-fixes).

Each repetition boots every guest once per back-end, emulator and placement
(A B C A B C ...: this machine drifts by tens of percent between batches;
ORDER=shuffle gives each repetition its own order, seeded by its number, so
no build always follows the same one), measures the boot to the first
answer, samples the idle CPU (QEMU's whole process and its vCPU threads,
in the first IDLE_REPS repetitions), runs every load with
every load generator (loadrun.py: a row of runs.csv each) and stops the
guest with GET /__shutdown (a row of guests.csv). The native guest has no
emulator: it boots once per back-end and placement (emulator "host").
Back-ends: tap (a private network namespace made and removed for each boot,
the guest at tools/lib/netns.sh's address, the load generator inside the
namespace), user (QEMU's slirp with hostfwd on 127.0.0.1: its listen backlog
of 1 overflows under new-connection bursts, and such runs are flagged), and
passt (Debian's passt forwarding a port as user does; the first probe waits
for the guest's network line on the console: a connection passt forwards
before the guest's network is up keeps passt spinning for seconds). COUNT=1
adds COUNT_REPS repetitions with every QEMU guest under the
instruction-counting plugin: rows of their own (plugin 1), whose requests/s
enter no median. Every step is bounded in time; a guest that does not boot
or answer is recorded as such and the batch goes on.
Out: runs.csv, guests.csv, meta.txt, raw/ (each load's output, consoles,
counters, hostprobe-start/end.txt), and the tables (report/).
"""
import os
import random
import re
import shutil
import subprocess
import time

from .. import hostlib, loadrun, loads, placement, records
from ..procfs import cpu_ns_split
from ..batch import Step
from ..boot import accel, http_shutdown, stop_guest, uk_flags_file
from ..guest import Guest
from ..spec import ROOT, SpecError

APP_PORT = 8080
USER_GUEST_NET = "ip=10.0.2.15 gw=10.0.2.2 mask=255.255.255.0"  # slirp's defaults
BOOT_TIMEOUT = 120


class Workload:
    def __init__(self, spec):
        self.spec = spec
        s = spec
        self.build = os.environ.get("BUILD", "build")
        self.uk_httpd = s.str("UK_HTTPD") or f"{self.build}/apps/httpd-all.elf"
        self.uk_floor = s.str("UK_FLOOR") or f"{self.build}/apps/floor-all.elf"
        self.reps = s.int("REPS", 0, 50)
        self.count = s.choice("COUNT", ("0", "1")) == "1"
        self.count_reps = s.int("COUNT_REPS", 1, 50) if self.count else 0
        self.count_warmup = s.int("COUNT_WARMUP", 0, 60)
        if self.reps == 0 and not self.count:
            raise SpecError("REPS must be 1..50 (0 with COUNT=1)")
        self.load_secs = s.int("LOAD_SECS", 1, 120)
        loadrun.WRK_THREADS = s.int("WRK_THREADS", 1, 64)
        self.idle_secs = s.int("IDLE_SECS", 0, 600)
        self.idle_reps = s.int("IDLE_REPS", 0, 50)
        self.busy_pct = s.number("BUSY_PCT")
        self.order = s.choice("ORDER", ("fixed", "shuffle"))
        self.loads = loads.check(s.words("LOADS"))
        self.backends = s.words("BACKENDS", ("tap", "user", "passt"), "back-end")
        for b in self.backends:
            if b == "tap" and not hostlib.netns_usable():
                raise SpecError("the tap back-end needs root, ip and /dev/net/tun (BACKENDS=user?)")
            if b == "passt" and shutil.which("passt") is None:
                raise SpecError("the passt back-end needs passt (Debian package passt)")
        self.loadgens = s.words("LOADGEN", ("ab", "wrk"), "load generator")
        for g, pkg in (("ab", "apache2-utils"), ("wrk", "wrk")):
            if g in self.loadgens and shutil.which(g) is None:
                raise SpecError(f"{g} is needed ({pkg})")
        if shutil.which("curl") is None:
            raise SpecError("curl is needed")
        pin = s.str("PIN")
        default = {"": "vcpu1", "0": "none", "none": "none", "1": "vcpu0"}.get(pin, pin)
        self.placements = s.words("PLACEMENTS") or [default]
        self.pin_cores = s.str("PIN_CORES")
        for p in self.placements:
            placement.check(p, self.pin_cores)
        self.emulators = s.words("EMULATORS") or [os.environ.get("QEMU") or "7.2"]
        self.smp = []
        for w in s.words("SMP") or ["1"]:
            if not w.isdigit() or not 1 <= int(w) <= 64 or int(w) in self.smp:
                raise SpecError(f"SMP takes distinct vCPU counts 1..64, not '{w}'")
            self.smp.append(int(w))
        if max(self.smp) > 1 and self.placements != ["none"]:
            # A placement pins one vCPU thread; with more, which one runs
            # where would be a placement of its own.
            raise SpecError("SMP above 1 needs PLACEMENTS=none")
        self.guests = self.resolve_guests(s.words("GUESTS"))
        self.ref = s.str("REF") or next((n for n in self.guests if not n.startswith("native")),
                                        next(iter(self.guests)))
        self.tap_net = (f"ip={hostlib.NETNS['NETNS_GUEST_IP']} gw={hostlib.NETNS['NETNS_HOST_IP']} "
                        f"mask={hostlib.NETNS['NETNS_MASK']}")
        self.versions = {}
        self.current = None  # (Guest, netns, server pid) of the step running

    # ---- settings --------------------------------------------------------
    def resolve_guests(self, specs):
        env = {"UK_HTTPD": self.uk_httpd, "UK_FLOOR": self.uk_floor, "BUILD": self.build}
        if not specs:
            # The unikernel and the floor when built (make bench builds them).
            have = [n for n, image in (("uk", self.uk_httpd), ("floor", self.uk_floor)) if os.path.isfile(image)]
            if os.path.isfile(f"{self.build}/loader/loader.elf") and len(have) < 2:
                print(f"bench: no {self.uk_httpd} or {self.uk_floor} (make VARIANT=all; make bench builds them): "
                      f"running {' '.join(have) or 'neither'} of uk and floor")
            specs = ["linux"] + (have if os.path.isfile(f"{self.build}/loader/loader.elf") else []) + ["native"]
        out = {}
        for g in specs:
            try:
                r = hostlib.guest_resolve(g, env)
            except ValueError as e:
                print(f"{e}\nbench: skipping guest '{g}'")
                continue
            r["spec"], r["smp"] = g, 1
            # Each VM guest at each vCPU count (SMP): NAME at 1, NAME-smpN
            # beyond, the unikernel told to start its CPUs (smp=N).
            for n in self.smp if r["kind"] != "native" else [1]:
                v = dict(r, smp=n)
                if n > 1:
                    v["name"] = f"{r['name']}-smp{n}"
                    if r["kind"] == "uk":
                        v["prefix"] = f"smp={n} {r['prefix']}".strip()
                if v["name"] in out:
                    raise SpecError(f"guest name {v['name']} given twice")
                out[v["name"]] = v
        if not out:
            raise SpecError("no guest to measure")
        return out

    def check_emulators(self):
        for e in self.emulators:
            if "," in e or e == "host":
                raise SpecError(f"bad emulator name '{e}'")
            p = subprocess.run(["tools/qemu-run", "--version"], cwd=ROOT, capture_output=True, text=True,
                               env=dict(os.environ, QEMU=e))
            if p.returncode != 0:
                raise SpecError(f"emulator '{e}' is not usable: {p.stderr.strip()}")
            self.versions[e] = p.stdout.strip()
            if self.count:
                p = subprocess.run(["tools/qemu-run", "--dry-run", "--count", "/dev/null", "bench/run"], cwd=ROOT,
                                   capture_output=True, text=True, env=dict(os.environ, QEMU=e))
                if p.returncode != 0:
                    raise SpecError(f"COUNT=1: emulator '{e}' cannot count instructions: {p.stderr.strip()}")

    # ---- the plan ----------------------------------------------------------
    def rep_order(self, rep):
        names = list(self.guests)
        if self.order == "shuffle":
            rng = random.Random(rep)
            names = sorted(names, key=lambda n: rng.random())
        return names

    def plan(self):
        self.check_emulators()
        steps = []
        per_boot = 8 + len(self.loads) * len(self.loadgens) * (self.load_secs + 2)
        for rep in range(1, self.reps + self.count_reps + 1):
            counted = rep > self.reps
            for backend in self.backends:
                for emu in self.emulators:
                    for pl in self.placements:
                        for name in self.rep_order(rep):
                            g = self.guests[name]
                            emu_col = emu
                            if g["kind"] == "native":
                                if emu != self.emulators[0] or counted:
                                    continue
                                emu_col = "host"
                            label = f"{rep} {backend} {emu_col} {pl} {name}" + (" (under the plugin)" if counted else "")
                            secs = per_boot * (3 if counted else 1) + (self.idle_secs if rep <= self.idle_reps else 0)
                            steps.append(Step(label, secs, lambda b, a=(rep, backend, emu, emu_col, pl, name, counted):
                                              self.boot(b, *a)))
        return steps

    # ---- meta and records ----------------------------------------------------
    def guest_build(self, g):
        """What a guest was built from, with which flags (IMAGE.flags beside a
        unikernel image; build/host/PROGRAM.flags for a Linux or native
        guest's server)."""
        app_flags = hostlib.image_flags(os.path.join(self.build, "host", g["app"] + ".flags"))
        if g["kind"] == "native":
            return f"{g['kernel']}, {app_flags}"
        if g["kind"] == "linux":
            try:
                with open(os.path.join(os.environ.get("DEPS", "deps"), "linux", "package")) as f:
                    pkg = f.read().strip()
            except OSError:
                pkg = "kernel package ?"
            return f"{g['kernel']} ({pkg}) + {g['initrd']} ({g['app']} {app_flags}); command line: {g['prefix']}"
        return f"{g['initrd']}, {hostlib.image_flags(uk_flags_file(g['initrd']))}"

    def start(self, batch):
        self.batch = batch
        self.runs = os.path.join(batch.out, "runs.csv")
        self.guests_csv = os.path.join(batch.out, "guests.csv")
        with open(self.runs, "w") as f:
            f.write(",".join(records.RUN_FIELDS) + "\n")
        with open(self.guests_csv, "w") as f:
            f.write(",".join(records.GUEST_FIELDS) + "\n")
        lines = [f"emulator {e}: {v}" for e, v in self.versions.items()]
        lines.append(f"accel: {accel()}")
        for g in self.loadgens:
            if g == "ab":
                v = subprocess.run(["ab", "-V"], capture_output=True, text=True).stdout.splitlines()[:1]
                lines.append(f"loadgen ab: {v[0] if v else '?'}")
            else:
                v = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
                first = (v.stdout + v.stderr).splitlines()[:1]
                lines.append(f"loadgen wrk: {' '.join(first[0].split()[:2]) if first else '?'}, -t "
                             f"{os.environ.get('WRK_THREADS', '1')}; new-connection loads with 'Connection: close'")
        lines.append(f"placements: {' '.join(self.placements)} (cores {self.pin_cores})")
        lines.append(f"guests: {' '.join(self.guests)} (ref {self.ref}); backends: {' '.join(self.backends)}; "
                     f"loads: {' '.join(self.loads)}")
        lines += [f"image {n}: {self.guest_build(g)}" for n, g in self.guests.items()]
        uk_flags = {hostlib.image_flags(uk_flags_file(g["initrd"])) for g in self.guests.values() if g["kind"] == "uk"}
        if len(uk_flags) > 1:
            lines.append("WARNING: the unikernel images were built with different flags (see the image lines)")
        lines.append(f"reps: {self.reps}; load: {self.load_secs}s per run; idle sample: {self.idle_secs}s "
                     f"(repetitions 1-{self.idle_reps}); order: {self.order}")
        if self.count:
            lines.append(f"plugin: repetitions {self.reps + 1}-{self.reps + self.count_reps} under the "
                         "instruction-counting plugin (plugin 1 in runs.csv and guests.csv; their requests/s enter no "
                         f"median), each load after {self.count_warmup}s of itself")
        lines.append(f"busy: a run where other processes took more than {self.spec.str('BUSY_PCT')}% of a core is "
                     "flagged")
        if self.order == "shuffle":
            lines += [f"order rep {r}: {' '.join(self.rep_order(r))}"
                      for r in range(1, self.reps + self.count_reps + 1)]
        batch.meta(*lines)
        self.host_probe("start")

    def host_probe(self, when):
        """bench/hostprobe on the core the first placement gives the vCPU: the
        host's own speed before the first guest and after the last."""
        probe = os.environ.get("HOSTPROBE", f"{self.build}/bench/hostprobe")
        if not os.access(probe, os.X_OK):
            self.batch.meta(f"host probe {when}: not run (no {probe})")
            return
        core, _ = placement.split(self.placements[0], self.pin_cores)
        path = os.path.join(self.batch.raw, f"hostprobe-{when}.txt")
        with open(path, "w") as f:
            rc = subprocess.run(placement.prefix(core) + [probe, os.environ.get("HOSTPROBE_SECS", "2"), "256",
                                                          "2048", "8192"], stdout=f, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            self.batch.meta(f"host probe {when}: failed (raw/hostprobe-{when}.txt)")
            return
        with open(path) as f:
            self.batch.meta(*[f"host probe {when}{f' (core {core})' if core is not None else ''}: {line.rstrip()}"
                              for line in f if "KiB:" in line])

    # ---- one boot ------------------------------------------------------------
    def boot(self, batch, rep, backend, emu, emu_col, pl, name, counted):
        g = self.guests[name]
        vcpu, io = placement.split(pl, self.pin_cores)
        raw = os.path.join(batch.raw, f"{rep}-{backend}-{emu_col.replace('/', '_')}-{pl}-{name}")
        key = f"{rep},{backend},{emu_col},{pl},{name}"
        tag = f"{rep} {backend} {emu_col} {pl} {name}" + (" (under the plugin)" if counted else "")
        ns = ""
        if backend == "tap":
            ns = f"bench-{os.getpid()}"
            if not hostlib.netns_create(ns):
                raise SpecError(f"cannot create network namespace {ns}")
        self.current = {"ns": ns}
        try:
            self.boot_in(batch, g, backend, emu, pl, vcpu, io, raw, key, tag, counted, ns, rep)
        finally:
            self.cleanup()

    def start_guest(self, g, backend, emu, vcpu, io, raw, counted, ns):
        """The guest started as the back-end and placement say: (Guest, url,
        server pid, insns fifo or None)."""
        net_exec = ["ip", "netns", "exec", ns] if ns else []
        limit = BOOT_TIMEOUT + self.idle_secs + 8 * len(self.loadgens) * (self.load_secs + 60) + 60
        if g["kind"] == "native":
            port = APP_PORT if backend == "tap" else hostlib.free_port()
            cmd = net_exec + placement.prefix(vcpu) + ["timeout", "-k", "5", str(limit), g["kernel"], "-a",
                                                       "127.0.0.1", "-p", str(port), "-q", "-s"]
            guest = Guest(cmd, raw + ".console")
            self.current["guest"] = guest
            server = guest.server_pid(g["server"].split())
            return guest, f"http://127.0.0.1:{port}/", server, None
        if backend == "tap":
            net = ["--net", "tap", "--tap", hostlib.NETNS["NETNS_TAP"]]
            url, netargs = f"http://{hostlib.NETNS['NETNS_GUEST_IP']}:{APP_PORT}/", self.tap_net
        else:
            port = hostlib.free_port()
            net = ["--net", backend, "--hostfwd", f"{port}:{APP_PORT}"]
            url, netargs = f"http://127.0.0.1:{port}/", USER_GUEST_NET
        args = ["tools/qemu-run"] + net + ["--timeout", str(limit), "--smp", str(g["smp"])]
        insns_ctl = None
        if counted:
            insns_ctl = os.path.join(self.batch.raw, "insns-ctl.fifo")
            for f in (insns_ctl, raw + ".insns"):
                if os.path.lexists(f):
                    os.unlink(f)
            try:
                os.mkfifo(insns_ctl)
                args += ["--count", raw + ".insns", "--count-ctl", insns_ctl]
                self.current["files"] = [insns_ctl]
            except OSError:
                self.batch.log("no fifo for the counting plugin")
                insns_ctl = None
        args += ["--append", f"{g['prefix']} {netargs} -- -p {APP_PORT} -q -s".lstrip(), g["kernel"]]
        if g["initrd"]:
            args.append(g["initrd"])
        console_in = os.path.join(self.batch.raw, "console-in.fifo") if g["ctrl_t"] else None
        cmd = net_exec + ["env", f"QEMU={emu}"] + placement.prefix(io) + args
        guest = Guest(cmd, raw + ".console", os.path.join(self.batch.raw, "qemu.pid"), console_in)
        self.current["guest"] = guest
        if console_in and guest.fd is None:
            self.batch.log("no fifo for the console: no counters")
        if vcpu is not None and guest.pid:
            try:
                with open(raw + ".placement", "w") as f:
                    f.write(placement.pin_vcpu(guest.pid, vcpu) + "\n")
            except OSError as e:
                self.batch.log(f"  placement: {e}")
        return guest, url, guest.pid, insns_ctl

    def boot_in(self, batch, g, backend, emu, pl, vcpu, io, raw, key, tag, counted, ns, rep):
        t0 = time.monotonic()
        guest, url, server, insns_ctl = self.start_guest(g, backend, emu, vcpu, io, raw, counted, ns)
        self.current["server"] = server
        net_exec = ["ip", "netns", "exec", ns] if ns else []
        left = lambda: max(1, BOOT_TIMEOUT - int(time.monotonic() - t0))  # noqa: E731
        up = True
        if backend == "passt" and g["kind"] != "native":
            up = guest.wait_console(r"^(net: .* ip |init: eth0 )", left())
        up = up and guest.wait_http(url, left(), net_exec)
        if not up:
            why = f"no response within {BOOT_TIMEOUT}s" if guest.alive() else "it exited before answering"
            batch.log(f"{tag}: {why} (console: {raw}.console)")
            self.guest_row(key, "", "", "", g, "no_boot", counted)
            for load in self.loads:
                for gen in self.loadgens:
                    loadrun.measure(["--csv", self.runs, "--key", key, "--loadgen", gen, "--load", load,
                                     "--status", "no_boot", "--plugin", str(int(counted))])
            return
        boot = f"{time.monotonic() - t0:.2f}"
        idle = idle_vcpus = ""
        if rep <= self.idle_reps and not counted and self.idle_secs > 0 and server:
            time.sleep(1)  # let the boot's tail settle
            c0, v0 = cpu_ns_split(server)
            time.sleep(self.idle_secs)
            c1, v1 = cpu_ns_split(server)
            if c0 is not None and c1 is not None:
                idle = f"{100 * max(0, c1 - c0) / 1e9 / self.idle_secs:.2f}"
                if g["kind"] != "native":  # QEMU's vCPU threads; a native server has none
                    idle_vcpus = f"{100 * max(0, v1 - v0) / 1e9 / self.idle_secs:.2f}"
        batch.log(f"{tag}: first response after {boot}s" + (f", idle CPU {idle}%" if idle else "")
                  + (f" (vCPU threads {idle_vcpus}%)" if idle_vcpus else ""))
        for load in self.loads:
            for gen in self.loadgens:
                argv = ["--csv", self.runs, "--key", key, "--loadgen", gen, "--load", load,
                        "--secs", str(self.load_secs), "--url", url, "--raw", f"{raw}-{load}-{gen}",
                        "--netns", ns, "--cpu", "" if io is None else str(io), "--busy-pct", str(self.busy_pct)]
                if server:
                    argv += ["--server-pid", str(server)]
                if guest.fd is not None:
                    argv += ["--console", raw + ".console", "--console-in", os.path.join(batch.raw, "console-in.fifo"),
                             "--counters", raw + ".counters"]
                if insns_ctl:
                    argv += ["--insns", raw + ".insns", "--insns-ctl", insns_ctl, "--warmup", str(self.count_warmup)]
                try:
                    line = loadrun.measure(argv)
                except (OSError, ValueError, subprocess.SubprocessError) as e:
                    line = f"loadrun failed: {e}"
                batch.log(f"  {load} {gen}: {line}")
                if not re.search(r", ok(;|$)", line or ""):
                    batch.log(f"  not clean: see {raw}.console and {raw}-{load}-{gen}.{gen}")
        status = "ok" if self.stop(batch, guest, url, net_exec, g, raw) else "unclean_stop"
        self.guest_row(key, boot, idle, idle_vcpus, g, status, counted)

    def stop(self, batch, guest, url, net_exec, g, raw):
        """GET /__shutdown, then the guest's end; True when it ended with 0."""
        return stop_guest(batch, guest, g["name"], http_shutdown(url, net_exec), 15)

    def guest_row(self, key, boot, idle, idle_vcpus, g, status, counted):
        with open(self.guests_csv, "a") as f:
            f.write(f"{key},{boot},{idle},{g['bytes']},{status},{int(counted)},{idle_vcpus}\n")

    # ---- the end -----------------------------------------------------------
    def finish(self, batch):
        self.host_probe("end")
        rows = records.read_runs(self.runs) if os.path.getsize(self.runs) else []
        busy = sum(1 for r in rows if str(r.get("busy")) == "1")
        batch.meta(f"flagged runs: {busy} of {len(rows)} (busy: other processes took more than "
                   f"{self.spec.str('BUSY_PCT')}% of a core)")
        batch.log(f"flagged runs: {busy} of {len(rows)}")
        from .. import report
        report.summarise(batch.out, ref=self.ref, include_busy=self.spec.str("INCLUDE_BUSY") == "1")
        return 0

    def cleanup(self):
        cur, self.current = self.current, None
        if not cur:
            return
        guest = cur.get("guest")
        if guest is not None:
            if cur.get("server") and guest.alive():
                try:
                    os.kill(cur["server"], 15)
                except OSError:
                    pass
            guest.kill()
        for f in cur.get("files", []):
            if os.path.lexists(f):
                os.unlink(f)
        hostlib.netns_destroy(cur.get("ns", ""))
