#!/usr/bin/env bash
# 21-rawhttp-tap: the raw-API server on a tap device inside a private network
# namespace (192.0.2.0/24, nothing outside it is reachable), with a static
# address from the command line. Without slirp's backlog of 1 in the way it
# checks what user networking cannot: bursts of new connections (ab -c 16)
# and 64 keep-alive connections, 1088 connections opened at once, a client port reused while the server still
# holds it in TIME_WAIT (must be accepted at once: recycling), and a burst
# of hostile frames (junk, truncated and lying headers), after which the
# server must still answer. Also: no DHCP server -> a clear error within the
# bounded wait, and no NIC at all -> a clear error.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
uk_test rawhttp curl ab python3
tap_netns rawhttp
GUEST=$NETNS_GUEST_IP
url=http://$GUEST:80

# The serial console ends lines with CR LF.
console() { tr -d '\r' <"$tmp/console"; }
show_console() { echo "---- console"; console; }
# On a failure, ask the guest to stop (bounded) so its counters reach the log.
die() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		"${NET_EXEC[@]}" curl -s -m 3 "$url/__shutdown" >/dev/null
		for _ in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	fi
	show_console
	fail "$*"
}
# boot_bg APPEND: QEMU in the namespace, in the background, console to a file.
boot_bg() {
	"${NET_EXEC[@]}" "$QEMU_RUN" --timeout 200 --net tap --tap "$NETNS_TAP" --append "$1" \
		"$LOADER" "$IMAGE" </dev/null >"$tmp/console" 2>&1 &
	pid=$!
}

echo "== no DHCP server on the tap: a clear error after the bounded wait"
SECONDS=0
boot_bg "-- 80"
wait "$pid"
rc=$? pid=""
[ $rc = 1 ] || die "exit status $rc, expected 1"
console | grep -E '^net: DHCP: no lease after 10 s' >/dev/null || die "no DHCP timeout message"
[ $SECONDS -le 40 ] || die "the DHCP wait took ${SECONDS}s"

echo "== no NIC: a clear error"
"$QEMU_RUN" --timeout 60 --append "-- 80" "$LOADER" "$IMAGE" </dev/null >"$tmp/console" 2>&1
rc=$?
[ $rc = 1 ] || die "exit status $rc, expected 1"
console | grep '^virtio-net: no modern virtio-net device' >/dev/null || die "no message about the missing NIC"

echo "== booting rawhttp at $GUEST (static address)"
boot_bg "$NETNS_GUEST_NET -- 80"
end=$((SECONDS + 60))
while [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null &&
	! console | grep '^rawhttp: listening on port 80$' >/dev/null; do
	sleep 0.2
done
console | grep -E "^net: 52:54:00:12:34:56 ip ${GUEST//./\\.}/24 gw ${NETNS_HOST_IP//./\\.}\$" >/dev/null ||
	die "no static configuration line"
guest_wait_http "$url/" 20 "$pid" || die "no HTTP answer"

ab_load "$url/" 3000 64 -k || die "ab -k -c 64 failed"
ab_load "$url/" 1000 16 || die "ab -c 16 failed"

echo "== 1088 connections opened at once (64 keep-alive + a backlog of 1024), each answered"
"${NET_EXEC[@]}" timeout 90 python3 - "$GUEST" 1088 <<'PY' || die "the connection burst failed"
import resource, selectors, socket, sys, time
host, count = sys.argv[1], int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 64)), hard))
request = b'GET / HTTP/1.1\r\nHost: h\r\n\r\n'
sel = selectors.DefaultSelector()
start = time.monotonic()
socks = []
for _ in range(count):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex((host, 80))
    socks.append(s)
    sel.register(s, selectors.EVENT_WRITE, bytearray())
answered = 0
deadline = start + 60
while answered < count and time.monotonic() < deadline:
    for key, ev in sel.select(1):
        s, got = key.fileobj, key.data
        if ev & selectors.EVENT_WRITE:
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                sys.exit(f"connect failed: errno {err}")
            s.send(request)
            sel.modify(s, selectors.EVENT_READ, got)
            continue
        data = s.recv(4096)
        if not data:
            sys.exit("closed without an answer")
        got += data
        if got.endswith(b'lwIP test.\n'):
            if not got.startswith(b'HTTP/1.1 200 OK\r\n'):
                sys.exit(f"bad answer {bytes(got)!r}")
            sel.unregister(s)
            answered += 1
print(f"{answered} of {count} answered in {time.monotonic() - start:.1f} s")
for s in socks:
    s.close()
sys.exit(0 if answered == count else 1)
PY

