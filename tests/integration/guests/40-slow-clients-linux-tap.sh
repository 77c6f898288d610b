#!/usr/bin/env bash
# 40-slow-clients-linux-tap: test 39's slowhttptest attacks against the
# Linux guest, which runs the same httpd (bench/linux), on tap, a fresh boot
# for each. The first only by default (slowloris at 1,000 connections: the
# comparison guest's check, a third of the time; SLOW_ALL=1 runs the three,
# SLOW_ONLY=MODE one of them): the same probes must be answered in time, the same counters must
# show the deadline closes and evictions. Linux gives the guest's init 1,024
# descriptors, so httpd serves at most 1,020 connections there (it says so
# and counts "out of descriptors"); past that it evicts as at its own limit.
# After each attack, load is clean, and GET /__shutdown ends the guest with
# httpd's status 0. Each run prints a "figures:" line.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/slow.sh"
linux_test slowhttptest ab curl python3
tap_netns lgs
url=http://$NETNS_GUEST_IP

modes=${SLOW_ONLY:-${SLOW_MODES%% *}}
[ -n "${SLOW_ALL:-}" ] && modes=$SLOW_MODES
for mode in $modes; do
	slow_mode "$mode"
	echo "== $mode"
	rm -f "$tmp/qemu.pid"
	"${NET_EXEC[@]}" "$QEMU_RUN" --net tap --tap "$NETNS_TAP" --timeout 250 \
		--append "console=ttyS0 quiet panic=-1 $NETNS_GUEST_NET -- -p 80 -s" \
		"$LG_KERNEL" "$LG_INITRD" -- -pidfile "$tmp/qemu.pid" </dev/null >"$tmp/console" 2>&1 &
	pid=$!
	guest_wait_http "$url/" 150 "$pid" || { cat "$tmp/console"; fail "no HTTP answer from the Linux guest"; }
	ab_load "$url/" 200 8 -k || fail "warm-up load failed"

	slow_attack "$NETNS_GUEST_IP" 80 || { tail -n 20 "$tmp/console"; fail "$mode: $SLOW_FAILED"; }
	sleep 2
	ab_load "$url/" 1000 16 || fail "$mode: load after the attack failed"

	"${NET_EXEC[@]}" curl -s -m 5 "$url/__shutdown" >/dev/null
	wait "$pid"
	rc=$?
	pid=""
	[ $rc = 0 ] || { tail -n 30 "$tmp/console"; fail "$mode: qemu-run returned $rc, not httpd's 0"; }
	line=$(tr -d '\r' <"$tmp/console" | grep '^httpd: accepted' | tail -n 1)
	echo "$line"
	slow_check "$mode" "$line"
	slow_figures linux "$mode" "$line"
done
echo "all good"
