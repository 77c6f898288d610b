"""drift.py: issue 11's experiment on how much one build's speed moves
with nothing but time. Boots each image in turn (alternating, BOOTS times) on
the tap back-end with the benchmark's placement (the vCPU thread alone on one
core, QEMU's other threads and ab on the other) and runs the same load RUNS
times in each boot. Per run it prints what ab completed, the guest's counters
per request (notifies, polls, and the kernel's time in receive+stack, egress
and the rest, from Ctrl-T on the console before and after) and the CPU of
QEMU's vCPU and main-loop threads; with PROBE=1 also bench/hostprobe's 8 MiB
working set on the vCPU's core right before and after the run (the guest
idles meanwhile). NOT for a loaded host: run it with nothing else running.

    bench/run experiment drift [NAME=VALUE...]
      GUESTS     NAME=IMAGE[:KERNEL-OPTIONS] ...  default: all=build/apps/httpd-all.elf
                 e.g. "all=build/apps/httpd-all.elf nobatch=build/apps/httpd-all.elf:vnet_tx_batch=0"
      LOAD       kN (ab -k -c N) or cN (ab -c N)  default: k64
      RUNS       runs per boot                    default: 8
      LOAD_SECS  seconds of each run              default: 3
      BOOTS      boots of each guest              default: 1
      PROBE      1: the host probe around each run (build/bench/hostprobe)  default: 0
      PIN_CORES  the vCPU's core and the other    default: "1 0"
Needs root, /dev/net/tun, ab, curl. Exit: 0, or 2 on a bad setting.
"""
import os
import re
import subprocess
import sys
import time

from .. import hostlib, placement
from ..guest import Guest as QemuGuest
from . import ROOT

GUEST_IP, HOST_IP, MASK, PORT = "192.0.2.2", "192.0.2.1", "255.255.255.0", 8080


def setting(name, default):
    return os.environ.get(name, default)


def thread_cpu(pid):
    """{thread name: CPU seconds} of QEMU's threads (ticks of /proc/PID/task/*/stat)."""
    hz = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            f = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = "vcpu" if comm.startswith("CPU ") else ("main" if tid == str(pid) else "other")
        out[name] = out.get(name, 0.0) + (int(f[11]) + int(f[12])) / hz
    return out


class Guest(QemuGuest):
    """One boot: QEMU in a fresh namespace, its console in a file, Ctrl-T by a fifo."""

    def __init__(self, ns, image, opts, workdir, vcpu_core, io_core):
        self.ns = ns
        self.console = os.path.join(workdir, "console")
        if not hostlib.netns_create(ns):
            raise SystemExit(f"drift-experiment: cannot create the namespace {ns} (root? /dev/net/tun?)")
        append = f"ip={GUEST_IP} gw={HOST_IP} mask={MASK} {opts} -- -p {PORT} -q -s"
        cmd = ["ip", "netns", "exec", ns, "taskset", "-c", io_core, f"{ROOT}/tools/qemu-run", "--net", "tap",
               "--tap", "tap0", "--timeout", "900", "--append", append, f"{ROOT}/build/loader/loader.elf", image]
        super().__init__(cmd, self.console, pidfile=os.path.join(workdir, "qemu.pid"),
                         console_in=os.path.join(workdir, "in.fifo"))
        if self.pid is None:
            self.kill()
            raise SystemExit("drift-experiment: QEMU did not start (see " + self.console + ")")
        try:
            placement.pin_vcpu(self.pid, int(vcpu_core))
        except OSError as e:
            self.stop()
            raise SystemExit(f"drift-experiment: pinning the vCPU failed: {e}") from e
        if not self.wait_http(f"http://{GUEST_IP}:{PORT}/", 60, ["ip", "netns", "exec", ns]):
            raise SystemExit("drift-experiment: the guest did not answer (see " + self.console + ")")

    def curl(self, path):
        return subprocess.run(["ip", "netns", "exec", self.ns, "curl", "-s", "-o", "/dev/null", "-m", "2",
                               f"http://{GUEST_IP}:{PORT}/{path}"]).returncode

    def counters(self):
        """The numbers of the guest's next Ctrl-T dump."""
        end = "kernel: time us:"  # the dump's last line (a dump cut before it read as zeros)
        before = open(self.console, errors="replace").read().count(end)
        os.write(self.fd, b"\x14")
        text = ""
        for _ in range(400):  # 2 s at most
            text = open(self.console, errors="replace").read()
            last = text.rfind(end)
            if text.count(end) > before and "\n" in text[last:]:
                break
            time.sleep(0.005)
        dump = text[text.rfind("sockets: open"):]
        c = {}
        m = re.search(r"kicks rx \d+ tx (\d+)", dump)
        c["notifies"] = int(m.group(1)) if m else 0
        m = re.search(r"kernel: waits \d+; polls (\d+)", dump)
        c["polls"] = int(m.group(1)) if m else 0
        m = re.search(r"time us: receive\+stack (\d+), egress (\d+), spin (\d+), park (\d+), app\+other (\d+)", dump)
        for i, k in enumerate(("stack_us", "egress_us", "spin_us", "park_us", "app_us")):
            c[k] = int(m.group(i + 1)) if m else 0
        return c

    def stop(self):
        self.curl("__shutdown")
        if self.wait_exit(10) is None:
            self.kill()
        hostlib.netns_destroy(self.ns)


