#!/usr/bin/env bash
# The unikernel's httpd on the user back-end (what `make run` uses), with its
# address from QEMU's DHCP and the fixed spin TCG wants: a fetch through the
# forwarded port, a short keep-alive load (every request completed with a 2xx
# answer, ab exiting 0), then 5 s of idle during which QEMU must use almost no CPU
# (the guest parks in hlt; only lwIP's slow timers wake it).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
uk_test httpd curl ab
port=$(free_port)
url=http://127.0.0.1:$port

guest_start "$tmp/console" "$tmp/qemu.pid" "$QEMU_RUN" --net user --hostfwd "$port:80" --timeout 120 \
	"${DESIGN_QEMU[@]}" --append "verbose $DESIGN_KOPTS -- -p 80 -s" "$LOADER" "$IMAGE"
guest_wait_http "$url/" 60 || { cat "$tmp/console"; fail "no HTTP answer"; }
# Under TCG the spin neither grows nor relaxes with PAUSE (kernel/executor.c).
tr -d '\r' <"$tmp/console" | contains -x 'executor: spin 250 us (at most 250), relax barrier (hypervisor TCG)' ||
	{ cat "$tmp/console"; fail "not the spin TCG wants"; }
tr -d '\r' <"$tmp/console" | contains -E '^net: 52:54:00:12:34:56 ip 10\.0\.2\.15/24 gw 10\.0\.2\.2 \(dhcp\)$' ||
	{ cat "$tmp/console"; fail "no DHCP address line"; }

expect_get "$url/" "$tmp/got" "$HTTPD_HELLO"
# ab_load: ab's exit status 0, all 1000 complete, none failed, none non-2xx.
ab_load "$url/" 1000 8 -k || { cat "$tmp/console"; fail "ab -k: did not finish, or incomplete, failed or non-2xx requests"; }

# Idle: QEMU's CPU time (user + system ticks) over 5 s.
sleep 1
pct=$(cpu_share "$GUEST_QEMU_PID" 5)
echo "idle: QEMU used $pct% of a core in 5 s"
awk -v p="$pct" 'BEGIN { exit !(p < 3.0) }' || fail "QEMU used $pct% of a core while the guest was idle"

curl -s -m 5 "$url/__shutdown" >/dev/null
guest_wait_exit 130 # qemu-run's --timeout ends it before
rc=$GUEST_RC
tr -d '\r' <"$tmp/console"
[ $rc = 0 ] || fail "exit status $rc after the shutdown request"
# Under TCG a notify costs no exit: no reply waits in a timed hold.
tr -d '\r' <"$tmp/console" | contains -x 'virtio-net: tx timed holds 0 (joined 0, expired 0); hold off' ||
	fail "a timed hold under TCG"
echo "all good"
