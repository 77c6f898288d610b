"""density.py: how many guests this host keeps serving at once (make density).

For each configuration of CONFIGS (GUEST@MACHINE: a guest of
tools/lib/guests.sh on QEMU's pc or microvm machine, under ACCEL), instances
are added in steps (STEPS for a unikernel, LINUX_STEPS for a Linux guest,
none past MAX) and the ones of earlier steps stay: a step of 500 after one of
250 starts 250 more. Each instance is tools/qemu-run with user networking and
one forwarded port of 127.0.0.1 (a free port from tools/lib), `--mem MEM`
(LINUX_MEM) held as MEM_BACKEND says (`--mem-backend`), httpd on port 80. User networking, not tap: each instance's
slirp is its own, so nothing is shared between instances but the host's
loopback, and no bridge of a thousand taps has to be made and removed.
A step
  - is refused, and its configuration stops, when MemAvailable cannot hold
    its new instances (the memory per instance measured so far, else MEM plus
    64 MiB, plus a tenth) with RESERVE_MIB to spare, or when the host's tasks
    would come near pid_max or threads-max;
  - launches its instances, at most BOOTING booting at once, and probes each
    until it answers (BOOT_TIMEOUT each): start_s is the time from the first
    launch to the last first answer, starts_per_s the new instances over it;
  - after SETTLE seconds takes each QEMU's Rss and Pss (smaps_rollup) and
    the wrappers' (qemu-run, timeout), the host's MemAvailable, and the CPU
    time of every QEMU over IDLE_SECS of idle (schedstat): per instance, as
    a percentage of one core;
  - then probes every instance of the configuration once, PROBE_CONC at
    once: a whole 200 answer to GET / within PROBE_TIMEOUT seconds. The step
    serves when all instances came up and at least SHARE percent answered;
    the first step that does not is the configuration's last.
After its last step every instance of the configuration is stopped (TERM to
qemu-run, KILL after STOP_SECS) before the next configuration starts. Ctrl-C,
TERM or an error stops them the same way (cleanup); and each qemu-run has
`--timeout LIFETIME`, so even a batch killed outright leaves no QEMU past it.
Out: steps.csv (a row per step), instances.csv (a row per instance, at its
configuration's end), meta.txt, raw/ (each console, named
GUEST-MACHINE-INDEX.console), summary.md (report/density.py).
"""
import csv
import os
import resource
import signal
import statistics
import subprocess
import time

from .. import fleet, hostcpu, hostlib
from ..batch import Step
from ..boot import uk_flags_file
from ..guard import read_loadavg
from ..procfs import children, cpu_ns, tasks
from ..report.density import FIELDS as STEP_FIELDS
from ..report import density as density_report
from ..spec import ROOT, SpecError

GUEST_PORT = 80
USER_GUEST_NET = "ip=10.0.2.15 gw=10.0.2.2 mask=255.255.255.0"  # slirp's defaults
MACHINES = ("pc", "microvm")
INSTANCE_FIELDS = ["guest", "machine", "step", "index", "port", "qemu_pid", "up_s", "rss_kib", "pss_kib",
                   "probe_ms", "status"]
STOP_SECS = 30       # from the TERMs to the KILL, and STOP_SECS_EACH more per instance:
STOP_SECS_EACH = 0.25  # hundreds of QEMUs and qemu-runs ending at once share two cores
TASK_SPARE = 2000    # tasks kept free below pid_max and threads-max


class Config:
    """One GUEST@MACHINE of CONFIGS and its instances."""

    def __init__(self, word, guest, machine, g, steps, mem):
        self.word = word      # as CONFIGS spells it
        self.guest, self.machine = guest, machine
        self.g = g            # hostlib.guest_resolve's fields: kind, kernel, initrd, prefix...
        self.steps = steps    # instance counts, rising, none past MAX
        self.mem = mem        # qemu-run --mem
        self.instances = []   # fleet.Instance, every one started and not yet stopped
        self.stopped = ""     # why no further step runs ("" while they do)
        self.kib_per_inst = None    # host memory an instance takes, as last measured
        self.tasks_per_inst = None  # tasks (threads) an instance takes, as last measured
        self.avail_base = None  # MemAvailable (KiB) before its first instance
        self.step_of = {}     # instance index -> the step that started it

    def name(self):
        return f"{self.guest}@{self.machine}"


