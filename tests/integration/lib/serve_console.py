#!/usr/bin/env python3
"""serve_console.py: drive tools/serve from a pseudo-terminal, as a user at a
terminal does (test 44).

    serve_console.py --serve tools/serve --image build/apps/httpd.elf
                     [--net passt|user] [--stop key|sigterm]

The pty is serve's controlling terminal, so a Ctrl-C typed there would be a
SIGINT to serve's process group if serve left the terminal's signal keys on.
Checks, each bounded in time: serve says the server is up; while it runs,
the terminal has no line editing, echo or signal keys; GET / answers 200 and
GET /__shutdown stops nothing; Ctrl-T prints the kernel's counters; the stop
(a typed Ctrl-C, or SIGTERM sent to serve) ends the server with "httpd:
stopped (signal)", the counters, "kernel: exit status 0" and serve's own
status 0; the terminal's settings are back as they were. Prints what the
terminal showed; exit 0 when every check held, 1 otherwise.
"""
import argparse
import fcntl
import os
import re
import select
import signal
import socket
import subprocess
import sys
import termios
import time
import urllib.error
import urllib.request


class Terminal:
    """The master side of a pty, with what it has shown so far."""

    def __init__(self, master):
        self.master = master
        self.text = ""

    def read_some(self, secs):
        ready, _, _ = select.select([self.master], [], [], secs)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the other side is gone
            return False
        self.text += data.decode("utf-8", "replace").replace("\r", "")
        return bool(data)

    def wait_for(self, pattern, start, secs, proc):
        """Until a line after offset start matches pattern; False on timeout,
        or when proc has exited and nothing more is there to read."""
        deadline = time.monotonic() + secs
        rx = re.compile(pattern, re.M)
        while not rx.search(self.text, start):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not self.read_some(min(left, 0.5)) and proc.poll() is not None:
                return bool(rx.search(self.text, start))
        return True

    def drain(self):
        while self.read_some(0.2):
            pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    """HTTP status of a GET, or 0 when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", required=True)
    ap.add_argument("--image", required=True)
    ap.add_argument("--net", default="")
    ap.add_argument("--stop", choices=["key", "sigterm"], default="key")
    a = ap.parse_args()

    failures = []

    def check(ok, what):
        print(("ok:   " if ok else "FAIL: ") + what)
        if not ok:
            failures.append(what)
        return ok

    master, slave = os.openpty()
    before = termios.tcgetattr(slave)
    port = free_port()
    env = dict(os.environ, PORT=str(port))
    if a.net:
        env["NET"] = a.net
    proc = subprocess.Popen(
        [a.serve, a.image], stdin=slave, stdout=slave, stderr=slave, env=env,
        start_new_session=True, preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    term = Terminal(master)
    try:
        if check(term.wait_for(r"^serve: httpd is up at http://127\.0\.0\.1:%d/" % port, 0, 120, proc),
                 "serve says httpd is up"):
            lflag = termios.tcgetattr(slave)[3]
            check(not lflag & (termios.ISIG | termios.ICANON | termios.ECHO),
                  "while serve runs, the terminal has no signal keys, line editing or echo")
            url = "http://127.0.0.1:%d/" % port
            check(get(url) == 200, "GET / answers 200")
            code = get(url + "__shutdown")
            check(code not in (0, 200) and get(url) == 200,
                  "GET /__shutdown stops nothing (answered %d, GET / still 200)" % code)

            at = len(term.text)
            os.write(master, b"\x14")
            check(term.wait_for(r"^kernel: uptime .*\n(.*\n)*kernel: time us:", at, 20, proc),
                  "Ctrl-T prints the kernel's counters")
            check(proc.poll() is None and "kernel: exit status" not in term.text[at:],
                  "the server still runs after Ctrl-T")

            at = len(term.text)
            if a.stop == "key":
                os.write(master, b"\x03")
                said = r"^serve: Ctrl-C: asking the server to shut down"
            else:
                proc.send_signal(signal.SIGTERM)
                said = r"^serve: signal: asking the server to shut down"
            try:
                rc = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                rc = None
            term.drain()
            after = term.text[at:]
            check(rc == 0, "serve exits 0 (got %s)" % rc)
            check(re.search(said, after, re.M) is not None, "serve says why it stops")
            check(re.search(r"^httpd: stopped \(signal\)$", after, re.M) is not None,
                  "httpd stops on SIGINT")
            check(re.search(r"^kernel: uptime .*\n(.*\n)*kernel: time us:", after, re.M) is not None,
                  "the counters are printed on the way out")
            check(re.search(r"^kernel: exit status 0$", after, re.M) is not None, "kernel: exit status 0")
            check("serve: signal:" not in after or a.stop == "sigterm",
                  "no SIGINT reached serve from the terminal")
            check(termios.tcgetattr(slave) == before, "the terminal's settings are restored")
    finally:
        if proc.poll() is None:  # a check failed early: serve stops the guest on SIGTERM
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        term.drain()
        print("---- the terminal ----")
        print(term.text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
