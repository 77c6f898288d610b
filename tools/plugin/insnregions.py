#!/usr/bin/env python3
"""insnregions.py: where a guest's wait loop lies, for the instruction counter.

    tools/plugin/insnregions.py IMAGE...            the plugin's arguments, one a line
    tools/plugin/insnregions.py --list IMAGE...     each range: CLASS START END SYMBOL
    tools/plugin/insnregions.py --check-ksymtab VMLINUX
                                             the kallsyms reading against the
                                             kernel's exported symbols

tools/plugin/insncount.c counts a guest's instructions by address; this
names the addresses. Of the images a guest boots (tools/qemu-run's KERNEL
and INITRD), the first that is one of these gives the ranges:

  - a unikernel image (an ELF with a symbol table that has cpu_park): the
    wait loop by its functions' symbols and sizes: `spin` is the spin
    (wait_spin, kernel/executor.c), the naive build's backoff PAUSEs
    (wait_backoff_pauses) and the ring probe they call (source_device_ready,
    vnet_rx_pending; the SMP designs' probes: the global lock's
    locked_device_ready and notice_waiting, the network core's
    server_device_ready, answer_waiting and app_quiet; the poll-when-due
    test calls the probe too, a few instructions a loop turn); `park` is cpu_park (the halt and the timer it
    programs). The rest counts as `other`.
  - the Linux guest's kernel (Debian's vmlinux, stripped: its System.map is a
    stub that points at the -dbg package), read from the kernel's own symbol
    table, kallsyms, in .rodata: `idle` is the idle task's loop and the
    socket busy-poll loop (BUSY_POLL_SYMBOLS; IDLE_SYMBOLS:
    do_idle, the halt, and the tick's stop and restart around it; not the
    interrupts taken while idle, which are the work, nor schedule_idle, the
    switch every wakeup pays), and split=half counts the rest as `kernel`
    (upper-half addresses) or `user`.
Anything else gives no region (every instruction counts as `other`).
A symbol missing from an image is left out (a variant compiles some of them
away); an image of the right kind with none of them is an error. Standard
library only.
"""
import re
import struct
import sys

UK_SYMBOLS = {
    "spin": ["wait_spin", "wait_backoff_pauses", "source_device_ready", "vnet_rx_pending",
             # the SMP designs' probes, which their spins call instead
             # (net/net_lock.c, kernel/handoff.c)
             "locked_device_ready", "notice_waiting", "server_device_ready", "answer_waiting",
             "app_quiet"],
    "park": ["cpu_park"],
}
UK_MARK = "cpu_park"  # a unikernel image has it

# The idle task's own loop in Linux 6.1 (kernel/sched/idle.c and what it
# calls only to idle): the loop, the cpuidle path without a driver, the halt
# (.cpuidle.text holds default_idle, default_idle_call and the other idle
# routines), the tick's stop and restart around the halt and the next-event
# search behind them, and RCU's and context tracking's idle entry and exit.
IDLE_SYMBOLS = [
    "do_idle", "arch_cpu_idle_enter", "arch_cpu_idle", "cpuidle_not_available",
    "nohz_run_idle_balance", "rcu_nocb_flush_deferred_wakeup", "tick_check_broadcast_expired",
    "tick_nohz_idle_enter", "tick_nohz_idle_stop_tick", "tick_nohz_idle_retain_tick",
    "tick_nohz_idle_restart_tick", "tick_nohz_idle_exit", "tick_nohz_idle_got_tick",
    "tick_nohz_get_sleep_length", "tick_nohz_next_event", "tick_nohz_stop_tick",
    "tick_nohz_restart_sched_tick", "tick_nohz_account_idle_time", "get_next_timer_interrupt",
    "rcu_needs_cpu", "irq_work_needs_cpu", "hrtimer_get_next_event", "hrtimer_next_event_without",
    "timekeeping_max_deferment", "ct_idle_enter", "ct_idle_exit", "ct_kernel_exit_state",
    "ct_kernel_enter_state",
]
IDLE_SECTION = ("__cpuidle_text_start", "__cpuidle_text_end")  # every __cpuidle function
# The socket busy-poll loop (net.core.busy_poll, which the linux-tuned guest
# sets): the Linux guest's spin, counted as waiting as the unikernel's spin
# is. The loop and its end test only; the driver's poll it calls (in the
# virtio_net module, outside the kernel's own symbols) still counts as work,
# as the unikernel's receive path does.
BUSY_POLL_SYMBOLS = ["napi_busy_loop", "busy_poll_stop", "sk_busy_loop_end"]


class ImageError(Exception):
    """An image of a known kind whose symbols cannot be read."""


# ---- ELF -------------------------------------------------------------------

