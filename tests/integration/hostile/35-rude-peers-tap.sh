#!/usr/bin/env bash
# Peers that misbehave, against the unikernel's httpd (tap back-end): a reset
# right after the request (before the answer), a half-close after the request
# (the answer must still arrive, then the server closes), and clients that send
# a request and vanish without reading; a segment with a sequence number 2^31
# off (once a remote panic through an lwIP assertion). The server keeps
# serving, and once the dust settles every socket is freed.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
needs python3 curl
uk_tap_serve "$ROOT/$BUILD/apps/httpd.elf" "-p 80 -s -t 3"

"${NET_EXEC[@]}" python3 - "$NETNS_GUEST_IP" "$ROOT/tests/integration/lib" <<'PY' || { tr -d '\r' <"$UK_TMP/console"; fail "rude-peer check failed"; }
import socket, struct, subprocess, sys, time
host = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from client import read_to_close
from flood import tcp_packet
req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"

def served():
    out = subprocess.run(["curl", "-s", "-m", "5", f"http://{host}/"], capture_output=True).stdout
    assert out.endswith(b"a poll()-based server.\n"), f"not served: {out!r}"

for i in range(50):  # request, then a reset before the answer can be read
    s = socket.create_connection((host, 80), timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.sendall(req)
    s.close()
served()
print("50 resets right after the request: still serving")

for i in range(20):  # half-close: the answer still comes, then the server's FIN
    s = socket.create_connection((host, 80), timeout=5)
    s.sendall(req)
    s.shutdown(socket.SHUT_WR)
    got, _, reset = read_to_close(s, 5)
    assert not reset and got.startswith(b"HTTP/1.1 200 OK") and got.endswith(b"server.\n"), f"half-close answer {got!r}"
    s.close()
print("20 half-closes: each answered, then closed by the server")

vanished = []
for i in range(20):  # send and never read; keep the sockets open, then drop them
    s = socket.create_connection((host, 80), timeout=5)
    s.sendall(req * 4)
    vanished.append(s)
served()
for s in vanished:
    s.close()
served()
print("20 clients that sent and vanished: still serving")

# A segment of one byte whose sequence number lies 2^31 before the one the
# server expects: lwIP's receive path took it for an overlap and asserted (a
# panic of the guest); now it is dropped and counted. Our SYN, seen on the
# tap, gives the sequence number.
sniff = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # all: ours too
sniff.bind(("tap0", 0))
sniff.settimeout(5)
c = socket.create_connection((host, 80), timeout=5)
lport = c.getsockname()[1]
while True:
    frame = sniff.recv(2048)
    if frame[12:14] != b"\x08\x00":
        continue
    ip = frame[14:]
    tcp = ip[(ip[0] & 0xF) * 4:]
    sport, dport, seq = struct.unpack("!HHI", tcp[:8])
    if sport == lport and dport == 80 and tcp[13] & 0x02:
        break
src, dst = socket.inet_aton(c.getsockname()[0]), socket.inet_aton(host)
bad_seq = (seq + 1 - 2**31) % 2**32
packet = tcp_packet(src, dst, lport, 80, bad_seq, 0x18, b"x")  # PSH|ACK, one byte
socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW).sendto(packet, (host, 0))
time.sleep(0.5)
c.sendall(req)
assert c.recv(4096).startswith(b"HTTP/1.1 200 OK"), "no answer after the hostile segment"
c.close()
served()
print("a segment 2^31 before the expected sequence number: dropped, still serving")
PY
sleep 5 # longer than the idle timeout: anything left over is closed by now
uk_tap_stop
[ "$UK_RC" = 0 ] || fail "exit status $UK_RC"
grep -Eq '^sockets: open 0,' "$UK_TMP/console" || fail "sockets left open"
grep -Eq 'insane offsets 1$' "$UK_TMP/console" || fail "the hostile segment was not counted"
echo "all good"
