#!/usr/bin/env bash
# Receive memory pinned by many connections at once (tap back-end; issue 36,
# item 3, after test 23's one connection). The bound of buffers per socket
# (net/sock.h, SOCK_RX_BUFS_MAX) does not keep a few connections from taking
# every receive buffer together: the guest has its driver's reserve of lent
# buffers and its pbuf pool (768 + 1,024), and a connection whose
# application does not read may hold a window's worth of pieces, each on a
# buffer of its own. Pieces of 1,025 bytes (one over SOCK_RX_COPY_MAX, so not
# copied together) fill the 256 KiB window with 255 buffers, under that
# bound; eight such connections would hold 2,040. (Test 23's pieces, 1 and
# 1,400 bytes by turns, would not: every 1-byte piece is copied into a chunk
# of the heap and gives its buffer back, so eight hold about 8 x 136.)
#
# So a hand-made attacker (lib/rawtcp.py) opens eight connections from one
# address of the namespace, each from a port of its own, each asking httpd
# for /bytes/1073741824 under a zero window (httpd then reads nothing more
# from it), and sends 1,025-byte pieces on all eight by turns, in bursts, up
# to each window's right edge. Once most buffers are held, the guest refuses
# (does not acknowledge) more to a connection that holds more than
# SOCK_RX_BUFS_FAIR, and counts it. While the eight connections are open and
# hold what they got in, the guest's counters (asked for on its console)
# show such refusals, and ordinary clients are answered: GET / a few times,
# and a POST with a 20 KiB body (a legitimate upload gets in). After the
# attacker's resets it serves on; at exit every socket is freed and every
# pool is back. Runs against httpd.elf, and against the release build
# httpd-all.elf when it has been built. A test of its own, not a phase of
# test 23: one fresh guest per attack, so that each test's counters are its
# attack's alone and each fails on its own.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/hostile.sh"

# The guard's counter (net/stats.c, "net: guards:" on the console): segments
# refused because receive memory was short and their socket held more than
# its fair share.
hostile_attack "receive-pinning attack, 8 connections" "rx pressure refused" \
	"no attacker's segment counted as refused" pools <<'PY'
import re, subprocess, sys, time
from attack import Guest
from rawtcp import seq_add, seq_diff

guest = Guest()
host, guard_name, link = guest.host, guest.guard, guest.link
CONNS, PIECE = 8, 1025

def counters():
    """The guest's counters now (Ctrl-T on its console input): the guard's
    count, and the receive buffers held (pool pbufs and lent buffers)."""
    before = sum(line.startswith("pools:") for line in guest.console_lines())
    with open(guest.console_in, "wb", buffering=0) as f:
        f.write(b"\x14")
    end = time.monotonic() + 10
    while time.monotonic() < end:
        lines = guest.console_lines()
        if sum(line.startswith("pools:") for line in lines) > before:
            guards = [l for l in lines if l.startswith("net: guards:")][-1]
            pools = [l for l in lines if l.startswith("pools:")][-1]
            refused = int(re.search(guard_name + r" (\d+)", guards).group(1))
            pool = int(re.search(r" PBUF_POOL (\d+)", pools).group(1))
            lent = int(re.search(r" rx-lent (\d+)", pools).group(1))
            return refused, pool, lent
        time.sleep(0.2)
    sys.exit("the guest printed no counters on Ctrl-T")

def uploaded(when):
    body = bytes(i % 251 for i in range(20 * 1024))
    r = subprocess.run(["curl", "-s", "-m", "15", "-H", "Expect:", "-o", "/dev/null", "-w", "%{http_code}",
                        "--data-binary", "@-", f"http://{host}/"], input=body, capture_output=True)
    if r.stdout != b"200":
        sys.exit(f"{when}: a POST of 20 KiB got no answer (curl exit {r.returncode}, "
                 f"status {r.stdout.decode(errors='replace') or 'none'})")

conns, plans = [], {}
for k in range(CONNS):
    c = guest.stalled_request(sport=41000 + k)
    conns.append(c)
    base, right = c.snd_nxt, c.right_edge()
    plans[c] = (base, [PIECE] * (seq_diff(right, base) // PIECE))
print(f"{CONNS} requests acknowledged under a zero window; each window "
      f"{len(plans[conns[0]][1]) * PIECE} bytes or more: {len(plans[conns[0]][1])} pieces of {PIECE}")

# All eight by turns, as lib/rawtcp.py's push does for one: a burst on each
# connection from where the guest's ack for it stands (go-back-N), then the
# guest's answers read for all of them until each burst is acknowledged or
# `timeout` s pass. A connection stops when all its pieces are acknowledged,
# or when three bursts in a row moved its ack no further (the guest stopped
# taking its bytes).
def push_all(burst=32, timeout=2.0, stall_limit=3):
    st = {}
    for c, (start, sizes) in plans.items():
        pieces, at = [], start
        for n in sizes:
            pieces.append((at, n))
            at = seq_add(at, n)
        st[c] = {"pieces": pieces, "i": 0, "stalls": 0}
    def active(c):
        s = st[c]
        return s["i"] < len(s["pieces"]) and s["stalls"] < stall_limit and not c.reset_by_peer
    while any(active(c) for c in conns) and not guest.panicked():
        goal, before = {}, {}
        for c in filter(active, conns):
            s = st[c]
            group = s["pieces"][s["i"]:s["i"] + burst]
            before[c] = c.snd_una
            for seq, n in group:
                c.send(b"p" * n, seq=seq)
            goal[c] = seq_add(*group[-1])
        moving = dict(goal)
        end = time.monotonic() + timeout
        while moving and time.monotonic() < end:
            link.read(end - time.monotonic(), until=lambda: bool(link.pending))
            for c in conns:
                c.poll(0)
            link.pending.clear()  # none of these connections'
            moving = {c: g for c, g in moving.items() if seq_diff(c.snd_una, g) < 0}
        for c in goal:
            s = st[c]
            s["stalls"] = 0 if seq_diff(c.snd_una, before[c]) > 0 else s["stalls"] + 1
            while s["i"] < len(s["pieces"]) and seq_diff(c.snd_una, seq_add(*s["pieces"][s["i"]])) >= 0:
                s["i"] += 1
    return {c: st[c]["i"] for c in conns}

took = push_all()
if guest.panicked():
    sys.exit("the guest panicked under the attack")
print("pieces acknowledged per connection: " + ", ".join(
    f"{took[c]}/{len(plans[c][1])}" for c in conns) + f" ({sum(took.values())} in all)")
for c in conns:
    if c.reset_by_peer:
        sys.exit(f"port {c.sport}: the guest reset an attacker's connection")
    if took[c] == 0:
        sys.exit(f"port {c.sport}: the guest took none of the attacker's pieces")

refused, pool, lent = counters()
print(f"while the {CONNS} connections hold their data: {guard_name} {refused}; "
      f"receive buffers held: {pool} pool pbufs, {lent} lent")

# Other clients first (what the guard is for), then its count.
for _ in range(3):
    guest.served(f"the {CONNS} attackers' connections holding")
uploaded(f"the {CONNS} attackers' connections holding")
for c in conns:
    c.poll(0.1)
    if c.reset_by_peer:
        sys.exit(f"port {c.sport}: the guest reset an attacker's connection")
print(f"3 other clients and a POST of 20 KiB served while the {CONNS} connections hold their data")
if refused < 1:
    sys.exit(f"no attacker's piece refused for memory pressure ({guard_name} {refused})")
for c in conns:
    c.reset()
guest.served("after the attacker's resets")
uploaded("after the attacker's resets")
print("served after the attacker's resets")
PY
echo "all good"
