#!/usr/bin/env bash
# Receive-buffer exhaustion (tap back-end): the device delivers faster than the
# app reads. tests/images/rxsink reads nothing for 4 s while 2,000 UDP
# datagrams and 96 TCP connections of 64 KiB each arrive: the UDP queue
# overflows and the pbuf pool runs dry, and both are counted. Then it reads
# everything: every datagram it got is intact, every connection's bytes hash
# to what the client sent (TCP's retransmissions made up for the drops), and
# it exits 0 with every pool back.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
command -v python3 >/dev/null || skip "python3 missing"
uk_tap_start "$ROOT/$BUILD/apps/rxsink.elf" "-d 4 -n 96"
guest_wait_console "$UK_TMP/console" '^rxsink: ready' 30 "$UK_PID" || { cat "$UK_TMP/console"; fail "rxsink did not start"; }

"${NET_EXEC[@]}" python3 - "$NETNS_GUEST_IP" <<'PY' || { kill "$UK_PID"; tr -d '\r' <"$UK_TMP/console"; fail "client check failed"; }
import random, socket, sys, threading
host = sys.argv[1]

u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for seq in range(2000):  # 4-byte sequence number, then bytes seq*7+i mod 251
    u.sendto(seq.to_bytes(4, "big") + bytes((seq * 7 + i) % 251 for i in range(4, 1000)), (host, 9))
print("udp: sent 2000 datagrams of 1000 bytes")

def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h

CONNS, SIZE = 96, 64 * 1024
bad = []
def client(i):
    data = random.Random(i).randbytes(SIZE)
    want = f"{SIZE} {fnv1a(data):016x}\n".encode()
    try:
        s = socket.create_connection((host, 9), timeout=60)
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        got = b""
        while chunk := s.recv(256):
            got += chunk
        s.close()
    except OSError as e:
        got = repr(e).encode()
    if got != want:
        bad.append((i, got, want))
threads = [threading.Thread(target=client, args=(i,)) for i in range(CONNS)]
for t in threads: t.start()
for t in threads: t.join()
for i, got, want in bad[:5]:
    print(f"connection {i}: got {got!r}, want {want!r}")
print(f"tcp: {CONNS} connections of {SIZE} bytes, {CONNS - len(bad)} answered with the right length and hash")
sys.exit(1 if bad else 0)
PY
wait "$UK_PID"; rc=$?; UK_PID=""
tr -d '\r' <"$UK_TMP/console" >"$UK_TMP/c"
grep -E '^(rxsink:|net: drops|udp:|pools:|lwip pools)' "$UK_TMP/c"
[ $rc = 0 ] || { cat "$UK_TMP/c"; fail "rxsink exit status $rc"; }
grep -Eq '^rxsink: udp received [0-9]+ intact [0-9]+ corrupt 0$' "$UK_TMP/c" || fail "corrupt datagrams"
grep -Eq '^rxsink: tcp connections 96 bytes 6291456$' "$UK_TMP/c" || fail "not every byte arrived"
nopbuf=$(sed -n 's/^net: drops: rx no-pbuf \([0-9]*\).*/\1/p' "$UK_TMP/c")
qfull=$(sed -n 's/^udp: .*queue full \([0-9]*\).*/\1/p' "$UK_TMP/c")
echo "counted drops: rx no-pbuf ${nopbuf:-?}, udp queue full ${qfull:-?}"
[ "${nopbuf:-0}" -gt 0 ] || fail "the pbuf pool never ran dry: the test did not exhaust the receive buffers"
[ "${qfull:-0}" -gt 0 ] || fail "no UDP datagram was counted as dropped"
grep -Eq 'PBUF_POOL 0;.*tcp-sockets 0 udp-sockets 0' "$UK_TMP/c" || fail "pools not back at exit"
echo "all good"
