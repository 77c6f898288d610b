#!/usr/bin/env bash
# 54-iperf-uk-passt: the unikernel's iperf3 server on passt (`make run`'s
# default back-end): 64 MiB up and down, byte for byte, iperf3's counts equal
# to the server's; then the shutdown cookie and a clean exit. passt's one
# thread is slow to take the guest's frames while it writes the peer's, so
# an upload's ACKs find the transmit ring full: the counters must show pure
# ACKs merged (net/netif_ack.c), one per connection and burst, where each
# used to take a slot of the ring, and the full ring dropped them.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/iperf.sh"
command -v passt >/dev/null || skip "passt is not installed"
iperf_uk_boot passt 200 "-- -s"
iperf_console | contains -E '^net: .* \(dhcp\)$' || { iperf_console; fail "no DHCP address line"; }

M=$((1024 * 1024))
iperf_both_ways "--bytes $((64 * M))" -n 64M

iperf_uk_stop 'tests 2, done 2, refused 0, client terminated 0; bad cookie 0, bad length 0, bad json 0, bad state 0, busy 0, timed out 0, closed early 0, socket errors 0' \
	'resets 0;'
iperf_console | contains -E '^net: drops: .*; tx acks merged [1-9][0-9]*, waited [0-9]+;' ||
	fail "no pure ACK merged in an upload through passt: $(iperf_console | grep '^net: drops:')"
echo "all good"
