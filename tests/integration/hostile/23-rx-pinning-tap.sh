#!/usr/bin/env bash
# Receive memory pinned by one connection (tap back-end; issue 36, item 3): a
# hostile client, made by hand (lib/rawtcp.py), asks httpd for
# /bytes/1073741824 while advertising a zero window (the answer cannot go out,
# so httpd reads nothing more), then sends 3,000 one-byte segments in order,
# in bursts well inside the guest's window. Each held a whole receive buffer
# in the socket's queue: the guest acknowledged as many as its reserve of
# lent buffers and its pbuf pool hold (768 + 1,024), then had no buffer for
# any frame and answered nobody, other clients included, until httpd's
# deadline dropped that connection. A guest that copies small pieces together holds
# those 3,000 bytes in a few buffers, so the attacker goes on with pieces
# such copying cannot merge: 1- and 1,400-byte segments by turns, up to the
# window's right edge. Now the guest stops taking the attacker's bytes at a
# bound of buffers and counts what it refused; while the attacker's
# connection is still open and holding what it got in, other clients are
# answered; after the attacker's reset it serves on; at exit every socket is
# freed and every pool is back. Runs against httpd.elf, and against the
# release build httpd-all.elf when it has been built.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/hostile.sh"

# At exit the guard's counter (net/stats.c, "net: guards:" on the console),
# "rx cap refused" (segments refused because one socket held its most
# receive buffers), must show the attack refused.
hostile_attack "receive-pinning attack" "rx cap refused" "no attacker's segment counted as refused" pools <<'PY'
import sys
from attack import Guest
from rawtcp import seq_add, seq_diff

TOTAL = 3000  # one-byte segments first
guest = Guest()
c = guest.stalled_request()
base, right = c.snd_nxt, c.right_edge()
print(f"request acknowledged under a zero window; the guest's window {seq_diff(right, base)} bytes")

# One byte a segment, 32 at a time (lib/rawtcp.py's push: each burst from
# where the guest's ack stands; three bursts in a row that move it no
# further mean the guest stopped taking them).
acked = c.push(base, [1] * TOTAL, fill=b"b", burst=32, stop=guest.panicked)
print(f"the guest acknowledged {acked} of {TOTAL} one-byte segments")
if guest.panicked():
    sys.exit("the guest panicked under the attack")

# A guest that copies small pieces together holds those 3,000 bytes in a
# few buffers. Then pieces it cannot merge so: 1 byte and 1,400 bytes by
# turns, up to the right edge of the window it advertised. Each takes a
# buffer of its own (a small piece behind a large one starts a new copy), so
# the socket reaches its bound of buffers well inside the window: from there
# the guest refuses (does not acknowledge) them, and counts it.
if acked == TOTAL:
    start = seq_add(base, TOTAL)
    room = seq_diff(right, start)
    sizes, used = [], 0
    while used + (1 if len(sizes) % 2 == 0 else 1400) <= room:
        sizes.append(1 if len(sizes) % 2 == 0 else 1400)
        used += sizes[-1]
    more = c.push(start, sizes, fill=b"m", burst=32, stop=guest.panicked)
    print(f"then 1- and 1,400-byte segments by turns: the guest acknowledged {more} of {used} bytes "
          f"({len(sizes)} segments)")
    if guest.panicked():
        sys.exit("the guest panicked under the attack")

guest.served_around_reset(c, "holds its data")
PY
echo "all good"
