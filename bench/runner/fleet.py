"""fleet.py: many guests at once, each behind its own forwarded port, for the
density workload (workloads/density.py): started, probed, measured, stopped.

Offers
    Instance(index, port, cmd, console, pidfile)
                    one guest: tools/qemu-run's command line (with -pidfile
                    after its `--`), started by launch() in a session of its
                    own (so a Ctrl-C at the terminal reaches the batch, which
                    stops every guest, and not each qemu-run on its own)
      .launch()     starts it: qemu-run with its console in a file, stdin
                    /dev/null
      .qemu_pid()   QEMU's pid from its pidfile (None until QEMU wrote it, or
                    when what it holds is not a number)
      .alive()      whether qemu-run still runs (it lives as long as QEMU)
      .stop() / .reap(secs) / .kill()
                    TERM to qemu-run (which stops QEMU and removes its
                    temporary files), wait for it, KILL what is left
    bring_up(instances, env, booting, timeout, conc, boot_timeout)
                    launches each instance (at most booting at once; 0: no
                    limit) and probes it until it answers (its up_s, status
                    "up") or fails (qemu-run ended, or boot_timeout passed:
                    status "failed: ..."); the seconds from the first launch
                    to the last answer (0 without one)
    probe_all(ports, timeout, conc)
                    GET / on 127.0.0.1:PORT of each port, at most conc at once:
                    {port: seconds to a whole 200 answer, or None}
    smaps_rollup(pid)
                    Rss and Pss (KiB) of a process, None once it is gone
    mem_available_kib(), task_count()
                    /proc/meminfo's MemAvailable; the host's tasks (threads)
                    now, from /proc/loadavg
A probe counts only a whole answer: a status line of 200 and the body to
the length the head announces (or to the server's close), all within
timeout of the connect's start. Standard library only.
"""
import asyncio
import os
import signal
import subprocess
import time

from .spec import ROOT


