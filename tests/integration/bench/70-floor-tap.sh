#!/usr/bin/env bash
# 70-floor-tap: the floor (apps/floor), the benchmark's reference guest that
# answers on the virtio-net driver with no TCP/IP stack, on tap in a private
# namespace, then briefly on the user back-end. Checks behaviour, never
# speed:
#  - its image holds nothing of lwIP or the socket layer;
#  - it prints the network line the benchmark waits for, and its counters
#    on Ctrl-T, in the dump form the benchmark cuts (ending "kernel: waits");
#  - its answers are byte for byte those of httpd (build/host/httpd, run
#    natively in the same namespace) for GET / in each keep-alive form
#    (HTTP/1.1, HTTP/1.1 with Connection: close, HTTP/1.0, HTTP/1.0 with
#    Connection: keep-alive), a 404 and a HEAD; and GET / is the fixed string
#    apps/httpd/http.c makes;
#  - ab -k -c 1 -n 2000, ab -k -c 8 -n 2000 (every request kept alive) and
#    ab -c 16 -n 1000: none failed, none non-2xx;
#  - hand-made frames (lib/rawtcp.py): its ARP reply; the SYN-ACK's MSS
#    option and no window scaling; the same ISN for the same SYN again; a
#    request answered in one segment acknowledging it, and sent again (a
#    lost answer) answered again with the same bytes at the same sequence
#    number; a FIN answered with FIN-ACK; a split request reset; and four
#    hostile frames (a SYN whose options run past its header, a bad
#    checksum, an IPv4 packet that is not TCP, a short frame) each counted
#    under its reason, after which it still answers;
#  - idle, QEMU uses almost no CPU (the floor parks);
#  - GET /__shutdown: qemu-run's exit status 0, the counters printed;
#  - on user networking and over passt (where installed): the network line,
#    the same bytes and ab -k -c 1 -n 500 through the forwarded port, then
#    the shutdown's status 0.
# The floor is booted from its spec in tools/lib/guests.sh, as the benchmark
# boots it, with the default build's image (UK_FLOOR): its checks on.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tools/lib/guests.sh"
HTTPD=$ROOT/$BUILD/host/httpd
# The benchmark's guest spec: the image, and a console that answers Ctrl-T.
UK_FLOOR=$ROOT/$BUILD/apps/floor.elf GUESTS_BUILD=$ROOT/$BUILD guest_resolve floor || fail "tools/lib/guests.sh does not know the floor"
[ "$GUEST_KIND" = uk ] && [ "$GUEST_CTRL_T" = 1 ] || fail "the floor's spec: kind $GUEST_KIND, Ctrl-T '$GUEST_CTRL_T'"
IMAGE=$GUEST_INITRD LOADER=$GUEST_KERNEL
[ -x "$HTTPD" ] || fail "no $HTTPD"
command -v ab >/dev/null && command -v curl >/dev/null && command -v python3 >/dev/null ||
	skip "ab, curl or python3 missing"

echo "== the image: no lwIP, no socket layer"
if command -v nm >/dev/null; then
	nm "$IMAGE" | grep -E ' (lwip_init|tcp_input|pbuf_alloc|net_init|sock_net_start)$' &&
		fail "the floor's image links the network stack"
fi

tmp=$(mktemp -d)
httpd_pid=""
trap 'guest_kill; [ -n "$httpd_pid" ] && kill "$httpd_pid" 2>/dev/null; netns_destroy "$NET_NS"; rm -rf "$tmp"' EXIT
tap_netns floor
GUEST=$NETNS_GUEST_IP PORT=8080
url=http://$GUEST:$PORT

guest_console_in "$tmp/stdin" || fail "no fifo for the console"
guest_start "$tmp/console" "$tmp/qemu.pid" "${NET_EXEC[@]}" "$QEMU_RUN" --net tap --tap "$NETNS_TAP" --timeout 280 \
	--append "ip=$GUEST gw=$NETNS_HOST_IP mask=$NETNS_MASK -- -p $PORT -q -s" "$LOADER" "$IMAGE"
console() { tr -d '\r' <"$tmp/console"; }
die() {
	[ -n "$GUEST_PID" ] && [ -n "$GUEST_CONSOLE_FD" ] && kill -0 "$GUEST_PID" 2>/dev/null &&
		printf '\x14' >&"$GUEST_CONSOLE_FD" && sleep 2
	echo "---- guest console"
	console
	fail "$@"
}
# The benchmark waits for this line (over passt), then for an answer.
guest_wait_console "$tmp/console" '^net: .* ip ' 60 || die "no network line"
console | contains -xF "net: 52:54:00:12:34:56 ip $GUEST/24 gw $NETNS_HOST_IP" || die "not net/net.c's form"
guest_wait_http "$url/" 30 || die "no HTTP answer from the floor"