echo "== one client port three times in a row (the server holds it in TIME_WAIT)"
# Above the namespace's ephemeral range (tools/lib/netns.sh ends it at
# NETNS_CLIENT_PORT_MAX): the loads above cannot have left this port in the
# client's own TIME_WAIT, where binding it would fail.
cport=$((NETNS_CLIENT_PORT_MAX + 1 + RANDOM % 1000))
# A SYN the server did not accept at once is sent again by the client's
# kernel after 1 s: the namespace's count of SYN retransmissions says so
# whatever the machine's speed.
syn_retrans() {
	"${NET_EXEC[@]}" awk '/^TcpExt:/ { if (!seen) { for (i = 1; i <= NF; i++) col[$i] = i; seen = 1 }
		else print $col["TCPSynRetrans"] }' /proc/net/netstat
}
for i in 1 2 3; do
	before=$(syn_retrans)
	"${NET_EXEC[@]}" curl -s -m 5 --local-port "$cport" -H 'Connection: close' "$url/" >"$tmp/got" ||
		die "connection $i from port $cport failed"
	resent=$(($(syn_retrans) - before))
	echo "   connection $i: SYN sent again $resent times"
	[ "$(wc -c <"$tmp/got")" = 41 ] || die "connection $i: wrong answer"
	[ "$resent" = 0 ] || die "connection $i: the SYN was not accepted at once ($resent retransmissions)"
done

echo "== hostile frames into the tap, then the server must still answer"
mac=52:54:00:12:34:56
"${NET_EXEC[@]}" timeout 60 python3 - "$NETNS_TAP" "$mac" "$GUEST" "$NETNS_HOST_IP" <<'PY' || die "could not send the frames"
import os, random, socket, struct, sys
ifname, mac, guest, host = sys.argv[1:5]
dst = bytes.fromhex(mac.replace(':', ''))
src = bytes.fromhex('020000000001')
g, h = socket.inet_aton(guest), socket.inet_aton(host)
rng = random.Random(20)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
def eth(ethertype, payload): return dst + src + struct.pack('!H', ethertype) + payload
def csum(data):
    data += b'\0' * (len(data) & 1)
    total = sum(struct.unpack(f'!{len(data) // 2}H', data))
    while total >> 16: total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff
def ip(proto, payload, ihl=5, total=None, frag=0, ttl=64):
    # A correct header checksum, so that lies in the other fields get past it.
    total = 20 + len(payload) if total is None else total
    hdr = struct.pack('!BBHHHBBH4s4s', 0x40 | ihl, 0, total, rng.getrandbits(16), frag, ttl, proto, 0, h, g)
    return hdr[:10] + struct.pack('!H', csum(hdr)) + hdr[12:] + payload
def tcp(sport, seq, ack, offset_flags, window, payload, good_checksum):
    seg = struct.pack('!HHIIHHHH', sport, 80, seq, ack, offset_flags, window, 0, 0) + payload
    if good_checksum:
        seg = seg[:16] + struct.pack('!H', csum(h + g + struct.pack('!BBH', 0, 6, len(seg)) + seg)) + seg[18:]
    return seg
frames = []
for n in range(300):
    frames.append(eth(rng.getrandbits(16), os.urandom(rng.randrange(0, 1500))))          # junk of any type
    frames.append(eth(0x0800, os.urandom(rng.randrange(0, 60))))                        # junk "IPv4"
    frames.append(eth(0x0800, ip(6, os.urandom(rng.randrange(0, 40)))))                 # truncated TCP
    frames.append(eth(0x0800, ip(6, os.urandom(40), total=rng.randrange(0, 65536))))    # lying total length
    frames.append(eth(0x0800, ip(6, os.urandom(60), ihl=rng.randrange(0, 16))))         # lying header length
    frames.append(eth(0x0800, ip(17, os.urandom(rng.randrange(0, 100)), frag=rng.getrandbits(16))))  # fragments
    frames.append(eth(0x0806, os.urandom(rng.randrange(0, 60))))                        # junk ARP
    for good in (False, True):                                                          # random TCP to port 80,
        frames.append(eth(0x0800, ip(6, tcp(rng.getrandbits(16), rng.getrandbits(32),   # bad and good checksums,
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16),              # any flags and offsets
            os.urandom(rng.randrange(0, 40)), good))))
for f in frames:
    s.send(f[:1514])
print(f"sent {len(frames)} frames")
PY
kill -0 "$pid" 2>/dev/null || die "the guest died"
"${NET_EXEC[@]}" curl -s -m 10 "$url/" >"$tmp/got" && [ "$(wc -c <"$tmp/got")" = 41 ] || die "no answer after the hostile frames"
ab_load "$url/" 300 4 -k || die "ab -k -c 4 after the hostile frames failed"

echo "== shutdown request"
"${NET_EXEC[@]}" curl -s -m 10 "$url/__shutdown" >/dev/null || die "no answer to the shutdown request"
wait "$pid"
rc=$? pid=""
show_console
[ $rc = 0 ] || fail "qemu-run returned $rc, not the app's 0"
recycled=$(console | sed -nE 's/^net: drops: .*TIME_WAIT recycled ([0-9]+).*/\1/p')
[ -n "$recycled" ] && [ "$recycled" -ge 2 ] || fail "TIME_WAIT recycled ${recycled:-?} times, expected at least 2"
console | grep -E '^lwip ip .* chkerr [1-9]' >/dev/null && console | grep -E '^lwip tcp .* chkerr [1-9]' >/dev/null ||
	fail "the hostile frames were not counted by lwIP"
echo "all good"
