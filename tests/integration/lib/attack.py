"""attack.py: what the hand-made TCP attacks (hostile/22-24) check of the
guest around an attack, for their Python (lib/hostile.sh's hostile_attack
runs it inside the test's namespace, lib/ on its path):

  Guest()               the guest under attack, from the command line
                        hostile_attack gives (sys.argv[1:]: TAP HOST CONSOLE
                        CONSOLE-INPUT GUARD); .tap, .host, .console,
                        .console_in, .guard (the guard counter's name), .link
                        (one rawtcp.Link to it, made on first use)
  .console_lines()      the guest's console, one string a line
  .panicked()           the console holds a panic line
  .served(when)         an ordinary client (curl) gets httpd's GET / answer,
                        else the attack fails, saying WHEN
  .stalled_request(sport=None)
                        a hand-made connection (window scaling offered) that
                        asks for /bytes/1073741824 under a zero window, so
                        httpd can send nothing and reads nothing more; the
                        Connection once the guest acknowledged the request
  .served_around_reset(c, holding)
                        three ordinary clients served while c is open (the
                        attacker's connection HOLDING, e.g. "is open"), then
                        c reset, then one more served
"""
import subprocess
import sys

from client import HELLO
from rawtcp import Connection, Link, neighbour_address

REQUEST_HUGE = b"GET /bytes/1073741824 HTTP/1.1\r\nHost: x\r\n\r\n"


class Guest:
    def __init__(self, argv=None):
        argv = sys.argv if argv is None else argv
        self.tap, self.host, self.console, self.console_in, self.guard = argv[1:6]
        self._link = None

    @property
    def link(self):
        if self._link is None:
            self._link = Link(self.tap, neighbour_address(self.host), self.host)
        return self._link

    def console_lines(self):
        with open(self.console, errors="replace") as f:
            return [line.rstrip("\r\n") for line in f]

    def panicked(self):
        return any(line.startswith("panic:") for line in self.console_lines())

    def served(self, when):
        out = subprocess.run(["curl", "-s", "-m", "10", f"http://{self.host}/"], capture_output=True).stdout
        if not out.endswith(HELLO):
            sys.exit(f"{when}: another client got no answer ({out[:60]!r})")

    def stalled_request(self, sport=None):
        c = Connection(self.link, 80, sport=sport, wscale=7)
        c.connect(window=0)
        c.send(REQUEST_HUGE, window=0)
        if not c.wait_acked(c.snd_nxt, 10):
            sys.exit(("" if sport is None else f"port {sport}: ") + "the request was never acknowledged")
        return c

    def served_around_reset(self, c, holding):
        for _ in range(3):
            self.served(f"the attacker's connection {holding}")
        print(f"3 other clients served while the attacker's connection {holding}")
        c.reset()
        self.served("after the attacker's reset")
        print("served after the attacker's reset")
