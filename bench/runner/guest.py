"""guest.py: a guest started under tools/qemu-run (or a native server) in the
background, seen to come up and stopped, for the runner and the experiments.
tools/lib/guest.sh's functions do each step, through tools/lib/guest-run
(the shell that holds the guest: a shell's background job and file
descriptors stay that shell's), so tests and benchmark start guests the one
way.

Offers Guest(cmd, console, pidfile=None, console_in=None):
    cmd          tools/qemu-run and its arguments, behind any prefix (ip netns
                 exec, env, taskset); with a pidfile, QEMU writes its pid there
                 (-pidfile, after qemu-run's own `--` when cmd has one); or a
                 native server's command line, without a pidfile
    console      the file the guest's console (and qemu-run's errors) go to
    console_in   a fifo made for the guest's console input and held open
                 while it runs (guest_console_in); .fd writes to it (Ctrl-T,
                 0x14, makes the unikernel print its counters)
  .pid           QEMU's pid (None without a pidfile, or when QEMU wrote none
                 within 5 s)
  .server_pid(names)
                 a native guest's server: the process at the end of a chain
                 of names, each a child of the one before, from the command
                 down (2 s at most; None if not there)
  .wait_http(url, secs, net_exec=())
                 guest_wait_http: until url answers 200 (curl behind
                 net_exec); False after secs or once the guest has ended
  .wait_console(regex, secs)
                 guest_wait_console: until a console line matches
  .wait_exit(secs)
                 the command's status (qemu-run's: the app's) once it ends;
                 None while it still runs after secs
  .kill()        kills what is left of it (guest_kill)
Standard library only.
"""
import os
import subprocess
import time

from .procfs import children

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools", "lib")


class Guest:
    def __init__(self, cmd, console, pidfile=None, console_in=None):
        self.proc = subprocess.Popen([os.path.join(LIB, "guest-run"), console, pidfile or "", console_in or ""]
                                     + list(cmd), stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        self.pid = int(line) if line else None
        self.console = console
        self.rc = None
        self.fd = None
        if console_in:
            try:  # guest-run holds it open for reading: no wait here
                self.fd = os.open(console_in, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                pass

    def alive(self):
        return self.proc.poll() is None

    def server_pid(self, names, secs=2.0):
        end = time.monotonic() + secs
        while time.monotonic() < end and self.alive():
            pids = children(self.proc.pid)
            for name in names:
                pids = [c for p in pids for c in children(p, name)] if pids else []
            if pids:
                return pids[0]
            time.sleep(0.02)
        return None

    def _shell(self, script, *args):
        shell = subprocess.Popen(["bash", "-c", '. "$0"; ' + script, os.path.join(LIB, "guest.sh")] + list(args))
        # The shell's waits end early when the guest has ended, which it sees
        # by kill -0 on guest-run; an ended guest-run stays a zombie (alive to
        # kill -0) until this process reaps it, which poll() does.
        try:
            while shell.poll() is None:
                self.alive()
                time.sleep(0.05)
        finally:
            if shell.poll() is None:  # interrupted
                shell.kill()
                shell.wait()
        return shell.returncode == 0

    def wait_http(self, url, secs, net_exec=()):
        return self._shell('NET_EXEC=("${@:4}"); guest_wait_http "$1" "$2" "$3"', url, str(int(secs)),
                           str(self.pid or self.proc.pid), *net_exec)

    def wait_console(self, regex, secs):
        return self._shell('guest_wait_console "$1" "$2" "$3" "$4"', self.console, regex, str(int(secs)),
                           str(self.proc.pid))

    def wait_exit(self, secs):
        try:
            rc = self.proc.wait(timeout=secs)
        except subprocess.TimeoutExpired:
            return None
        self._close()
        self.rc = rc
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait()
        self._close()

    def _close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if not self.proc.stdout.closed:
            self.proc.stdout.close()
