#!/usr/bin/env bash
# 47-iperf-uk-user: the unikernel's iperf3 server on the user back-end (what
# `make run RUN_APP=iperf` uses: QEMU's slirp, a host port forwarded to 5201,
# the address from DHCP): 256 MiB up and down, byte for byte, iperf3's
# counts equal to the server's; then the shutdown cookie and a clean exit.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/iperf.sh"
IMAGE=$ROOT/$BUILD/apps/iperf.elf LOADER=$ROOT/$BUILD/loader/loader.elf
[ -f "$IMAGE" ] || fail "no $IMAGE"
command -v iperf3 >/dev/null || skip "iperf3 missing"

iperf_boot user 200 "$LOADER" "$IMAGE" "-- -s"
iperf_wait_listening 60
iperf_console | contains -E '^net: .* \(dhcp\)$' || { iperf_console; fail "no DHCP address line"; }

M=$((1024 * 1024))
iperf_transfer "--bytes $((256 * M))" -n 256M
iperf_transfer "--bytes $((256 * M)) --reverse" -n 256M -R

iperf_guest_stop
iperf_console | grep -vE '^iperf: test [0-9]+ from .*: (upload|download)'
[ "$IPERF_RC" = 0 ] || fail "exit status $IPERF_RC after the shutdown cookie"
iperf_counters | contains -E '^iperf: tests 2, done 2, refused 0, client terminated 0; bad cookie 0, bad length 0, bad json 0, bad state 0, busy 0, timed out 0, closed early 0, socket errors 0$' ||
	fail "counters: $(iperf_counters)"
iperf_console | contains -E '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' ||
	fail "sockets left open, overflows or resets"
echo "all good"