class Elf:
    """An ELF64 little-endian file's sections (the rest is not needed)."""

    def __init__(self, data):
        self.data = data  # the whole file
        self.sections = {}  # name -> (type, address, file offset, size, linked section's index)
        self.offsets = []  # file offset of each section, by index (a link's target)
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            return
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        entsize, num, strndx = struct.unpack_from("<HHH", data, 0x3A)
        heads = [struct.unpack_from("<IIQQQQII", data, shoff + i * entsize) for i in range(num)]
        if not heads or strndx >= num:
            return
        names_at = heads[strndx][4]
        self.offsets = [h[4] for h in heads]
        for name, typ, _, addr, off, size, link, _ in heads:
            end = data.index(b"\0", names_at + name)
            self.sections[data[names_at + name:end].decode(errors="replace")] = (typ, addr, off, size, link)

    def section(self, name):
        """(address, bytes) of a section, None when absent."""
        s = self.sections.get(name)
        if not s or s[0] == 8:  # SHT_NOBITS has no bytes
            return None
        return s[1], self.data[s[2]:s[2] + s[3]]

    def symbols(self):
        """{name: (value, size)} of the symbol table's functions and labels."""
        s = self.sections.get(".symtab")
        if not s:
            return {}
        _, _, off, size, link = s
        strtab = self.offsets[link]
        out = {}
        for at in range(off, off + size, 24):
            name, info, _, shndx, value, sz = struct.unpack_from("<IBBHQQ", self.data, at)
            if name and shndx:
                end = self.data.index(b"\0", strtab + name)
                out[self.data[strtab + name:end].decode(errors="replace")] = (value, sz)
        return out

    def string_at(self, address):
        """The NUL-terminated string at a virtual address of a loaded section."""
        for typ, addr, off, size, _ in self.sections.values():
            if typ != 8 and addr and addr <= address < addr + size:
                at = off + address - addr
                return self.data[at:self.data.index(b"\0", at)].decode(errors="replace")
        return None


# ---- kallsyms: Linux's own symbol table in .rodata -------------------------
#
# scripts/kallsyms.c (6.1) writes, each table aligned to 8: kallsyms_offsets
# (int32 per symbol), kallsyms_relative_base (u64), kallsyms_num_syms (u32),
# kallsyms_names (per symbol a length, one byte, or two when the first has
# bit 7 set, then that many token numbers), kallsyms_markers (u32: where
# every 256th name starts), kallsyms_seqs_of_names (6.2, and Debian's 6.1:
# 3 bytes per symbol), kallsyms_token_table (256 NUL-terminated strings) and
# kallsyms_token_index (256 u16 offsets into it). A name expands to its
# tokens' strings; its first character is nm's type letter. The token table
# is found by the digits, which are tokens of their own in order ("0\0" ...
# "9\0"), and checked against the index after it; the base by the u64 of an
# upper-half address followed by a symbol count whose names end right where
# markers that agree with them begin.

DIGITS = b"".join(bytes([c]) + b"\0" for c in b"0123456789")


def _token_table(rod):
    """(offset of kallsyms_token_table in .rodata, its 256 tokens)."""
    for m in re.finditer(re.escape(DIGITS), rod):
        p = m.start()
        for _ in range(ord("0")):  # back over tokens 0x00-0x2f, none empty
            if p < 2 or rod[p - 1] != 0 or rod[p - 2] == 0:
                break
            p = rod.rfind(b"\0", 0, p - 1) + 1
        else:
            tokens, q = [], p
            for _ in range(256):
                e = rod.index(b"\0", q)
                tokens.append(rod[q:e])
                q = e + 1
            index_at = align8(q)
            offsets, o = [], 0
            for t in tokens:
                offsets.append(o)
                o += len(t) + 1
            if list(struct.unpack_from("<256H", rod, index_at)) == offsets:
                return p, tokens
    raise ImageError("no kallsyms token table in .rodata")


def align8(n):
    return (n + 7) & ~7


def _names(rod, at, count, limit):
    """Offsets of `count` names from `at` and where they end; None past limit."""
    offs, p = [], at
    for _ in range(count):
        if p >= limit:
            return None
        offs.append(p - at)
        n = rod[p]
        if n & 0x80:
            n = (n & 0x7F) | (rod[p + 1] << 7)
            p += 2
        else:
            p += 1
        p += n
    return offs, p


