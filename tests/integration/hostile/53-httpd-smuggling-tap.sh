#!/usr/bin/env bash
# 53-httpd-smuggling-tap: request bodies whose lengths pass 2^64 (issue 36):
# the finding's Content-Length 18446744073709551620 and chunk sizes
# 40000000000000000 (2^66) and 10000000000000005, each followed by a request
# (GET /bytes/7) hidden where a length wrapped modulo 2^64 would end the body.
# Against httpd natively (127.0.0.1), then in the unikernel on tap: each gets
# exactly one answer, 413 with Connection: close, byte for byte, and then the
# connection is closed, so the hidden request is never answered. The server
# answers GET / afterwards, and stops on a shutdown request with exit status
# 0 (the unikernel with every socket freed).
# HTTPD and HTTPD_IMAGE name other builds to test (e.g. an older parser's).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
httpd=${HTTPD:-$ROOT/$BUILD/host/httpd} IMAGE=${HTTPD_IMAGE:-$ROOT/$BUILD/apps/httpd.elf}
[ -x "$httpd" ] || fail "no $httpd"
[ -f "$IMAGE" ] || fail "no $IMAGE"
command -v curl >/dev/null || skip "curl missing"
tmp=$(mktemp -d)
hpid=""
trap '[ -n "$hpid" ] && kill "$hpid" 2>/dev/null; rm -rf "$tmp"' EXIT

hidden='GET /bytes/7 HTTP/1.1\r\nHost: t\r\n\r\n'
requests=(
	"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 18446744073709551620\r\n\r\nABCD$hidden"
	"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n40000000000000000\r\n\r\n$hidden"
	"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n$hidden"
)
names=("Content-Length 2^64+4" "chunk size 2^66" "chunk size 2^64+5")
printf 'HTTP/1.1 413 Content Too Large\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 23\r\nConnection: close\r\n\r\nrequest body too large\n' >"$tmp/want413"
printf 'HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n\r\nHello from httpd, a poll()-based server.\n' >"$tmp/wanthello"

# exchange HOST PORT OUT REQUEST: through $NET_EXEC, send REQUEST (printf %b)
# in one write and save everything received until the server closes (10 s at
# most). The status: 0 closed, 124 still open then.
exchange() {
	"${NET_EXEC[@]}" timeout 10 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 2
		printf "%b" "$2" >&3
		cat <&3' "$1" "$2" "$4" >"$3"
}

# smuggling HOST PORT: the three requests, each on a connection of its own.
smuggling() {
	local host=$1 port=$2 i rc
	for i in "${!requests[@]}"; do
		exchange "$host" "$port" "$tmp/got" "${requests[$i]}"
		rc=$?
		expect_file "$tmp/got" "$tmp/want413"
		[ $rc = 124 ] && fail "${names[$i]}: the connection stayed open after the 413"
		[ $rc = 0 ] || fail "${names[$i]}: exchange failed (status $rc)"
		echo "${names[$i]}: one answer, 413, and the connection closed"
	done
	"${NET_EXEC[@]}" curl -s -i -m 10 "http://$host:$port/" >"$tmp/got"
	expect_file "$tmp/got" "$tmp/wanthello"
	echo "GET / afterwards: 200"
}

echo "== native"
port=$(free_port)
"$httpd" -a 127.0.0.1 -p "$port" -s >"$tmp/native.log" 2>&1 &
hpid=$!
guest_wait_http "http://127.0.0.1:$port/" 10 "$hpid" || fail "httpd did not answer: $(cat "$tmp/native.log")"
smuggling 127.0.0.1 "$port"
curl -s -m 5 "http://127.0.0.1:$port/__shutdown" >/dev/null
wait "$hpid"
rc=$?
hpid=""
[ $rc = 0 ] || fail "native: exit status $rc: $(cat "$tmp/native.log")"

echo "== unikernel, tap"
netns_usable || skip "tap back-end needs root, ip and /dev/net/tun (native part passed)"
uk_tap_start "$IMAGE" "-p 80 -s"
trap 'guest_kill; netns_destroy "$NET_NS"; rm -rf "$UK_TMP" "$tmp"' EXIT
guest_wait_http "$UK_URL/" 60 "$UK_PID" || { cat "$UK_TMP/console"; fail "no HTTP answer"; }
smuggling "$NETNS_GUEST_IP" 80
uk_tap_stop >/dev/null
[ "$UK_RC" = 0 ] || { cat "$UK_TMP/console"; fail "tap: exit status $UK_RC"; }
grep -Eq '^sockets: open 0,' "$UK_TMP/console" || { cat "$UK_TMP/console"; fail "tap: sockets left open"; }
echo "all good"