# counters: Ctrl-T on the console; prints the floor's line of the dump,
# once the dump's last line (the kernel's "waits") is in.
counters() {
	local off
	off=$(stat -c %s "$tmp/console")
	printf '\x14' >&"$GUEST_CONSOLE_FD"
	for _ in $(seq 100); do
		tail -c +$((off + 1)) "$tmp/console" | tr -d '\r' | contains '^kernel: waits' && break
		sleep 0.05
	done
	tail -c +$((off + 1)) "$tmp/console" | tr -d '\r' | grep '^floor: frames' | tail -n 1
}
# count LINE RE: the number after RE (a label and its space) in LINE.
count() { sed -nE "s/.*[ (]$2([0-9]+).*/\1/p" <<<"$1"; }

echo "== Ctrl-T: the floor's counters, the driver's, the kernel's"
before=$(counters)
[ -n "$before" ] || die "no counters on Ctrl-T"
echo "$before"

echo "== the answers are httpd's, byte for byte"
"${NET_EXEC[@]}" "$HTTPD" -a 127.0.0.1 -p 8081 -q -s </dev/null >"$tmp/httpd.log" 2>&1 &
httpd_pid=$!
native=http://127.0.0.1:8081
guest_wait_http "$native/" 10 "$httpd_pid" || fail "native httpd did not answer"
printf 'HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n\r\nHello from httpd, a poll()-based server.\n' >"$tmp/want"
"${NET_EXEC[@]}" curl -s -i -m 5 "$url/" >"$tmp/got"
expect_file "$tmp/got" "$tmp/want"
same() { # WHAT CURL-ARGS...: the floor's answer and httpd's to the same request
	local what=$1
	shift
	"${NET_EXEC[@]}" curl -s -i -m 5 "$@" "$url/${path#/}" >"$tmp/floor.out" || die "$what: curl to the floor failed"
	"${NET_EXEC[@]}" curl -s -i -m 5 "$@" "$native/${path#/}" >"$tmp/httpd.out" || fail "$what: curl to httpd failed"
	[ -s "$tmp/httpd.out" ] || fail "$what: httpd answered nothing"
	expect_file "$tmp/floor.out" "$tmp/httpd.out"
	echo "   $what: $(head -n 1 "$tmp/floor.out" | tr -d '\r'), $(wc -c <"$tmp/floor.out") bytes, as httpd's"
}
path=/
same "HTTP/1.1"
same "HTTP/1.1, Connection: close" -H 'Connection: close'
same "HTTP/1.0" --http1.0
same "HTTP/1.0, Connection: keep-alive" --http1.0 -H 'Connection: keep-alive'
same "HEAD" -I
path=/missing
same "404"
"${NET_EXEC[@]}" curl -s -m 5 "$native/__shutdown" >/dev/null
wait "$httpd_pid" 2>/dev/null
httpd_pid=""

echo "== loads"
ab_keepalive "$url/" 2000 1 || die "ab -k -c 1"
ab_keepalive "$url/" 2000 8 || die "ab -k -c 8"
ab_load "$url/" 1000 16 || die "ab -c 16"

echo "== hand-made frames"
mid=$(counters)
"${NET_EXEC[@]}" timeout 60 python3 - "$ROOT/tests/integration/lib" "$NETNS_TAP" "$GUEST" "$PORT" "$tmp/want" <<'PY' || die "the hand-made frames"
import socket, struct, sys, time
sys.path.insert(0, sys.argv[1])
from rawtcp import ACK, FIN, PSH, RST, SYN, Connection, Link, checksum, neighbour_address
tap, guest, port, want = sys.argv[2], sys.argv[3], int(sys.argv[4]), open(sys.argv[5], "rb").read()
link = Link(tap, neighbour_address(guest), guest)  # the floor's ARP reply gives its MAC
print(f"ARP: the floor is at {link.peer_mac.hex(':')}")

def check(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}")
    print(f"ok: {what}")

def first(c, cond, timeout=5):
    """The first segment of c's (read from now on) that meets cond, or None."""
    start = len(c.received)
    c.poll(timeout, until=lambda: any(cond(s) for s in c.received[start:]))
    return next((s for s in c.received[start:] if cond(s)), None)

mss = struct.pack("!BBH", 2, 4, 1460)
c = Connection(link, port)
synack = c.connect()
check(synack.options.get(2) == struct.pack("!H", 1460) and 3 not in synack.options,
      f"SYN-ACK with MSS 1460 and no window scaling ({synack.options})")
c.segment(c.iss, 0, SYN, 65535, options=mss)
again = first(c, lambda s: s.flags & SYN)
check(again is not None and again.seq == synack.seq, "the same SYN again: the same initial sequence number")

request = b"GET / HTTP/1.1\r\nHost: floor\r\n\r\n"
start = c.snd_nxt
c.send(request)
answer = first(c, lambda s: s.payload)
check(answer is not None and answer.payload == want, "GET / answered in one segment with httpd's bytes")
check(answer.ack == c.snd_nxt and answer.seq == c.rcv_nxt and not answer.flags & FIN,
      "the answer acknowledges the request, at the next sequence number, no FIN")
c.send(request, seq=start)  # as if the answer had been lost
again = first(c, lambda s: s.payload)
check(again is not None and again.payload == want and again.seq == answer.seq and again.ack == answer.ack,
      "the request sent again: the same answer again")
