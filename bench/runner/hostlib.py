"""hostlib.py: the shell helpers of tools/lib, called from the runner.

The network namespace, a free port and the table of guests are defined once,
in tools/lib/netns.sh and tools/lib/guests.sh, which the integration tests
source; the runner calls the same functions through bash instead of keeping
copies of them.
"""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(ROOT, "tools", "lib")


def shell(script, *args, env=None, capture=True):
    """Runs script in bash with tools/lib's netns.sh and guests.sh sourced;
    (returncode, stdout, stderr)."""
    pre = f'. "{LIB}/netns.sh"; . "{LIB}/guests.sh"; '
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(["bash", "-c", pre + script, "hostlib"] + [str(a) for a in args], env=e, cwd=ROOT,
                       capture_output=capture, text=True)
    return p.returncode, p.stdout, p.stderr


def _values(names):
    rc, out, _ = shell("".join(f'echo "${n}"; ' for n in names))
    return dict(zip(names, out.split("\n")))


NETNS = _values(["NETNS_TAP", "NETNS_HOST_IP", "NETNS_GUEST_IP", "NETNS_MASK"])


def netns_usable():
    return shell("netns_usable")[0] == 0


def netns_create(name):
    rc, _, err = shell('netns_create "$1"', name)
    return rc == 0


def netns_destroy(name):
    if name:
        shell('netns_destroy "$1"', name)


def free_port():
    rc, out, err = shell("free_port")
    if rc != 0:
        raise OSError(err.strip() or "no free port")
    return int(out)


GUEST_VARS = ["GUEST_NAME", "GUEST_KIND", "GUEST_KERNEL", "GUEST_INITRD", "GUEST_PREFIX", "GUEST_BYTES",
              "GUEST_CTRL_T", "GUEST_APP", "GUEST_SERVER"]


def guest_resolve(spec, env=None):
    """tools/lib/guests.sh's guest_resolve: a dict of GUEST_* (keys lower case,
    without the prefix), or raises ValueError with its message."""
    script = 'guest_resolve "$1" || exit 1; ' + "".join(f'printf "%s\\n" "${v}"; ' for v in GUEST_VARS)
    rc, out, err = shell(script, spec, env=env)
    if rc != 0:
        raise ValueError(err.strip() or f"bad guest '{spec}'")
    vals = out.split("\n")
    return {v[6:].lower(): vals[i] for i, v in enumerate(GUEST_VARS)}


def image_flags(path):
    rc, out, _ = shell('image_flags "$1"', path)
    return out.strip()
