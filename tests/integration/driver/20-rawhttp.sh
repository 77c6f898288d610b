#!/usr/bin/env bash
# 20-rawhttp: NIC -> lwIP -> TCP -> NIC under QEMU's user network. Boots the
# rawhttp image (raw-API server, address by DHCP) with a host port forwarded
# to its port 80, then: the response byte for byte (curl), raw exchanges
# (HTTP/1.0 close, keep-alive as ab sends it, a request split across writes,
# pipelined requests, malformed and over-long requests), a bounded ab with
# and without keep-alive (every request completed, 0 failed, no non-2xx
# answer), and the shutdown request, after which
# QEMU must return the app's 0 and the network counters must be printed.
# Traffic goes only to 127.0.0.1.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
uk_test rawhttp curl ab

# The serial console ends lines with CR LF. (Its greps read all of it, not
# -q: an early exit would fail the pipe under pipefail.)
console() { tr -d '\r' <"$tmp/console"; }
show_console() { echo "---- console"; console; }
die() { show_console; fail "$*"; }

# Boot; a port someone took meanwhile makes QEMU fail at once: try another.
for attempt in 1 2 3; do
	port=$(free_port)
	echo "== booting rawhttp, 127.0.0.1:$port -> guest port 80 (attempt $attempt)"
	"$QEMU_RUN" --timeout 240 --net user --hostfwd "$port:80" --append "-- 80" \
		"$LOADER" "$IMAGE" </dev/null >"$tmp/console" 2>&1 &
	pid=$!
	end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null &&
		! console | grep '^rawhttp: listening on port 80$' >/dev/null; do
		sleep 0.2
	done
	console | grep '^rawhttp: listening on port 80$' >/dev/null && break
	kill "$pid" 2>/dev/null; wait "$pid"; pid=""
	console | grep 'Could not set up host forwarding' >/dev/null || die "rawhttp did not start listening"
done
[ -n "$pid" ] || die "no free port to forward"
console | grep -E '^net: 52:54:00:12:34:56 ip 10\.0\.2\.15/24 gw 10\.0\.2\.2 \(dhcp\)$' >/dev/null ||
	die "no DHCP configuration line"
url=http://127.0.0.1:$port

BODY='Hello from rawhttp, a raw-API lwIP test.\n'
HEAD='HTTP/1.1 200 OK\r\nServer: rawhttp\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n'
KEEP="${HEAD}Connection: keep-alive\r\n\r\n$BODY"
CLOSE="${HEAD}Connection: close\r\n\r\n$BODY"

echo "== curl GET /"
curl -s -i -m 10 "$url/" >"$tmp/got" || die "curl failed"
printf "$KEEP" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

echo "== GET /__pieces: one segment of more pbufs than a frame takes (flattened by the netif)"
curl -s -i -m 10 "$url/__pieces" >"$tmp/got" || die "curl failed"
expect_file "$tmp/got" "$tmp/want"

echo "== HTTP/1.0 without keep-alive: answered, then closed by the server"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.0\r\n\r\n'
printf "$CLOSE" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

echo "== keep-alive as ab sends it, a request split across writes, then close"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n' 'GE' 'T /x HTTP/1.1\r\nHo' \
	'st: h\r\n\r' '\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n'
printf "$KEEP$KEEP$CLOSE" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

echo "== pipelined requests in one write"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.1\r\n\r\nGET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nConnection: close\r\n\r\n'
printf "$KEEP$KEEP$CLOSE" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

echo "== malformed and over-long requests: connection closed, nothing answered"
raw_exchange "$port" "$tmp/got" 'POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n'
[ ! -s "$tmp/got" ] || die "POST was answered: $(cat "$tmp/got")"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/2.0\r\n\r\n'
[ ! -s "$tmp/got" ] || die "a bad version was answered"
raw_exchange "$port" "$tmp/got" "GET /$(head -c 3000 /dev/zero | tr '\0' a) HTTP/1.1\r\n\r\n"
[ ! -s "$tmp/got" ] || die "an over-long request was answered"
curl -s -m 10 "$url/" >"$tmp/got" && [ "$(wc -c <"$tmp/got")" = 41 ] || die "no answer after bad requests"

ab_load "$url/" 2000 8 -k || die "ab -k -c 8 failed"
ab_load "$url/" 300 1 || die "ab -c 1 failed"

echo "== shutdown request"
curl -s -i -m 10 "$url/__shutdown" >"$tmp/got" || die "no answer to the shutdown request"
printf "$KEEP" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"
wait "$pid"
rc=$?
pid=""
show_console
[ $rc = 0 ] || fail "qemu-run returned $rc, not the app's 0"
line=$(console | grep -E '^net: frames in [0-9]+ \([0-9]+ bytes\) out [0-9]+ ') || fail "no network counters at exit"
read -r fin fout < <(sed -E 's/^net: frames in ([0-9]+) .* out ([0-9]+) .*/\1 \2/' <<<"$line")
[ "$fin" -gt 2300 ] && [ "$fout" -gt 2300 ] || fail "too few frames counted: in $fin out $fout"
console | grep -E '^rawhttp: [0-9]+ connections, 23[0-9][0-9] requests, 2 bad, 1 too long, 0 refused' >/dev/null ||
	fail "rawhttp's own counters are off"
console | grep -E '^net: drops: rx no-pbuf 0 too-long 0 refused 0; tx ring-full 0 no-pbuf 0 invalid 0; tx flattened [1-9]' >/dev/null ||
	fail "frames were dropped, or the long chain was not flattened"
console | grep -E '^lwip tcp +xmit [0-9]+ recv [0-9]+ drop [0-9]+ chkerr 0 ' >/dev/null || fail "TCP checksum errors"
echo "all good"
