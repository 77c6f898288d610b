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
IMAGE=$ROOT/$BUILD/apps/iperf.elf LOADER=$ROOT/$BUILD/loader/loader.elf
[ -f "$IMAGE" ] || fail "no $IMAGE"
command -v iperf3 >/dev/null || skip "iperf3 missing"

iperf_boot tap 280 "$LOADER" "$IMAGE" "%NET% -- -s"
iperf_wait_listening 60

M=$((1024 * 1024))
iperf_transfer "--bytes $((256 * M))" -n 256M
iperf_transfer "--bytes $((256 * M)) --reverse" -n 256M -R
iperf_transfer "--bytes $((64 * M)) --streams 4" -n 64M -P 4
iperf_transfer "--bytes $((64 * M)) --streams 4 --reverse" -n 64M -P 4 -R
iperf_transfer "--bytes $((8 * M)) --len 256" -n 8M -l 256 -N
iperf_transfer "--bytes $((8 * M)) --len 256 --reverse" -n 8M -l 256 -N -R

iperf_guest_stop
iperf_console | grep -vE '^iperf: test [0-9]+ from .*: (upload|download)'
[ "$IPERF_RC" = 0 ] || fail "exit status $IPERF_RC after the shutdown cookie"
iperf_counters | contains -E '^iperf: tests 6, done 6, refused 0, client terminated 0; bad cookie 0, bad length 0, bad json 0, bad state 0, busy 0, timed out 0, closed early 0, socket errors 0$' ||
	fail "counters: $(iperf_counters)"
iperf_console | contains '^iperf: stopped (shutdown request)$' || fail "no clean stop"
iperf_console | contains -E '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' ||
	fail "sockets left open, overflows or resets"
echo "all good"
