#!/usr/bin/env bash
# A segment reaching past the receive window (tap back-end; issue 36, item 2):
# a hostile client, made by hand (lib/rawtcp.py), once ended the unikernel
# with lwIP's assertion "tcp_receive: ooseq tcplen > rcv_wnd". It offers window
# scaling, asks httpd for /bytes/1073741824 while advertising a zero window
# (the answer cannot go out, so httpd reads nothing more), sends 1,000 bytes
# out of order starting 10 bytes before the right edge of the window the guest
# advertised (990 bytes past it), then fills the gap in order up to them.
# lwIP queued the out-of-order segment whole; once the gap closed it took all
# 1,000 bytes into a window of 10 and asserted: a remote panic. Now the guest
# takes the gap, stays up, answers other clients while the attacker's
# connection is still open and after its reset, exits 0 with every socket
# freed, and its counters show the segment refused for reaching beyond the
# window. Runs against httpd.elf, and against the release build httpd-all.elf
# when it has been built (-DNDEBUG is for our code: lwIP's assertions, built
# once for every image, stay in it).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/hostile.sh"

# At exit the guard's counter (net/stats.c, "net: guards:" on the console),
# "beyond window", must show the segment refused.
hostile_attack "window-edge attack" "beyond window" "the segment beyond the window was not counted" <<'PY'
import sys
from attack import Guest
from rawtcp import seq_add, seq_diff

guest = Guest()
c = guest.stalled_request()
if c.peer_wscale == 0:
    sys.exit("the guest's SYN-ACK does not scale its window")
fill_from, right = c.snd_nxt, c.right_edge()
print(f"request acknowledged under a zero window; the guest's window {seq_diff(right, fill_from)} bytes "
      f"(scale {c.peer_wscale})")

# 1,000 bytes from 10 before the right edge: out of order, 990 past the window.
ooseq_at = seq_add(right, -10)
c.send(b"o" * 1000, seq=ooseq_at, window=0)

# The gap, in order, in segments of 1,400 bytes (the last one shorter).
gap = seq_diff(ooseq_at, fill_from)
sizes = [1400] * (gap // 1400) + ([gap % 1400] if gap % 1400 else [])
filled = c.push(fill_from, sizes, fill=b"g", stop=guest.panicked)
print(f"{len(sizes)} in-order segments fill the gap of {gap} bytes; the guest acknowledges {filled}")
if guest.panicked():
    sys.exit("the guest panicked while the gap was filled")
if filled < gap:
    sys.exit("the guest stopped acknowledging the in-order data inside its window")

guest.served_around_reset(c, "is open")
PY
echo "all good"