def mem_mib(text, what):
    """A QEMU -m size with a suffix M or G, in MiB."""
    if len(text) < 2 or not text[:-1].isdigit() or text[-1] not in "MG" or len(text) > 8:
        raise SpecError(f"{what} must be a size like 32M or 1G, not '{text}'")
    return int(text[:-1]) * (1024 if text[-1] == "G" else 1)


class Workload:
    def __init__(self, spec):
        self.spec = s = spec
        self.max = s.int("MAX", 1, 100000)
        self.mem, self.linux_mem = s.str("MEM"), s.str("LINUX_MEM")
        mem_mib(self.mem, "MEM")
        mem_mib(self.linux_mem, "LINUX_MEM")
        self.share = s.number("SHARE")
        if not 0 < self.share <= 100:
            raise SpecError(f"SHARE must be a percentage in (0, 100], not '{s.str('SHARE')}'")
        self.probe_timeout = s.number("PROBE_TIMEOUT")
        if not 0 < self.probe_timeout <= 60:
            raise SpecError("PROBE_TIMEOUT must be a number of seconds in (0, 60]")
        self.probe_conc = s.int("PROBE_CONC", 1, 1024)
        self.booting = s.int("BOOTING", 0, 100000)
        self.boot_timeout = s.int("BOOT_TIMEOUT", 1, 3600)
        self.settle = s.number("SETTLE")
        self.idle_secs = s.number("IDLE_SECS")
        if self.idle_secs <= 0:
            raise SpecError("IDLE_SECS must be above 0")
        self.reserve_mib = s.int("RESERVE_MIB", 0, 1 << 20)
        self.lifetime = s.int("LIFETIME", 60, 86400)
        self.accel = s.choice("ACCEL", ("tcg", "kvm"))
        self.mem_backend = s.choice("MEM_BACKEND", ("anon", "memfd"))
        self.uk_httpd = s.str("UK_HTTPD")
        uk_steps = self.steps_of("STEPS")
        linux_steps = self.steps_of("LINUX_STEPS")
        self.configs = []
        for word in s.words("CONFIGS"):
            guest, at, machine = word.rpartition("@")
            if not at or not guest or machine not in MACHINES:
                raise SpecError(f"CONFIGS: '{word}' is not GUEST@MACHINE (machine {' or '.join(MACHINES)})")
            env = {"UK_HTTPD": self.uk_httpd} if self.uk_httpd else None
            try:
                g = hostlib.guest_resolve(guest, env=env)
            except ValueError as e:
                raise SpecError(f"CONFIGS: {e}") from None
            if g["kind"] not in ("uk", "linux"):
                raise SpecError(f"CONFIGS: {guest} is a {g['kind']} guest; density boots only uk and linux guests")
            steps = linux_steps if g["kind"] == "linux" else uk_steps
            steps = [n for n in steps if n <= self.max]
            if not steps:
                raise SpecError(f"CONFIGS: {word}: no step at or below MAX={self.max}")
            mem = self.linux_mem if g["kind"] == "linux" else self.mem
            self.configs.append(Config(word, g["name"], machine, g, steps, mem))
        if not self.configs:
            raise SpecError("CONFIGS is empty")
        self.check_limits()
        self.batch = None

    def steps_of(self, k):
        ws = self.spec.words(k)
        if not ws or not all(w.isdigit() and 0 < int(w) <= 100000 for w in ws):
            raise SpecError(f"{k} must be instance counts, rising, e.g. '50 100 250'")
        steps = [int(w) for w in ws]
        if steps != sorted(set(steps)):
            raise SpecError(f"{k} must rise: {self.spec.str(k)}")
        return steps

    def check_limits(self):
        """Refuses settings this host's limits cannot hold, before anything
        starts: descriptors for the probes, ports for the instances."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < self.probe_conc + 64:
            raise SpecError(f"ulimit -n is {soft}: PROBE_CONC={self.probe_conc} probes need {self.probe_conc + 64} "
                            "descriptors (raise it with ulimit -n, or lower PROBE_CONC)")
        try:
            with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
                lo = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            lo = 32768
        lo = lo if lo > 21024 else 32768  # free_port's own rule (tools/lib/netns.sh)
        most = max(c.steps[-1] for c in self.configs)
        if most > (lo - 20000) // 2:
            raise SpecError(f"MAX: {most} instances need as many ports below the ephemeral range "
                            f"({lo}); free_port picks from 20000-{lo - 1}: at most {(lo - 20000) // 2} here")

    # ---- the plan ----
    def plan(self):
        steps = []
        for c in self.configs:
            boot_cost = 4.0 if c.g["kind"] == "linux" else 0.3  # CPU seconds per boot here, for the estimate
            prev = 0
            for n in c.steps:
                secs = (n - prev) * boot_cost / 2 + self.settle + self.idle_secs + n * 0.02 + 5
                steps.append(Step(f"{c.name()}: {n} instances (+{n - prev})", secs,
                                  lambda batch, c=c, n=n: self.step(c, n)))
                prev = n
            steps.append(Step(f"{c.name()}: stop its instances", 10 + c.steps[-1] * 0.02,
                              lambda batch, c=c: self.stop_config(c)))
        return steps

    def start(self, batch):
        self.batch = batch
        self.steps_csv = os.path.join(batch.out, "steps.csv")
        self.inst_csv = os.path.join(batch.out, "instances.csv")
        for path, fields in ((self.steps_csv, STEP_FIELDS), (self.inst_csv, INSTANCE_FIELDS)):
            with open(path, "w", newline="") as f:
                csv.writer(f).writerow(fields)
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        qemu = self.run_out(["tools/qemu-run", "--version"])
        lines = [f"configs: {' '.join(c.name() for c in self.configs)}; accel {self.accel}",
                 f"steps: " + "; ".join(f"{c.name()} {' '.join(map(str, c.steps))}" for c in self.configs),
                 f"memory: uk --mem {self.mem}, linux --mem {self.linux_mem}, --mem-backend {self.mem_backend}; network: user, one forwarded "
                 f"127.0.0.1 port each to guest port {GUEST_PORT}",
                 f"serving: every instance up within {self.boot_timeout}s, then >= {self.spec.str('SHARE')}% "
                 f"answering GET / within {self.spec.str('PROBE_TIMEOUT')}s ({self.probe_conc} probes at once)",
                 f"idle: {self.spec.str('IDLE_SECS')}s after {self.spec.str('SETTLE')}s settling; booting at once: "
                 f"{self.booting or 'no limit'}; reserve {self.reserve_mib} MiB",
                 f"emulator: {qemu}",
                 f"limits: ulimit -n {nofile}; pid_max {self.read_int('/proc/sys/kernel/pid_max')}; threads-max "
                 f"{self.read_int('/proc/sys/kernel/threads-max')}; MemTotal {self.meminfo('MemTotal') // 1024} MiB; "
                 f"MemAvailable {fleet.mem_available_kib() // 1024} MiB"]
        for c in self.configs:
            image = c.g["initrd"] if c.g["kind"] == "uk" else c.g["kernel"] + " " + c.g["initrd"]
            flags = ""
            if c.g["kind"] == "uk":
                flags = "; " + hostlib.image_flags(uk_flags_file(c.g["initrd"]))
            lines.append(f"image {c.name()}: {image} ({c.g['bytes']} bytes){flags}")
        batch.meta(*lines)

    @staticmethod
    def run_out(cmd):
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        return (p.stdout.strip() or p.stderr.strip()).splitlines()[0] if (p.stdout or p.stderr) else "?"

    @staticmethod
    def read_int(path):
        try:
            with open(path) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return 0

    @staticmethod
    def meminfo(key):
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return 0

    # ---- instances ----
    def command(self, c, port, pidfile):
        g = c.g
        append = f"{g['prefix']} {USER_GUEST_NET} -- -p {GUEST_PORT} -q".lstrip()
        cmd = ["tools/qemu-run", "--machine", c.machine, "--net", "user", "--hostfwd", f"{port}:{GUEST_PORT}",
               "--mem", c.mem, "--mem-backend", self.mem_backend, "--timeout", str(self.lifetime), "--append", append]
        if g["kind"] == "uk" and c.machine == "microvm":
            cmd += [g["initrd"]]  # PVH: the image alone, no loader
        else:
            cmd += [g["kernel"], g["initrd"]]
        return cmd + ["--", "-pidfile", pidfile]

    def env(self):
        e = dict(os.environ)
        e["ACCEL"] = self.accel
        return e

    def free_ports(self, n, taken):
        ports = []
        for _ in range(20):
            if len(ports) == n:
                return ports
            rc, out, err = hostlib.shell('for _ in $(seq "$1"); do free_port || exit 1; done', n - len(ports))
            if rc != 0:
                raise RuntimeError(err.strip() or "no free port")
            for p in out.split():
                if int(p) not in taken and int(p) not in ports:
                    ports.append(int(p))
        if len(ports) < n:
            raise RuntimeError(f"free_port found {len(ports)} of {n} free ports in 20 rounds")
        return ports

    def can_start(self, c, add):
        """'' when the host can hold add more instances, else why not."""
        est = c.kib_per_inst or (mem_mib(c.mem, "MEM") + 64) * 1024
        need = add * est * 1.1 / 1024 + self.reserve_mib
        avail = fleet.mem_available_kib() / 1024
        if need > avail:
            return (f"refused: {add} more at ~{est / 1024:.0f} MiB each + {self.reserve_mib} MiB reserve need "
                    f"{need:.0f} MiB, MemAvailable {avail:.0f} MiB")
        per = c.tasks_per_inst or 16
        limit = min(self.read_int("/proc/sys/kernel/pid_max"), self.read_int("/proc/sys/kernel/threads-max"))
        if os.getuid() != 0:
            nproc = resource.getrlimit(resource.RLIMIT_NPROC)[0]
            if nproc != resource.RLIM_INFINITY:
                limit = min(limit, nproc)
        want = fleet.task_count() + add * per * 1.2
        if want > limit - TASK_SPARE:
            return (f"refused: {add} more at ~{per} tasks each would bring the host to {want:.0f} tasks, "
                    f"near its limit {limit} (pid_max, threads-max, ulimit -u)")
        return ""

    def step(self, c, n):
        b = self.batch
        if c.stopped:
            b.log(f"{c.name()}: step {n} not run ({c.stopped})")
            return
        if not c.instances:
            self.first_check(c)
            if c.stopped:
                return
            c.avail_base = fleet.mem_available_kib()
        add = n - len(c.instances)
        why = self.can_start(c, add)
        if why:
            c.stopped = why
            b.log(f"{c.name()}: step {n}: {why}")
            self.write_step(c, n, {"added": 0, "verdict": why})
            return
        taken = {i.port for cc in self.configs for i in cc.instances}
        ports = self.free_ports(add, taken)
        new = []
        for port in ports:
            idx = len(c.instances)
            base = os.path.join(b.raw, f"{c.guest}-{c.machine}-{idx:05d}")
            inst = fleet.Instance(idx, port, self.command(c, port, base + ".pid"), base + ".console", base + ".pid")
            c.instances.append(inst)
            c.step_of[idx] = n
            new.append(inst)
        start_s = self.bring_up(c, new)
        ups = [i.up_s for i in new if i.up_s is not None]
        up_all = len(ups) == len(new)
        row = {"added": add, "up": len(ups), "start_s": f"{start_s:.2f}",
               "starts_per_s": f"{len(ups) / start_s:.2f}" if start_s > 0 and up_all else "",
               "up_p50_s": f"{statistics.median(ups):.2f}" if ups else "",
               "up_max_s": f"{max(ups):.2f}" if ups else ""}
        b.log(f"{c.name()}: {len(ups)} of {add} new instances answered; {start_s:.1f}s from the first launch "
              f"to the last answer")
        time.sleep(self.settle)
        row.update(self.measure(c))
        row.update(self.probe(c))
        ok = int(row["probe_ok"])
        serving = up_all and ok * 100 >= self.share * len(c.instances)
        row["verdict"] = "serving" if serving else (
            f"not serving: {len(ups)} of {add} came up, {ok} of {len(c.instances)} answered within "
            f"{self.spec.str('PROBE_TIMEOUT')}s")
        b.log(f"{c.name()} at {len(c.instances)}: {row['verdict']}; idle {row.get('idle_pct_per_inst', '?')}% of a "
              f"core each; QEMU Pss {row.get('qemu_pss_mib', '?')} MiB each")
        if not serving:
            c.stopped = row["verdict"]
        self.write_step(c, n, row)

    def first_check(self, c):
        """A configuration qemu-run refuses (a dry run of its command line)
        stops before its first instance, with qemu-run's reason."""
        cmd = self.command(c, 1, os.path.join(self.batch.raw, "dry.pid"))
        p = subprocess.run(cmd[:1] + ["--dry-run"] + cmd[1:], cwd=ROOT, env=self.env(), capture_output=True,
                           text=True)
        if p.returncode != 0:
            c.stopped = f"cannot start: {' '.join(p.stderr.split())[:300]}"
            self.batch.log(f"{c.name()}: {c.stopped}")
            self.write_step(c, c.steps[0], {"added": 0, "verdict": c.stopped})

    def bring_up(self, c, new):
        """Launches new (BOOTING at most booting at once) and probes each until
        it answers; the seconds from the first launch to the last answer."""
        took = fleet.bring_up(new, self.env(), self.booting, min(self.probe_timeout, 1.0), self.probe_conc,
                              self.boot_timeout)
        for i in new:
            if i.status != "up":
                self.batch.log(f"{c.name()} #{i.index}: {i.status}")
        return took

    def measure(self, c):
        """Memory of each QEMU and its wrappers, tasks, and the idle CPU."""
        live = [i for i in c.instances if i.alive() and i.qemu_pid() is not None]
        rss, pss, wrap, ntasks = [], [], [], []
        for i in live:
            q = i.qemu_pid()
            m = fleet.smaps_rollup(q)
            if m is None:
                continue
            i.rss_kib, i.pss_kib = m["Rss"], m["Pss"]
            rss.append(m["Rss"])
            pss.append(m["Pss"])
            wrappers = [i.proc.pid] + [p for p in children(i.proc.pid) if p != q]
            w = [fleet.smaps_rollup(p) for p in wrappers]
            wrap.append(sum(x["Pss"] for x in w if x))
            ntasks.append(len(tasks(q)) + len(wrappers))
        avail = fleet.mem_available_kib()
        out = {"mem_avail_mib": avail // 1024}
        if pss:
            per = statistics.mean(pss) + statistics.mean(wrap)
            host = (c.avail_base - avail) / len(live) if live and c.avail_base else 0
            c.kib_per_inst = max(per, host)
            c.tasks_per_inst = max(ntasks)
            out.update(qemu_rss_mib=f"{statistics.mean(rss) / 1024:.1f}", qemu_pss_mib=f"{statistics.mean(pss) / 1024:.1f}",
                       wrap_pss_mib=f"{statistics.mean(wrap) / 1024:.1f}", host_mib_per_inst=f"{host / 1024:.1f}",
                       tasks_per_inst=f"{statistics.mean(ntasks):.1f}")
        pids = [i.qemu_pid() for i in live]
        busy0, _ = hostcpu.cpu_ticks()
        t0 = time.monotonic()
        before = {p: cpu_ns(p) for p in pids}
        time.sleep(self.idle_secs)
        after = {p: cpu_ns(p) for p in pids}
        secs = time.monotonic() - t0
        busy1, _ = hostcpu.cpu_ticks()
        took = [after[p] - before[p] for p in pids if before[p] is not None and after[p] is not None]
        out.update(idle_s=f"{secs:.2f}", host_busy_pct=f"{100.0 * (busy1 - busy0) / hostcpu.HZ / secs:.1f}")
        if took:
            out["idle_pct_per_inst"] = f"{100.0 * sum(took) / 1e9 / secs / len(took):.3f}"
        return out

    def probe(self, c):
        """Every instance of c probed once: the count that answered in time."""
        live = list(c.instances)
        res = fleet.probe_all([i.port for i in live], self.probe_timeout, self.probe_conc)
        ms = []
        for i in live:
            t = res.get(i.port)
            i.probe_ms = "" if t is None else f"{t * 1000:.1f}"
            if t is not None:
                ms.append(t * 1000)
        ms.sort()
        out = {"probe_ok": str(len(ms)), "probe_n": str(len(live))}
        if ms:
            out.update(probe_p50_ms=f"{statistics.median(ms):.1f}",
                       probe_p99_ms=f"{ms[min(len(ms) - 1, int(len(ms) * 0.99))]:.1f}",
                       probe_max_ms=f"{ms[-1]:.1f}")
        return out

    def write_step(self, c, n, row):
        loads = read_loadavg() or ("?",)
        full = {k: "" for k in STEP_FIELDS}
        full.update(guest=c.guest, machine=c.machine, mem=c.mem, step=n, running=len(c.instances), load1=loads[0])
        full.update(row)
        with open(self.steps_csv, "a", newline="") as f:
            csv.DictWriter(f, STEP_FIELDS).writerow(full)

    # ---- the end of a configuration, and of the batch ----
    def stop_config(self, c):
        if not c.instances:
            return
        t0 = time.monotonic()
        left = self.stop_all(c.instances)
        self.batch.log(f"{c.name()}: stopped {len(c.instances)} instances in {time.monotonic() - t0:.1f}s"
                       + (f"; {left} needed a KILL" if left else ""))
        with open(self.inst_csv, "a", newline="") as f:
            w = csv.writer(f)
            for i in c.instances:
                w.writerow([c.guest, c.machine, c.step_of.get(i.index, ""), i.index, i.port, i.qemu_pid() or "",
                            "" if i.up_s is None else f"{i.up_s:.2f}", i.rss_kib, i.pss_kib,
                            i.probe_ms, i.status])
        for i in c.instances:
            if os.path.exists(i.pidfile):
                os.unlink(i.pidfile)
        c.instances = []
        c.stopped = c.stopped or "stopped"

    @staticmethod
    def stop_all(instances):
        """TERM to every qemu-run, then a KILL to what still runs after
        STOP_SECS (and STOP_SECS_EACH per instance); the number killed."""
        for i in instances:
            i.stop()
        end = time.monotonic() + STOP_SECS + STOP_SECS_EACH * len(instances)
        for i in instances:
            i.reap(end - time.monotonic())
        killed = 0
        for i in instances:
            if i.alive():
                killed += 1
            i.kill()
        return killed

    def finish(self, batch):
        return density_report.write(batch.out)

    def cleanup(self):
        # A second Ctrl-C must not cut the stop short and leave guests.
        old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            for c in self.configs:
                if c.instances and self.batch:
                    self.stop_config(c)
                elif c.instances:
                    self.stop_all(c.instances)
        finally:
            for s, h in old.items():
                signal.signal(s, h)
