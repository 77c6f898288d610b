#!/usr/bin/env bash
# 42-deadlines-native: httpd's limits on slow clients (apps/httpd/guard.c),
# one by one, natively on 127.0.0.1 with short deadlines (-r 2 -w 2), each
# the way a slow client meets it:
#   - a head trickled a line every 0.5 s is answered 408 after 2 s (before,
#     each byte restarted the idle timeout, and such a head held its slot for
#     ever); a connection that never sends is closed at 2 s, without an answer;
#   - a keep-alive connection idle between requests is not (the idle timeout,
#     -t, governs there);
#   - a request body that stops, or trickles, is answered 408 after 2 s;
#   - an answer the client does not take (a 100 MB /bytes) is reset after 2 s;
#   - past the connection limit (-c 4) a newcomer evicts the oldest slow head
#     (reset) and is answered at once; connections that have sent nothing are
#     evicted only after 10 s.
# httpd's counters at exit must show each of these.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
httpd=$ROOT/$BUILD/host/httpd
[ -x "$httpd" ] || skip "$httpd not built"
command -v python3 >/dev/null && command -v curl >/dev/null || skip "python3 or curl missing"
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

start() { # ARGS...: httpd on a free port; sets port, pid
	port=$(free_port)
	"$httpd" -a 127.0.0.1 -p "$port" -s "$@" >"$tmp/log" 2>&1 &
	pid=$!
	guest_wait_http "http://127.0.0.1:$port/" 10 "$pid" || fail "httpd did not answer: $(cat "$tmp/log")"
}
stop() { # sets line to httpd's counters
	curl -s "http://127.0.0.1:$port/__shutdown" >/dev/null
	wait "$pid" || fail "httpd exited $?"
	pid=""
	line=$(grep '^httpd: accepted' "$tmp/log")
	echo "$line"
}

start -r 2 -w 2 -t 30 -c 4
PYTHONPATH=$ROOT/tests/integration/lib python3 - "$port" <<'PY' || fail "deadlines"
import socket, sys, time
from client import read_to_close as answer
port = int(sys.argv[1])

def conn(rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    return s

def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)

def trickle(s, t0, secs, piece):
    """Sends piece (none: nothing) and reads, each wait bounded by s's
    timeout, until the server closes or fails the connection, or secs from
    t0: what it answered."""
    got = b""
    while time.monotonic() - t0 < secs:
        try:
            if piece:
                s.sendall(piece)
            d = s.recv(4096)
            if not d:
                break
            got += d
        except socket.timeout:
            continue
        except OSError:
            break
    return got

# A head trickled a line every 0.5 s: 408 at the deadline, 2 s from accept.
s, t0 = conn(), time.monotonic()
s.sendall(b"GET / HTTP/1.1\r\n")
s.settimeout(0.5)
got = trickle(s, t0, 5, b"X-Slow: x\r\n")
took = time.monotonic() - t0
check(got.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), f"trickled head: {got[:60]!r}")
check(1.5 < took < 4.5, f"trickled head answered after {took:.1f} s, want about 2")
print(f"a head trickled every 0.5 s: 408 after {took:.1f} s")

# Silent from accept: closed at the head deadline, nothing said.
s, t0 = conn(), time.monotonic()
data, _, _ = answer(s, 6)
took = time.monotonic() - t0
check(data == b"" and 1.5 < took < 4.5, f"silent connection: {data!r} after {took:.1f} s")
print(f"a connection that sent nothing: closed after {took:.1f} s")

# Idle between requests: the head deadline does not apply.
s = conn()
s.sendall(b"GET / HTTP/1.1\r\n\r\n")
s.settimeout(3)
check(s.recv(4096).startswith(b"HTTP/1.1 200 OK"), "keep-alive: first answer")
time.sleep(3)
s.sendall(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
data, _, _ = answer(s, 3)
check(data.startswith(b"HTTP/1.1 200 OK"), f"keep-alive idle 3 s then a request: {data[:40]!r}")
print("a keep-alive connection idle for 3 s: still served")

# A body that stops, and one that trickles 10 bytes every 0.3 s: 408.
for name, step in (("stops", None), ("trickles", 0.3)):
    s, t0 = conn(), time.monotonic()
    s.sendall(b"POST / HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100)
    s.settimeout(step or 5)
    got = trickle(s, t0, 6, b"y" * 10 if step else None)
    took = time.monotonic() - t0
    check(got.startswith(b"HTTP/1.1 408 Request Timeout\r\n") and 1.5 < took < 4.5,
          f"a body that {name}: {got[:40]!r} after {took:.1f} s")
    print(f"a request body that {name}: 408 after {took:.1f} s")

# An answer the client does not read: the server gives up and resets.
s, t0 = conn(rcvbuf=4096), time.monotonic()
s.sendall(b"GET /bytes/100000000 HTTP/1.1\r\n\r\n")
time.sleep(4)
got, reset = 0, False
s.settimeout(5)
try:
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        got += len(d)
except (ConnectionResetError, socket.timeout) as e:
    reset = isinstance(e, ConnectionResetError)
check(got < 100000000, f"an unread answer was sent whole ({got} bytes)")
print(f"an answer not read for 4 s: ended after {got} of 100000000 bytes (reset seen: {reset})")

# Past the limit (-c 4): four slow heads, then a newcomer after 1.2 s: it
# evicts the oldest head (which sees a reset) and is answered at once.
slow = []
for i in range(4):
    c = conn()
    c.sendall(b"GET / HTTP/1.1\r\n")
    slow.append(c)
    time.sleep(0.05)
time.sleep(1.2)
t0 = time.monotonic()
s = conn()
s.sendall(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
data, _, _ = answer(s, 3)
took = time.monotonic() - t0
check(data.startswith(b"HTTP/1.1 200 OK") and took < 1, f"newcomer past the limit: {data[:40]!r} after {took:.1f} s")
first, _, reset = answer(slow[0], 1)
check(reset and first == b"", f"the oldest slow head was not reset ({first[:40]!r})")
print(f"a newcomer past -c 4: answered in {took:.2f} s, the oldest slow head reset")
PY
stop
. "$ROOT/tests/integration/lib/slow.sh"
[ "$(slow_counter "$line" head)" -ge 2 ] || fail "head deadlines not counted"
[ "$(slow_counter "$line" head-408)" -ge 1 ] || fail "no head answered 408"
[ "$(slow_counter "$line" body)" -ge 2 ] || fail "stalled bodies not counted"
[ "$(slow_counter "$line" answer)" -ge 1 ] || fail "the stalled answer not counted"
[ "$(slow_counter "$line" evicted-heads)" -ge 1 ] || fail "the eviction not counted"

echo "== connections that sent nothing are evicted only after 10 s"
start -r 60 -c 4
PYTHONPATH=$ROOT/tests/integration/lib python3 - "$port" <<'PY' || fail "silent eviction"
import socket, sys, time
from client import read_to_close
port = int(sys.argv[1])
silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
time.sleep(0.5)
t0 = time.monotonic()
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
data, _, reset = read_to_close(s, 20)
took = time.monotonic() - t0
if reset or not data.startswith(b"HTTP/1.1 200 OK") or not 8 < took < 13:
    print(f"FAIL: newcomer behind 4 silent connections: {data[:40]!r} after {took:.1f} s, want about 10")
    sys.exit(1)
print(f"a newcomer behind 4 silent connections: answered after {took:.1f} s")
PY
stop
[ "$(sed -n 's/.*silent \([0-9]*\),.*/\1/p' <<<"$line")" -ge 1 ] || fail "the silent eviction not counted"
echo "all good"
