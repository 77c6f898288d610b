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
. "$ROOT/tests/integration/lib/net.sh"
command -v python3 >/dev/null && command -v curl >/dev/null || skip "python3 or curl missing"

# The guard's counter on the console at exit (net/stats.c): the line it is on
# and its name before the number.
GUARD_LINE='^net: guards:' GUARD_NAME='beyond window'

# On a failure: a guest still running is asked for its counters (Ctrl-T on
# its console input); the console's last lines, any panic, then FAIL.
guest_failed() {
	if guest_alive "$UK_PID"; then
		printf '\x14' >&"$GUEST_CONSOLE_FD"
		guest_wait_console "$UK_TMP/console" '^pools:' 10 "$UK_PID" || true
	fi
	tr -d '\r' <"$UK_TMP/console" >"$UK_TMP/c"
	tail -n 40 "$UK_TMP/c"
	grep -m1 '^panic:' "$UK_TMP/c" && fail "$1: the guest panicked"
	fail "$1"
}

attack() {
	local image=$1 n
	echo "== $(basename "$image")"
	guest_console_in "$FIFO_DIR/console-in" || fail "no fifo for the console input"
	# Deadlines (-t, -w) far beyond the test: the attacker's connection
	# stays until its own reset.
	uk_tap_start "$image" "-p 80 -s -t 60 -w 60"
	guest_wait_http "$UK_URL/" 60 "$UK_PID" || guest_failed "no HTTP answer"

	"${NET_EXEC[@]}" python3 - "$NETNS_TAP" "$NETNS_GUEST_IP" "$ROOT/tests/integration/lib" "$UK_TMP/console" <<'PY' || guest_failed "window-edge attack"
import subprocess, sys
tap, host, lib, console = sys.argv[1:5]
sys.path.insert(0, lib)
from rawtcp import Connection, Link, neighbour_address, seq_add, seq_diff

def panicked():
    with open(console, errors="replace") as f:
        return any(line.startswith("panic:") for line in f)

def served(when):
    out = subprocess.run(["curl", "-s", "-m", "10", f"http://{host}/"], capture_output=True).stdout
    if not out.endswith(b"a poll()-based server.\n"):
        sys.exit(f"{when}: another client got no answer ({out[:60]!r})")

c = Connection(Link(tap, neighbour_address(host), host), 80, wscale=7)
c.connect(window=0)
if c.peer_wscale == 0:
    sys.exit("the guest's SYN-ACK does not scale its window")
c.send(b"GET /bytes/1073741824 HTTP/1.1\r\nHost: x\r\n\r\n", window=0)
if not c.wait_acked(c.snd_nxt, 10):
    sys.exit("the request was never acknowledged")
fill_from, right = c.snd_nxt, c.right_edge()
print(f"request acknowledged under a zero window; the guest's window {seq_diff(right, fill_from)} bytes "
      f"(scale {c.peer_wscale})")

# 1,000 bytes from 10 before the right edge: out of order, 990 past the window.
ooseq_at = seq_add(right, -10)
c.send(b"o" * 1000, seq=ooseq_at, window=0)

# The gap, in order, in segments of 1,400 bytes (the last one shorter).
gap = seq_diff(ooseq_at, fill_from)
sizes = [1400] * (gap // 1400) + ([gap % 1400] if gap % 1400 else [])
filled = c.push(fill_from, sizes, fill=b"g", stop=panicked)
print(f"{len(sizes)} in-order segments fill the gap of {gap} bytes; the guest acknowledges {filled}")
if panicked():
    sys.exit("the guest panicked while the gap was filled")
if filled < gap:
    sys.exit("the guest stopped acknowledging the in-order data inside its window")

for _ in range(3):
    served("the attacker's connection open")
print("3 other clients served while the attacker's connection is open")
c.reset()
served("after the attacker's reset")
print("served after the attacker's reset")
PY

	uk_tap_stop
	[ "$UK_RC" = 0 ] || fail "exit status $UK_RC"
	! grep '^panic:' "$UK_TMP/console" || fail "the guest panicked"
	grep -Eq '^sockets: open 0,' "$UK_TMP/console" || fail "sockets left open"
	n=$(sed -nE "/$GUARD_LINE/s/.*$GUARD_NAME ([0-9]+).*/\1/p" "$UK_TMP/console")
	echo "counted: $GUARD_NAME ${n:-(no such counter)}"
	[ "${n:-0}" -ge 1 ] || fail "the segment beyond the window was not counted ($GUARD_LINE ... $GUARD_NAME N)"
}

FIFO_DIR=$(mktemp -d)
trap 'rm -rf "$FIFO_DIR"' EXIT
images=("$ROOT/$BUILD/apps/httpd.elf")
if [ -f "$ROOT/$BUILD/apps/httpd-all.elf" ]; then
	images+=("$ROOT/$BUILD/apps/httpd-all.elf")
else
	echo "(no $BUILD/apps/httpd-all.elf: the release build is not attacked)"
fi
for image in "${images[@]}"; do
	(attack "$image") || exit $?
done
echo "all good"