def probe(core):
    exe = os.path.join(ROOT, "build/bench/hostprobe")
    out = subprocess.run(["taskset", "-c", core, exe, "0.5", "8192"], capture_output=True, text=True).stdout
    m = re.search(r"median (\d+)", out)
    return m.group(1) if m else "-"


def main(argv):
    for arg in argv:
        if "=" not in arg:
            print(__doc__, file=sys.stderr)
            return 2
        k, v = arg.split("=", 1)
        os.environ[k] = v
    load, runs, secs = setting("LOAD", "k64"), int(setting("RUNS", "8")), int(setting("LOAD_SECS", "3"))
    boots, do_probe = int(setting("BOOTS", "1")), setting("PROBE", "0") == "1"
    vcpu_core, io_core = setting("PIN_CORES", "1 0").split()
    if not re.fullmatch(r"[kc][1-9][0-9]*", load):
        print(f"drift-experiment: bad LOAD {load!r}", file=sys.stderr)
        return 2
    guests = []
    for spec in setting("GUESTS", "all=build/apps/httpd-all.elf").split():
        name, _, rest = spec.partition("=")
        image, _, opts = rest.partition(":")
        image = os.path.join(ROOT, image)
        if not name or not os.path.isfile(image):
            print(f"drift-experiment: bad guest {spec!r} (no image?)", file=sys.stderr)
            return 2
        guests.append((name, image, opts.replace("+", " ")))
    ab = ["ab", "-q", "-r", "-s", "10", "-c", load[1:], "-t", str(secs), "-n", "5000000"]
    if load[0] == "k":
        ab.insert(1, "-k")
    workdir = os.path.join(ROOT, "build", "drift-experiment")
    os.makedirs(workdir, exist_ok=True)
    print("boot guest run req/s failed notifies/req polls/req stack_us/req egress_us/req app_us/req "
          "vcpu_s main_s" + (" probe_before probe_after" if do_probe else ""))
    for boot in range(1, boots + 1):
        for name, image, opts in guests:
            g = Guest(f"drift{os.getpid()}", image, opts, workdir, vcpu_core, io_core)
            try:
                for run in range(1, runs + 1):
                    pb = probe(vcpu_core) if do_probe else ""
                    c0, t0 = g.counters(), thread_cpu(g.pid)
                    res = subprocess.run(["ip", "netns", "exec", g.ns, "taskset", "-c", io_core] + ab
                                         + [f"http://{GUEST_IP}:{PORT}/"], capture_output=True, text=True)
                    c1, t1 = g.counters(), thread_cpu(g.pid)
                    pa = probe(vcpu_core) if do_probe else ""
                    n = int((re.search(r"Complete requests:\s+(\d+)", res.stdout) or [0, 0])[1])
                    failed = (re.search(r"Failed requests:\s+(\d+)", res.stdout) or [0, "?"])[1]
                    rps = (re.search(r"Requests per second:\s+([\d.]+)", res.stdout) or [0, "0"])[1]
                    per = {k: (c1[k] - c0[k]) / n if n else 0 for k in c0}
                    print(f"{boot} {name} {run} {float(rps):.0f} {failed} {per['notifies']:.3f} {per['polls']:.2f} "
                          f"{per['stack_us']:.1f} {per['egress_us']:.1f} {per['app_us']:.1f} "
                          f"{t1.get('vcpu', 0) - t0.get('vcpu', 0):.2f} {t1.get('main', 0) - t0.get('main', 0):.2f}"
                          + (f" {pb} {pa}" if do_probe else ""), flush=True)
            finally:
                g.stop()
    return 0

