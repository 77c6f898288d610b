#!/usr/bin/env bash
# 49-iperf-linux-tap: the Linux guest (build/linux/initrd-iperf.img) on the
# tap back-end, twice. First with our iperf3 server (init's app=iperf, the
# static build test 45 runs): transfers each way, four streams, 256-byte
# writes with -N, iperf3's counts equal to the server's own line, then the
# shutdown cookie, whose exit status 0 must come back through init and QEMU.
# Then with Debian's own iperf3 -s (app=iperf3, packed with its libraries):
# the same client against it, a check that our server flatters neither
# guest. iperf3's own server counts an upload only until TEST_END, and may
# send a write or more past -n on a download (its client stops counting at
# -n): so there the receiver may be short of the sender, who sent at least -n.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/iperf.sh"
KERNEL=$ROOT/$BUILD/linux/vmlinux INITRD=$ROOT/$BUILD/linux/initrd-iperf.img
[ -f "$KERNEL" ] && [ -f "$INITRD" ] || skip "Linux guest for iperf not built (make linux-iperf-guest)"
needs iperf3
LINUX="console=ttyS0 quiet panic=-1"
M=$((1024 * 1024))

echo "=== our server in the Linux guest"
iperf_boot tap 200 "$KERNEL" "$INITRD" "$LINUX app=iperf %NET% -- -s"
iperf_wait_listening 150
iperf_both_ways "--bytes $((64 * M))" -n 64M
iperf_transfer "--bytes $((32 * M)) --streams 4 --reverse" -n 32M -P 4 -R
iperf_transfer "--bytes $((4 * M)) --len 256" -n 4M -l 256 -N
iperf_guest_stop
iperf_console | grep -vE '^iperf: test [0-9]+ from .*: (upload|download)'
[ "$IPERF_RC" = 0 ] || fail "qemu-run returned $IPERF_RC, not the server's 0"
iperf_counters | contains -E '^iperf: tests 4, done 4, refused 0, client terminated 0; bad cookie 0, bad length 0, bad json 0, bad state 0, busy 0, timed out 0, closed early 0, socket errors 0$' ||
	fail "counters: $(iperf_counters)"
netns_destroy "$NET_NS"
rm -rf "$IPERF_TMP"

echo "=== Debian's iperf3 -s in the Linux guest"
iperf_boot tap 200 "$KERNEL" "$INITRD" "$LINUX app=iperf3 %NET% -- -s -p 5201"
guest_wait_console "$IPERF_CONSOLE" '^Server listening on 5201' 150 "$IPERF_PID" ||
	{ iperf_console; fail "iperf3 -s did not start in the guest"; }
iperf_client_only "--min-sent $((64 * M)) --receiver-may-lag" -n 64M
iperf_client_only "--min-sent $((64 * M)) --receiver-may-lag --reverse" -n 64M -R
iperf_client_only "--min-sent $((32 * M)) --receiver-may-lag --streams 4 --reverse" -n 32M -P 4 -R
kill -0 "$IPERF_PID" || { iperf_console; fail "the guest ended"; }
iperf_console | contains 'error' && { iperf_console; fail "iperf3 -s reported an error"; }
echo "all good"
