"""attack.py: what the hand-made TCP attacks (hostile/22-24) check of the
guest around an attack, for their Python (which runs inside the test's
namespace, next to lib/rawtcp.py):

  panicked(console)     the guest's console file holds a panic line
  served(host, when)    an ordinary client (curl) gets httpd's GET / answer,
                        else the attack fails, saying WHEN
"""
import subprocess
import sys

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