class Instance:
    def __init__(self, index, port, cmd, console, pidfile):
        self.index, self.port, self.cmd = index, port, list(cmd)
        self.console, self.pidfile = console, pidfile
        self.proc = None      # qemu-run's Popen
        self.t_launch = None  # time.monotonic() at launch
        self.up_s = None      # launch to the first whole answer
        self.status = "new"   # new, booting, up, failed: REASON
        self.rss_kib = ""     # QEMU's Rss and Pss at the last measure (KiB)
        self.pss_kib = ""
        self.probe_ms = ""    # the last probe's answer time, "" without one
        self._qemu_pid = None  # read once from the pidfile

    def launch(self, env):
        with open(self.console, "wb") as out:
            self.proc = subprocess.Popen(self.cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        self.t_launch = time.monotonic()
        self.status = "booting"

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def qemu_pid(self):
        if self._qemu_pid is None:
            try:
                with open(self.pidfile) as f:
                    text = f.read().strip()
            except OSError:
                return None
            # QEMU writes its pid and a newline; anything else is not ours.
            if text.isdigit() and 0 < int(text) < 1 << 22:
                self._qemu_pid = int(text)
        return self._qemu_pid

    def stop(self):
        """Asks qemu-run to end (it TERMs QEMU, and KILLs it 10 s later)."""
        if self.alive():
            try:
                self.proc.send_signal(signal.SIGTERM)
            except OSError:
                pass

    def reap(self, secs):
        """qemu-run's status once it has ended within secs, else None."""
        if self.proc is None:
            return 0
        try:
            return self.proc.wait(timeout=max(secs, 0))
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        """KILLs QEMU and qemu-run's session (qemu-run, timeout(1), QEMU),
        and removes the temporary files qemu-run would have removed."""
        if self.proc is None:
            return
        pid = self.qemu_pid()
        leftovers = []
        if pid is not None and _is_child_of_session(pid, self.proc.pid):
            leftovers = _qemu_run_files(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        self.proc.wait()
        for path in leftovers:
            try:
                os.unlink(path)
            except OSError:
                pass


def _qemu_run_files(pid):
    """qemu-run's two temporary files, named by its QEMU: the file its
    stderr goes to and the console's logfile=. Only mktemp's names in the
    temporary folder are taken, whatever the command line says."""
    tmpdir = os.path.realpath(os.environ.get("TMPDIR") or "/tmp")
    found = []
    try:
        found.append(os.readlink(f"/proc/{pid}/fd/2"))
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().decode(errors="replace").split("\0")
    except OSError:
        args = []
    for a in args:
        for part in a.split(","):
            if part.startswith("logfile="):
                found.append(part[len("logfile="):])
    return [p for p in found if os.path.dirname(os.path.realpath(p)) == tmpdir
            and os.path.basename(p).startswith("tmp.")]


def _is_child_of_session(pid, sid):
    """Whether pid still runs in session sid: a pid from a pidfile may have
    been reused by another process once QEMU ended."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return len(fields) > 3 and fields[3] == str(sid)


async def _probe(port, timeout):
    """Seconds to a whole 200 answer from 127.0.0.1:port, None without one."""
    t0 = time.monotonic()
    writer = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.0\r\nHost: density\r\n\r\n")
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            if len(lines[0].split()) < 2 or lines[0].split()[1] != "200":
                return None
            length = None
            for line in lines[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    v = v.strip()
                    # A length the probe would wait for is checked first:
                    # a hostile or broken head must not make it read for ever.
                    if not v.isdigit() or len(v) > 9:
                        return None
                    length = int(v)
            if length is None:
                await reader.read()  # HTTP/1.0 without a length: to the close
            else:
                await reader.readexactly(length)
            return time.monotonic() - t0
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
        return None
    finally:
        if writer is not None:
            writer.close()


async def _probe_many(ports, timeout, conc):
    gate = asyncio.Semaphore(conc)

    async def one(port):
        async with gate:
            return port, await _probe(port, timeout)
    return dict(await asyncio.gather(*(one(p) for p in ports)))


def probe_all(ports, timeout, conc):
    """{port: seconds or None} for a GET / on each port, conc at once."""
    if not ports:
        return {}
    return asyncio.run(_probe_many(list(ports), timeout, conc))


async def _bring_up(instances, env, booting, timeout, conc, boot_timeout):
    gate = asyncio.Semaphore(conc)
    slots = asyncio.Semaphore(booting) if booting else None
    t0 = time.monotonic()
    last = [t0]

    async def one(inst):
        if slots:
            await slots.acquire()
        try:
            inst.launch(env)
            while True:
                await asyncio.sleep(0.05)
                if not inst.alive():
                    inst.status = f"failed: qemu-run ended with status {inst.proc.returncode} ({inst.console})"
                    return
                if time.monotonic() - inst.t_launch > boot_timeout:
                    inst.status = f"failed: no answer within {boot_timeout}s"
                    return
                async with gate:
                    t = await _probe(inst.port, timeout)
                if t is not None:
                    now = time.monotonic()
                    inst.up_s, inst.status = now - inst.t_launch, "up"
                    last[0] = max(last[0], now)
                    return
                await asyncio.sleep(0.1)
        finally:
            if slots:
                slots.release()
    await asyncio.gather(*(one(i) for i in instances))
    return last[0] - t0


def bring_up(instances, env, booting, timeout, conc, boot_timeout):
    """Seconds from the first launch to the last first answer (see above)."""
    if not instances:
        return 0.0
    return asyncio.run(_bring_up(list(instances), env, booting, timeout, conc, boot_timeout))


def smaps_rollup(pid):
    """{'Rss': KiB, 'Pss': KiB} of pid, None once it is gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("Rss", "Pss") and v.split() and v.split()[0].isdigit():
                    out[k] = int(v.split()[0])
    except OSError:
        return None
    return out if len(out) == 2 else None


def mem_available_kib(path="/proc/meminfo"):
    with open(path) as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    raise OSError(f"{path}: no MemAvailable")


def task_count(path="/proc/loadavg"):
    """Tasks (threads) on the host now: loadavg's running/total field."""
    with open(path) as f:
        fields = f.read().split()
    return int(fields[3].split("/")[1])
