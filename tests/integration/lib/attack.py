"""attack.py: what the hand-made TCP attacks (hostile/22-24) check of the
guest around an attack, for their Python (which runs inside the test's
namespace, next to lib/rawtcp.py):

  panicked(console)     the guest's console file holds a panic line
  served(host, when)    an ordinary client (curl) gets httpd's GET / answer,
                        else the attack fails, saying WHEN
  stalled_request(tap, host)
                        a hand-made connection (window scaling offered) that
                        asks for /bytes/1073741824 under a zero window, so
                        httpd can send nothing and reads nothing more; the
                        Connection once the guest acknowledged the request
"""
import subprocess
import sys

from rawtcp import Connection, Link, neighbour_address

REQUEST_HUGE = b"GET /bytes/1073741824 HTTP/1.1\r\nHost: x\r\n\r\n"

HELLO = b"Hello from httpd, a poll()-based server.\n"


def console_lines(console):
    with open(console, errors="replace") as f:
        return [line.rstrip("\r\n") for line in f]


def panicked(console):
    return any(line.startswith("panic:") for line in console_lines(console))


def served(host, when):
    out = subprocess.run(["curl", "-s", "-m", "10", f"http://{host}/"], capture_output=True).stdout
    if not out.endswith(HELLO):
        sys.exit(f"{when}: another client got no answer ({out[:60]!r})")


def stalled_request(tap, host):
    c = Connection(Link(tap, neighbour_address(host), host), 80, wscale=7)
    c.connect(window=0)
    c.send(REQUEST_HUGE, window=0)
    if not c.wait_acked(c.snd_nxt, 10):
        sys.exit("the request was never acknowledged")
    return c
