#!/usr/bin/env bash
# Slow clients on the unikernel's httpd (tap back-end): connections that send
# half a request and then nothing do not block other clients, and are closed
# after the idle timeout (-t 2 here).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
needs python3 curl
uk_tap_serve "$ROOT/$BUILD/apps/httpd.elf" "-p 80 -s -t 2"

"${NET_EXEC[@]}" python3 - "$NETNS_GUEST_IP" <<'PY' || { tr -d '\r' <"$UK_TMP/console"; fail "slow-client check failed"; }
import socket, subprocess, sys, time
host = sys.argv[1]
slow = []
for i in range(20):  # twenty clients that send half a request and stop
    s = socket.create_connection((host, 80), timeout=10)
    s.sendall(b"GET / HT")
    slow.append(s)
t = time.monotonic()
out = subprocess.run(["curl", "-s", "-m", "5", f"http://{host}/"], capture_output=True).stdout
assert out.endswith(b"a poll()-based server.\n"), f"a normal client was not served: {out!r}"
print(f"a normal client was served in {time.monotonic() - t:.2f} s beside 20 slow ones")
start = time.monotonic()
for s in slow:  # each must be closed by the server within the timeout + slack
    s.settimeout(8)
    assert s.recv(100) == b"", "the slow connection got data instead of a close"
print(f"all 20 slow connections closed by the server after {time.monotonic() - start:.1f} s")
PY
uk_tap_stop
[ "$UK_RC" = 0 ] || fail "exit status $UK_RC"
grep -q '^httpd: 20 idle connections closed$' "$UK_TMP/console" || fail "the idle closes were not counted"
grep -Eq '^sockets: open 0,' "$UK_TMP/console" || fail "sockets left open"
echo "all good"
