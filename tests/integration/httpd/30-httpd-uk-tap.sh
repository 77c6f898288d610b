#!/usr/bin/env bash
# The unikernel's httpd (apps/httpd, the same source as the Linux guest's) on
# the tap back-end: GET / byte for byte, then the loads, each with zero
# failed requests: ab -k at 1, 8 and 64 connections, and new connections at 16
# (the long run makes the client reuse ports the guest still holds in
# TIME_WAIT). Then a shutdown request: exit status 0 and the counters printed,
# with every socket freed.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
IMAGE=$ROOT/$BUILD/apps/httpd.elf LOADER=$ROOT/$BUILD/loader/loader.elf
[ -f "$IMAGE" ] || fail "no $IMAGE"
netns_usable || skip "tap back-end needs root, ip and /dev/net/tun"
command -v ab >/dev/null && command -v curl >/dev/null || skip "ab or curl missing"
NS=uktest-$$
tmp=$(mktemp -d)
trap 'guest_kill; netns_destroy "$NS"; rm -rf "$tmp"' EXIT
netns_create "$NS" || skip "cannot create a network namespace here"
NET_EXEC=(ip netns exec "$NS")
url=http://$NETNS_GUEST_IP

# The guest's console input: Ctrl-T there prints its counters.
guest_console_in "$tmp/stdin" || fail "no fifo for the console"
guest_start "$tmp/console" "" "${NET_EXEC[@]}" "$QEMU_RUN" --net tap --tap "$NETNS_TAP" --timeout 400 \
	--append "ip=$NETNS_GUEST_IP gw=$NETNS_HOST_IP mask=$NETNS_MASK -- -p 80 -s" "$LOADER" "$IMAGE"

# On a failure, show what the guest's counters say before giving up.
guest_fail() {
	printf '\x14' >&"$GUEST_CONSOLE_FD"
	sleep 2
	echo "---- guest console (Ctrl-T sent) ----"
	tr -d '\r' <"$tmp/console"
	fail "$@"
}
guest_wait_http "$url/" 60 || { cat "$tmp/console"; fail "no HTTP answer from the unikernel"; }

"${NET_EXEC[@]}" curl -s -i "$url/" >"$tmp/got"
printf 'HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n\r\nHello from httpd, a poll()-based server.\n' >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

load() { # N C [-k]
	ab_load "$url/" "$@" || guest_fail "ab $*"
}
load 2000 1 -k
load 4000 8 -k
load 4000 64 -k
load 1000 16
load 20000 16

"${NET_EXEC[@]}" curl -s -m 5 "$url/__shutdown" >/dev/null
guest_wait_exit 410 # qemu-run's --timeout ends it before
rc=$GUEST_RC
tr -d '\r' <"$tmp/console" >"$tmp/console.txt" && mv "$tmp/console.txt" "$tmp/console"
cat "$tmp/console"
[ $rc = 0 ] || fail "exit status $rc after the shutdown request"
grep -q '^httpd: stopped (shutdown request)$' "$tmp/console" || fail "no clean stop"
grep -Eq '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' "$tmp/console" ||
	fail "sockets left open, overflows or resets"
grep -Eq '^kernel: uptime [0-9]+ ms;' "$tmp/console" || fail "no kernel counters"
echo "all good"
