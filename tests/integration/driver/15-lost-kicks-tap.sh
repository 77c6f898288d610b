#!/usr/bin/env bash
# Lost notifications repaired on QEMU's real virtio-net (issue 12). The
# driver leaves one in three of the notifications it decides to send unsent
# (fault injection, kernel option vnet_drop_kicks=3): the state each leaves
# is the state the issue's race leaves, a device waiting for an entry we
# published without a notify. Under ab load on the tap back-end every
# request must still be answered, the dropped notifications repaired from
# the rings' state, none left to the watchdog (its "lost" count 0), and the
# exit clean. A dropped notify the device turned out not to need (its own
# re-check, going back to waiting, had seen the entry) leaves nothing to
# repair, so at least 9 in 10 must be repaired, not all; every other one is
# the watchdog's 2 ms later, counted lost, with the repair off
# (vnet_repair=0), so this fails there.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
IMAGE=$ROOT/$BUILD/apps/httpd.elf LOADER=$ROOT/$BUILD/loader/loader.elf
[ -f "$IMAGE" ] || fail "no $IMAGE"
netns_usable || skip "tap back-end needs root, ip and /dev/net/tun"
command -v ab >/dev/null && command -v curl >/dev/null || skip "ab or curl missing"
NS=lostkick-$$
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; netns_destroy "$NS"; rm -rf "$tmp"' EXIT
netns_create "$NS" || skip "cannot create a network namespace here"
NET_EXEC=(ip netns exec "$NS")
url=http://$NETNS_GUEST_IP

"${NET_EXEC[@]}" "$QEMU_RUN" --net tap --tap "$NETNS_TAP" --timeout 200 \
	--append "ip=$NETNS_GUEST_IP gw=$NETNS_HOST_IP mask=$NETNS_MASK vnet_drop_kicks=3 ${LOST_KICKS_OPTS:-} -- -p 80 -s" \
	"$LOADER" "$IMAGE" </dev/null >"$tmp/console" 2>&1 &
pid=$!
guest_wait_http "$url/" 60 "$pid" || { cat "$tmp/console"; fail "no HTTP answer from the unikernel"; }
ab_load "$url/" 3000 8 -k || { cat "$tmp/console"; fail "ab -k with notifications dropped"; }
ab_load "$url/" 1000 1 -k || { cat "$tmp/console"; fail "ab -k -c 1 with notifications dropped"; }
ab_load "$url/" 500 4 || { cat "$tmp/console"; fail "ab (new connections) with notifications dropped"; }
"${NET_EXEC[@]}" curl -s -m 5 "$url/__shutdown" >/dev/null
wait "$pid"
rc=$?
pid=""
tr -d '\r' <"$tmp/console" >"$tmp/c" && mv "$tmp/c" "$tmp/console"
cat "$tmp/console"
[ $rc = 0 ] || fail "exit status $rc after the shutdown request"

line=$(grep '^virtio-net: rx lost kicks repaired' "$tmp/console") || fail "no notification counters"
read -r rx tx wd wlost dropped <<<"$(sed -E 's/.*rx lost kicks repaired ([0-9]+); tx lost kicks repaired ([0-9]+); tx watchdog kicks ([0-9]+) \(lost ([0-9]+), late [0-9]+\);.*kicks dropped ([0-9]+); repair (on|off); barrier (read|fence) \(reads [0-9]+\)$/\1 \2 \3 \4 \5/' <<<"$line")"
case "$rx$tx$wd$wlost$dropped" in *[!0-9]* | "") fail "cannot read: $line" ;; esac
echo "kicks dropped $dropped; lost kicks repaired rx $rx tx $tx; tx watchdog kicks $wd (lost $wlost)"
[ "$dropped" -ge 10 ] || fail "only $dropped notifications dropped: the injection did not work"
[ $((10 * (rx + tx))) -ge $((9 * dropped)) ] || fail "$dropped notifications dropped, only $((rx + tx)) repaired"
[ "$wlost" = 0 ] || fail "the watchdog found $wlost lost notifications the repair missed"
grep -Eq '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' "$tmp/console" ||
	fail "sockets left open, overflows or resets"
echo "all good"
