"""plugin_cost.py: what the instruction-counting plugin costs a guest. Boots the
guest BOOTS times without the plugin and BOOTS times with it (tools/qemu-run
--count), alternating, on QEMU's user networking, and runs the same fixed
loads in each boot (ab -k -c 1 -n N_KEEP, then ab -c 1 -n N_NEW); prints per
run the requests/s and QEMU's CPU per request (the whole process, from
/proc/PID/stat), then per load the medians of both modes and their ratio.
Alternating boots share the host's drift; the ratio is the plugin's cost.

    bench/run experiment plugin-cost [NAME=VALUE...]
      GUEST   uk (build/apps/httpd-all.elf) or linux (build/linux/*)  default: uk
      BOOTS   boots of each mode                                       default: 3
      N_KEEP  requests of the keep-alive load                          default: 20000
      N_NEW   requests of the new-connection load                      default: 3000
      QEMU    7.2 or 10 (tools/qemu-run's)
Needs ab and curl; the plugin built (make plugin). Exit 0, or 2 on a bad setting.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

from ..guest import Guest
from . import ROOT

NET = "ip=10.0.2.15 gw=10.0.2.2 mask=255.255.255.0"  # slirp's defaults


def cpu_s(pid):
    """CPU seconds of a process, every thread (utime + stime)."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def ab(url, n, keepalive):
    out = subprocess.run(["ab", "-q", "-r", "-s", "20", "-c", "1", "-n", str(n)] + (["-k"] if keepalive else [])
                         + [url], capture_output=True, text=True, timeout=600).stdout
    done = re.search(r"Complete requests:\s+(\d+)", out)
    failed = re.search(r"Failed requests:\s+(\d+)", out)
    rps = re.search(r"Requests per second:\s+([0-9.]+)", out)
    if not (done and rps) or int(failed.group(1)) or int(done.group(1)) != n:
        raise RuntimeError(f"ab did not complete its {n} requests:\n{out}")
    return float(rps.group(1))


def boot(guest, counted, tmp, port):
    """One boot: the loads' (load, req/s, CPU us per request)."""
    if guest == "linux":
        images, prefix = [f"{ROOT}/build/linux/vmlinux", f"{ROOT}/build/linux/initrd.img"], "console=ttyS0 quiet panic=-1 "
    else:
        images, prefix = [f"{ROOT}/build/loader/loader.elf", f"{ROOT}/build/apps/httpd-all.elf"], ""
    cmd = [f"{ROOT}/tools/qemu-run", "--accel", "tcg", "--net", "user", "--hostfwd", f"{port}:8080",
           "--timeout", "900"]
    if counted:
        cmd += ["--count", os.path.join(tmp, "insns")]
    cmd += ["--append", f"{prefix}{NET} -- -p 8080 -q -s"] + images
    guest = Guest(cmd, os.path.join(tmp, "console"), pidfile=os.path.join(tmp, "qemu.pid"))
    url = f"http://127.0.0.1:{port}/"
    guest.wait_http(url, 600)
    pid = guest.pid
    out = []
    for load, n, keepalive in (("k1", N_KEEP, True), ("c1", N_NEW, False)):
        c0 = cpu_s(pid)
        rps = ab(url, n, keepalive)
        out.append((load, rps, 1e6 * (cpu_s(pid) - c0) / n))
    subprocess.run(["curl", "-s", "-o", "/dev/null", "-m", "3", url + "__shutdown"])
    if guest.wait_exit(60) is None:
        guest.kill()
        raise RuntimeError("the guest did not stop on /__shutdown")
    return out


def main(argv):
    global N_KEEP, N_NEW
    for arg in argv:  # NAME=VALUE: as if in the environment
        if "=" not in arg:
            print(__doc__, file=sys.stderr)
            return 2
        k, v = arg.split("=", 1)
        os.environ[k] = v
    guest = os.environ.get("GUEST", "uk")
    try:
        boots, N_KEEP, N_NEW = (int(os.environ.get(k, d)) for k, d in
                                (("BOOTS", 3), ("N_KEEP", 20000), ("N_NEW", 3000)))
    except ValueError:
        print("plugin-cost: BOOTS, N_KEEP and N_NEW are whole numbers", file=sys.stderr)
        return 2
    if guest not in ("uk", "linux") or boots < 1:
        print(__doc__, file=sys.stderr)
        return 2
    results = {}  # (mode, load) -> [(req/s, CPU us per request)]
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(boots):
            for counted in (False, True):
                mode = "plugin" if counted else "plain"
                port = 20000 + (os.getpid() * 7 + i * 2 + counted) % 20000
                for load, rps, cpu in boot(guest, counted, tmp, port):
                    results.setdefault((mode, load), []).append((rps, cpu))
                    print(f"boot {i + 1} {mode:6s} {load}: {rps:9.1f} req/s, {cpu:8.1f} us CPU/req", flush=True)
    print(f"\n{guest}, QEMU {os.environ.get('QEMU', '7.2')}, medians of {boots} boots each:")
    for load in ("k1", "c1"):
        plain, plug = results[("plain", load)], results[("plugin", load)]
        r0, r1 = (statistics.median(x[0] for x in v) for v in (plain, plug))
        c0, c1 = (statistics.median(x[1] for x in v) for v in (plain, plug))
        print(f"  {load}: req/s {r0:.0f} -> {r1:.0f} with the plugin (x{r1 / r0:.2f}); "
              f"CPU per request {c0:.1f} -> {c1:.1f} us (x{c1 / c0:.2f})")
    return 0

