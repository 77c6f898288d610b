#!/usr/bin/env bash
# 47-iperf-uk-user: the unikernel's iperf3 server on the user back-end (what
# `make run RUN_APP=iperf` uses: QEMU's slirp, a host port forwarded to 5201,
# the address from DHCP): 256 MiB up and down, byte for byte, iperf3's
# counts equal to the server's; then the shutdown cookie and a clean exit.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/iperf.sh"
iperf_uk_boot user 200 "-- -s"
iperf_console | contains -E '^net: .* \(dhcp\)$' || { iperf_console; fail "no DHCP address line"; }

M=$((1024 * 1024))
iperf_both_ways "--bytes $((256 * M))" -n 256M

iperf_uk_stop 'tests 2, done 2, refused 0, client terminated 0; bad cookie 0, bad length 0, bad json 0, bad state 0, busy 0, timed out 0, closed early 0, socket errors 0' \
	'resets 0;'
echo "all good"