def kallsyms(elf):
    """[(address, type letter, name)] of a Linux kernel's kallsyms, sorted."""
    sec = elf.section(".rodata")
    if not sec:
        raise ImageError("no .rodata")
    rod = sec[1]
    table_at, tokens = _token_table(rod)
    for m in re.finditer(b"\xff\xff\xff\xff", rod[:table_at]):
        base_at = m.start() - 4
        if base_at % 8:
            continue
        count, pad = struct.unpack_from("<II", rod, base_at + 8)
        if pad or not 1000 < count < 10000000:
            continue
        # The markers end where the token table (or, before it, the 3-byte
        # sequence numbers) begins: check them before decoding any name.
        nmark = (count + 255) // 256
        for markers_at in (table_at - align8(4 * nmark), table_at - align8(3 * count) - align8(4 * nmark)):
            if markers_at <= base_at + 16 or struct.unpack_from("<I", rod, markers_at)[0] != 0:
                continue
            got = _names(rod, base_at + 16, count, markers_at)
            if got and align8(got[1]) == markers_at and \
                    list(struct.unpack_from(f"<{nmark}I", rod, markers_at)) == got[0][::256]:
                break
        else:
            continue
        offs = got[0]
        base = struct.unpack_from("<Q", rod, base_at)[0]
        rel = struct.unpack_from(f"<{count}i", rod, base_at - align8(4 * count))
        out = []
        for i in range(count):
            p = base_at + 16 + offs[i]
            n = rod[p]
            p += 1
            if n & 0x80:
                n = (n & 0x7F) | (rod[p] << 7)
                p += 1
            text = b"".join(tokens[b] for b in rod[p:p + n]).decode(errors="replace")
            # CONFIG_KALLSYMS_ABSOLUTE_PERCPU: a non-negative offset is the
            # address itself (per-CPU symbols), a negative one counts down
            # from the base.
            addr = rel[i] if rel[i] >= 0 else base - 1 - rel[i]
            out.append((addr, text[:1], text[1:]))
        return sorted(out)
    raise ImageError("no kallsyms tables before the token table")


def check_ksymtab(elf, syms):
    """(agreeing, disagreeing) of the exported symbols (__ksymtab: 12-byte
    entries of offsets relative to each field) against kallsyms."""
    sec = elf.section("__ksymtab")
    if not sec:
        raise ImageError("no __ksymtab")
    addr, data = sec
    by_name = {}
    for a, _, n in syms:
        by_name.setdefault(n, set()).add(a)
    good = bad = 0
    for i in range(len(data) // 12):
        value, name, _ = struct.unpack_from("<iii", data, 12 * i)
        at = addr + 12 * i
        v = (at + value) & (2**64 - 1)
        n = elf.string_at((at + 4 + name) & (2**64 - 1))
        if v in by_name.get(n, ()):
            good += 1
        else:
            bad += 1
    return good, bad


# ---- the ranges ---------------------------------------------------------------

def uk_ranges(symbols):
    out = []
    for cls, names in UK_SYMBOLS.items():
        for n in names:
            if n in symbols and symbols[n][1]:
                value, size = symbols[n]
                out.append((cls, value, value + size, n))
    return out


def linux_ranges(syms):
    """Ranges of IDLE_SYMBOLS and BUSY_POLL_SYMBOLS (each up to the next
    higher symbol) and of the whole .cpuidle.text."""
    addrs = sorted({a for a, t, _ in syms if t in "tTwW"})
    nxt = {}
    for a, b in zip(addrs, addrs[1:]):
        nxt[a] = b
    by_name = {}
    for a, t, n in syms:
        if t in "tTwW":
            by_name.setdefault(n, a)
    out = []
    start, end = (by_name.get(n) for n in IDLE_SECTION)
    if start and end and end > start:
        out.append(("idle", start, end, ".cpuidle.text"))
    for n in IDLE_SYMBOLS + BUSY_POLL_SYMBOLS:
        a = by_name.get(n)
        if a is not None and a in nxt and not (start and end and start <= a < end) \
                and all(r[1] != a for r in out):  # two names of one address
            out.append(("idle", a, nxt[a], n))
    return out


def regions(paths):
    """(ranges, split) for the first image that has them: ranges are
    (class, start, end, symbol); split is True for a kernel with a user half."""
    for path in paths:
        try:
            with open(path, "rb") as f:
                elf = Elf(f.read())
        except OSError as e:
            raise ImageError(f"{path}: {e.strerror}") from e
        if not elf.sections:
            continue
        symbols = elf.symbols()
        if UK_MARK in symbols:
            return uk_ranges(symbols), False
        if not symbols and ".rodata" in elf.sections and "__ksymtab" in elf.sections:
            try:
                ranges = linux_ranges(kallsyms(elf))
            except ImageError as e:
                raise ImageError(f"{path}: {e}") from e
            if not ranges:
                raise ImageError(f"{path}: none of the idle loop's symbols in its kallsyms")
            return ranges, True
    return [], False


def main(argv):
    mode = argv[0] if argv and argv[0].startswith("--") else ""
    paths = argv[1:] if mode else argv
    if mode not in ("", "--list", "--check-ksymtab") or not paths:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        if mode == "--check-ksymtab":
            with open(paths[0], "rb") as f:
                elf = Elf(f.read())
            syms = kallsyms(elf)
            good, bad = check_ksymtab(elf, syms)
            print(f"kallsyms: {len(syms)} symbols; exported symbols at the same address: {good}, elsewhere: {bad}")
            return 0 if good and not bad else 1
        ranges, split = regions(paths)
    except ImageError as e:
        print(f"insnregions: {e}", file=sys.stderr)
        return 1
    for cls, start, end, name in ranges:
        print(f"{cls} {start:#x} {end:#x} {name}" if mode else f"region={cls}:{start:x}-{end:x}")
    if split and not mode:
        print("split=half")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
