#!/usr/bin/env bash
# Floods against the unikernel's httpd (tap back-end):
#  1. 2,000 connections at once against a server whose pcb pool holds 1,152
#     and which serves 1,024 at a time (backlog 1,024): the excess is refused
#     or left unanswered at the handshake (counted), every connection that was
#     established gets its answer, and afterwards the server serves normally.
#  2. 20,000 raw SYNs from addresses nobody holds (they never complete the
#     handshake) fill the pcb pool with half-open connections, which lwIP
#     would keep for 20 s; the server evicts those older than 4 s for new
#     SYNs, so 5 s after the flood normal load has zero failures.
# Every socket is freed at the end.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
needs python3 ab curl
FLOOD=$ROOT/tests/integration/lib/flood.py
uk_tap_serve "$ROOT/$BUILD/apps/httpd.elf" "-p 80 -s"

show_fail() { uk_tap_stop >/dev/null; tail -n 30 "$UK_TMP/console"; fail "$@"; }

load() { # N C [-k]: N requests over C connections, zero failures
	ab_load "$UK_URL/" "$@" || show_fail "ab $*"
}

echo "== 2000 connections at once"
out=$("${NET_EXEC[@]}" python3 "$FLOOD" conns "$NETNS_GUEST_IP" 80 2000)
rc=$?
echo "$out"
[ $rc = 0 ] || show_fail "an established connection went unanswered"
read -r est ref tmo <<<"$(sed -n 's/.*established \([0-9]*\) refused \([0-9]*\) timed-out \([0-9]*\).*/\1 \2 \3/p' <<<"$out")"
[ "${est:-0}" -ge 1024 ] || show_fail "only ${est:-0} of 2000 established (the server serves 1024)"
[ $((ref + tmo)) -gt 0 ] || show_fail "all 2000 established: the pool limit was not reached"
sleep 3 # TIME_WAIT (2 s) of the answered connections runs out
load 2000 16
load 5000 8 -k

echo "== 20000 raw SYNs"
"${NET_EXEC[@]}" python3 "$FLOOD" syn "$NETNS_GUEST_IP" 80 20000 || show_fail "SYN flood tool failed"
load 2000 16
load 5000 8 -k

uk_tap_stop >/dev/null
grep -E '^(sockets:|net: drops|lwip tcp|pools:)' "$UK_TMP/console"
[ "$UK_RC" = 0 ] || fail "exit status $UK_RC"
grep -Eq '^sockets: open 0,' "$UK_TMP/console" || fail "sockets left open"
grep -Eq 'SYN_RCVD evicted [1-9]' "$UK_TMP/console" || fail "no half-open connection was evicted"
echo "all good"