c.send(b"", flags=ACK | FIN)
fin = first(c, lambda s: s.flags & FIN)
check(fin is not None and fin.flags & ACK and fin.ack == c.snd_nxt and not fin.payload,
      "the client's FIN answered with FIN-ACK")
c.reset()

split = Connection(link, port)
split.connect()
split.send(b"GET / HTTP/1.1\r\n")
split.poll(5, until=lambda: split.reset_by_peer)
check(split.reset_by_peer, "half a request head: reset")

# Hostile: each is dropped and counted (the shell reads the counters).
bad = Connection(link, port)
bad.segment(bad.iss, 0, SYN, 65535, options=b"\x01\x01\x02\x04")  # MSS runs past the header
seg = struct.pack("!HHIIBBHHH", bad.sport, port, 1, 0, 5 << 4, SYN, 65535, 0, 0)
pseudo = link.my_ip + link.peer_ip + struct.pack("!BBH", 0, 6, len(seg))
seg = seg[:16] + struct.pack("!H", checksum(pseudo + seg) ^ 0x5a5a) + seg[18:]
link.send_ip(6, seg)                                                # a bad checksum
link.send_ip(17, struct.pack("!HHHH", 4000, port, 8, 0))            # UDP: not TCP
link.sock.send(link.peer_mac + link.my_mac + b"\x08\x00" + b"\x45\x00")  # 16 bytes: short
link.read(0.5)
stray = [s for s in link.pending if s.dport == bad.sport]
check(not stray, "no answer to the hostile frames")
PY
after=$(counters)
echo "before: $mid"
echo "after:  $after"
for what in 'arp replies ' 'resets in ' 'refused [0-9]+ \(split ' 'options ' 'checksum ' 'not tcp ' 'short ' 'fin-acks '; do
	b=$(count "$mid" "$what") a=$(count "$after" "$what")
	[ -n "$a" ] && [ -n "$b" ] || die "no counter '$what'"
	[ $((a - b)) -ge 1 ] || die "'$what' did not move ($b -> $a)"
	echo "   counted: $what+$((a - b))"
done
"${NET_EXEC[@]}" curl -s -m 5 "$url/" >"$tmp/got" && [ "$(wc -c <"$tmp/got")" = 41 ] || die "no answer after the frames"

echo "== idle: the floor parks"
pct=$(cpu_share "$(cat "$tmp/qemu.pid")" 3)
echo "   QEMU used $pct% of a core in 3 s"
awk -v p="$pct" 'BEGIN { exit !(p < 3.0) }' || die "QEMU used $pct% of a core while the floor was idle"

echo "== shutdown request"
"${NET_EXEC[@]}" curl -s -m 5 "$url/__shutdown" >"$tmp/got" || die "no answer to the shutdown request"
[ "$(cat "$tmp/got")" = "shutting down" ] || die "not httpd's shutdown answer: $(cat "$tmp/got")"
guest_wait_exit 290 # qemu-run's --timeout ends it before
rc=$GUEST_RC
console
[ "$rc" = 0 ] || fail "exit status $rc after the shutdown request"
console | grep -E '^floor: frames in [0-9]+ out [0-9]+; arp replies [1-9]' | tail -n 1 | contains . ||
	fail "no counters at exit"
console | contains '^panic:' && fail "the floor panicked"

# other_backend BACKEND: the floor over QEMU's user networking or passt, through
# a forwarded port at slirp's addresses: the network line the benchmark
# waits for, GET / byte for byte, ab -k -c 1 -n 500, the shutdown's status 0.
other_backend() {
	local backend=$1 port u
	echo "== $backend back-end"
	port=$(free_port) || fail "no free port"
	u=http://127.0.0.1:$port
	guest_start "$tmp/console" "$tmp/qemu.pid" "$QEMU_RUN" --net "$backend" --hostfwd "$port:$PORT" --timeout 120 \
		--append "ip=10.0.2.15 gw=10.0.2.2 mask=255.255.255.0 -- -p $PORT -q -s" "$LOADER" "$IMAGE"
	guest_wait_console "$tmp/console" '^net: .* ip ' 60 || { console; fail "no network line ($backend)"; }
	guest_wait_http "$u/" 60 || { console; fail "no HTTP answer over $backend"; }
	curl -s -i -m 5 "$u/" >"$tmp/got"
	expect_file "$tmp/got" "$tmp/want"
	ab_keepalive "$u/" 500 1 || { console; fail "ab -k -c 1 over $backend"; }
	curl -s -m 5 "$u/__shutdown" >/dev/null
	guest_wait_exit 130 || { console; fail "still running after the shutdown request ($backend)"; }
	console | tail -n 3
	[ "$GUEST_RC" = 0 ] || fail "exit status $GUEST_RC after the shutdown request ($backend)"
}
netns_destroy "$NET_NS"
NET_EXEC=()
other_backend user
if command -v passt >/dev/null; then
	other_backend passt
else
	echo "== passt back-end: passt not installed, not tried"
fi
echo "all good"
