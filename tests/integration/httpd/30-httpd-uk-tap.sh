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
needs ab curl
# The guest's console input: Ctrl-T there prints its counters.
UK_TIMEOUT=400 UK_CONSOLE_IN=1
uk_tap_serve "$ROOT/$BUILD/apps/httpd.elf" "-p 80 -s"
url=$UK_URL

# On a failure, show what the guest's counters say before giving up.
guest_fail() {
	printf '\x14' >&"$GUEST_CONSOLE_FD"
	sleep 2
	echo "---- guest console (Ctrl-T sent) ----"
	tr -d '\r' <"$UK_TMP/console"
	fail "$@"
}

expect_get "$url/" "$UK_TMP/got" "$HTTPD_HELLO"

load() { # N C [-k]
	ab_load "$url/" "$@" || guest_fail "ab $*"
}
load 2000 1 -k
load 4000 8 -k
load 4000 64 -k
load 1000 16
load 20000 16

uk_tap_stop
[ "$UK_RC" = 0 ] || fail "exit status $UK_RC after the shutdown request"
grep -q '^httpd: stopped (shutdown request)$' "$UK_TMP/console" || fail "no clean stop"
grep -Eq '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' "$UK_TMP/console" ||
	fail "sockets left open, overflows or resets"
grep -Eq '^kernel: uptime [0-9]+ ms;' "$UK_TMP/console" || fail "no kernel counters"
echo "all good"
