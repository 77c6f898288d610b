#!/usr/bin/env bash
# The global-lock design (make VARIANT=smp-lock) on two vCPUs under TCG
# (MTTCG), tap: CPU 1 runs the network, CPU 0 httpd. GET / byte for byte,
# ab -k -c 8 and ab -c 16 with zero failed requests, a clean exit with every
# socket closed, and the counters consistent (lib/smp_lock_counters.py: no
# more IPIs received than sent, more lock acquisitions than requests, no wake
# counted as ending a park more often than one was sent). Prints acquisitions, contended
# acquisitions and IPIs per request.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
needs ab curl
image=$ROOT/$BUILD/apps/httpd-smp-lock.elf
[ -f "$image" ] || fail "no $image: make VARIANT=smp-lock"
UK_TIMEOUT=400 UK_QEMU_OPTS="--smp 2"
uk_tap_serve "$image" "-p 80 -s" "smp=2"
url=$UK_URL
grep -q '^net: global lock' "$UK_TMP/console" && fail "counters printed before exit?"

expect_get "$url/" "$UK_TMP/got" "$HTTPD_HELLO"
requests=1
ab_load "$url/" 4000 8 -k || fail "ab -k -c 8"
ab_load "$url/" 2000 16 || fail "ab -c 16"
requests=$((requests + 6000))

uk_tap_stop
c=$UK_TMP/console
[ "$UK_RC" = 0 ] || fail "exit status $UK_RC after the shutdown request"
grep -q '^httpd: stopped (shutdown request)$' "$c" || fail "no clean stop"
grep -Eq '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' "$c" ||
	fail "sockets left open, overflows or resets"
grep -q '^net: global lock: network on cpu 1;' "$c" || fail "the network did not run on CPU 1"
exec python3 "$ROOT/tests/integration/lib/smp_lock_counters.py" "$c" "$requests"
