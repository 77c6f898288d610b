#!/usr/bin/env bash
# 46-iperf-uk-tap: the unikernel's iperf3 server (build/apps/iperf.elf, the
# same source as test 45's) on the tap back-end against Debian's iperf3 -c:
# 256 MiB up and down, byte for byte, iperf3's counts (its --json) equal to
# the server's own line; four streams each way; 256-byte writes with -N.
# Then the shutdown cookie: exit status 0, every test counted as done,
# nothing else counted, and every socket freed.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/iperf.sh"
iperf_uk_boot tap 280 "%NET% -- -s"

M=$((1024 * 1024))
iperf_both_ways "--bytes $((256 * M))" -n 256M
iperf_both_ways "--bytes $((64 * M)) --streams 4" -n 64M -P 4
iperf_both_ways "--bytes $((8 * M)) --len 256" -n 8M -l 256 -N

iperf_uk_stop 'tests 6, done 6, refused 0, client terminated 0; bad cookie 0, bad length 0, bad json 0, bad state 0, busy 0, timed out 0, closed early 0, socket errors 0' \
	'resets 0;'
iperf_console | contains '^iperf: stopped (shutdown request)$' || fail "no clean stop"
echo "all good"
