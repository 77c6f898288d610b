"""qemuguest.py: start a guest under tools/qemu-run in the background, see it
come up, stop it: tools/lib/guest.sh's pieces for the Python scripts.

Offers Guest(cmd, console, pidfile=None, console_in=None):
    cmd          tools/qemu-run and its arguments, behind any prefix (ip netns
                 exec, taskset); with a pidfile, QEMU writes its pid there
                 (-pidfile, after qemu-run's own `--` when cmd has one)
    console      the file the guest's console (and qemu-run's errors) go to
    console_in   a fifo made here, the guest's console input, held open
                 read-write on .fd: neither side blocks on the other's open
                 and QEMU reads no end-of-file while we hold it (Ctrl-T, 0x14,
                 makes the unikernel print its counters)
  .pid           QEMU's pid (None without a pidfile, or when it did not come
                 within 10 s)
  .wait_http(url, secs, net_exec=())
                 until url answers 200 (curl behind net_exec); False after
                 secs or once the guest has ended
  .wait_exit(secs)
                 qemu-run's status (the app's) once it ends; None while it
                 still runs after secs
  .kill()        kills what is left of it and releases the console input
Two languages, two copies of these few steps: a bash function's background
job and file descriptors belong to the shell that ran it, so a Python script
cannot use the shell's (it needs the process and the fifo in its own hands).
Standard library only.
"""
import os
import signal
import subprocess
import time


class Guest:
    def __init__(self, cmd, console, pidfile=None, console_in=None):
        self.fd = None
        self.console_in = console_in
        if console_in:
            if os.path.exists(console_in):
                os.unlink(console_in)
            os.mkfifo(console_in)
            self.fd = os.open(console_in, os.O_RDWR)
        cmd = list(cmd)
        if pidfile:
            if os.path.exists(pidfile):
                os.unlink(pidfile)
            cmd += (["-pidfile", pidfile] if "--" in cmd else ["--", "-pidfile", pidfile])
        stdin = open(console_in, "rb") if console_in else subprocess.DEVNULL
        with open(console, "w") as out:
            self.proc = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=subprocess.STDOUT)
        if console_in:
            stdin.close()
        self.pid = None
        for _ in range(200 if pidfile else 0):
            try:
                self.pid = int(open(pidfile).read().strip())
                break
            except (OSError, ValueError):
                if not self.alive():
                    break
                time.sleep(0.05)

    def alive(self):
        return self.proc.poll() is None

    def wait_http(self, url, secs, net_exec=()):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            code = subprocess.run(list(net_exec) + ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                                    "--connect-timeout", "0.5", "-m", "1", url],
                                  capture_output=True, text=True).stdout
            if code == "200":
                return True
            if not self.alive():
                return False
            time.sleep(0.05)
        return False

    def wait_exit(self, secs):
        try:
            rc = self.proc.wait(timeout=secs)
        except subprocess.TimeoutExpired:
            return None
        self._close()
        return rc

    def kill(self):
        if self.alive():
            if self.pid:
                try:
                    os.kill(self.pid, signal.SIGTERM)

                except OSError:
                    pass
            self.proc.kill()
            self.proc.wait()
        self._close()

    def _close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.console_in and os.path.exists(self.console_in):
            os.unlink(self.console_in)
