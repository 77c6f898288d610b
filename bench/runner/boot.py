"""boot.py: what more than one workload does around a guest it measures.

    uk_flags_file(image)  IMAGE.flags beside a unikernel image (its make rule
                          writes it): how the image was built, for meta.txt
    accel()               the accelerator tools/qemu-run picks on this host
                          ("accel tcg", "accel kvm"), or "?"
    http_shutdown(url, net_exec=())
                          the command asking our httpd at url to end (GET
                          /__shutdown), behind net_exec (ip netns exec NS)
    stop_guest(batch, guest, name, request, secs)
                          a guest (runner.guest.Guest) asked to end by the
                          command request and waited for; killed when it
                          still runs, and said in the batch's log when it
                          did not end cleanly
The guest itself is runner.guest's; the workloads build its command line.
"""
import re
import subprocess

from .spec import ROOT


def uk_flags_file(image):
    return (image[:-4] if image.endswith(".elf") else image) + ".flags"


def accel():
    p = subprocess.run(["tools/qemu-run", "--dry-run", "bench/run"], cwd=ROOT, capture_output=True, text=True)
    m = re.search(r"accel [a-z]*", p.stdout)
    return m.group(0) if m else "?"


def http_shutdown(url, net_exec=()):
    return list(net_exec) + ["curl", "-s", "-o", "/dev/null", "-m", "3", url.rstrip("/") + "/__shutdown"]


def stop_guest(batch, guest, name, request, secs):
    """True when the guest ended with status 0 within secs of request (a
    command; None: nothing asks it, as for Debian's iperf3 -s, and it is
    killed at once)."""
    if request is None:
        guest.kill()
        return False
    subprocess.run(request, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rc = guest.wait_exit(secs)
    if rc == 0:
        return True
    if rc is None:
        batch.log(f"{name} did not stop on request; killing it")
        guest.kill()
        return False
    # qemu-run's 0 is the app's own exit; a crash or reset is 202-205 and
    # its line on the console says which.
    try:
        with open(guest.console, errors="replace") as f:
            last = [ln.strip() for ln in f if ln.startswith("qemu-run:")][-1:]
    except OSError:
        last = []
    batch.log(f"{name} exited with status {rc} {' '.join(last)}")
    return False
