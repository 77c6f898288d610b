"""guest.py: a guest started under tools/qemu-run in the background, seen to
come up and stopped, for the Python scripts: tools/lib/guest.sh's functions
do each step, through tools/lib/guest-run (the shell that holds the guest:
a shell's background job and file descriptors stay that shell's).

Offers Guest(cmd, console, pidfile=None, console_in=None):
    cmd          tools/qemu-run and its arguments, behind any prefix (ip netns
                 exec, taskset); with a pidfile, QEMU writes its pid there
                 (-pidfile, after qemu-run's own `--` when cmd has one)
    console      the file the guest's console (and qemu-run's errors) go to
    console_in   a fifo made for the guest's console input and held open
                 while it runs (guest_console_in); .fd writes to it (Ctrl-T,
                 0x14, makes the unikernel print its counters)
  .pid           QEMU's pid (None without a pidfile, or when QEMU wrote none
                 within 5 s)
  .wait_http(url, secs, net_exec=())
                 guest_wait_http: until url answers 200 (curl behind
                 net_exec); False after secs or once QEMU has ended
  .wait_exit(secs)
                 qemu-run's status (the app's) once it ends; None while it
                 still runs after secs
  .kill()        kills what is left of it (guest_kill)
Standard library only.
"""
import os
import subprocess

LIB = os.path.dirname(os.path.abspath(__file__))


class Guest:
    def __init__(self, cmd, console, pidfile=None, console_in=None):
        self.proc = subprocess.Popen([os.path.join(LIB, "guest-run"), console, pidfile or "", console_in or ""]
                                     + list(cmd), stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        self.pid = int(line) if line else None
        self.fd = None
        if console_in:
            try:  # guest-run holds it open for reading: no wait here
                self.fd = os.open(console_in, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                pass

    def wait_http(self, url, secs, net_exec=()):
        script = '. "$0"; NET_EXEC=("${@:4}"); guest_wait_http "$1" "$2" "$3"'
        return subprocess.run(["bash", "-c", script, os.path.join(LIB, "guest.sh"), url, str(int(secs)),
                               str(self.pid or "")] + list(net_exec)).returncode == 0

    def wait_exit(self, secs):
        try:
            rc = self.proc.wait(timeout=secs)
        except subprocess.TimeoutExpired:
            return None
        self._close()
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
        self.proc.stdout.close()
