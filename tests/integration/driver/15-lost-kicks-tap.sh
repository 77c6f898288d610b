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
needs ab curl
UK_TIMEOUT=200
uk_tap_serve "$ROOT/$BUILD/apps/httpd.elf" "-p 80 -s" "vnet_drop_kicks=3 ${LOST_KICKS_OPTS:-}"
ab_load "$UK_URL/" 3000 8 -k || { cat "$UK_TMP/console"; fail "ab -k with notifications dropped"; }
ab_load "$UK_URL/" 1000 1 -k || { cat "$UK_TMP/console"; fail "ab -k -c 1 with notifications dropped"; }
ab_load "$UK_URL/" 500 4 || { cat "$UK_TMP/console"; fail "ab (new connections) with notifications dropped"; }
uk_tap_stop
[ "$UK_RC" = 0 ] || fail "exit status $UK_RC after the shutdown request"

line=$(grep '^virtio-net: rx lost kicks repaired' "$UK_TMP/console") || fail "no notification counters"
read -r rx tx wd wlost dropped <<<"$(sed -E 's/.*rx lost kicks repaired ([0-9]+); tx lost kicks repaired ([0-9]+); tx watchdog kicks ([0-9]+) \(lost ([0-9]+), late [0-9]+\);.*kicks dropped ([0-9]+); repair (on|off); barrier (read|fence) \(reads [0-9]+\)$/\1 \2 \3 \4 \5/' <<<"$line")"
case "$rx$tx$wd$wlost$dropped" in *[!0-9]* | "") fail "cannot read: $line" ;; esac
echo "kicks dropped $dropped; lost kicks repaired rx $rx tx $tx; tx watchdog kicks $wd (lost $wlost)"
[ "$dropped" -ge 10 ] || fail "only $dropped notifications dropped: the injection did not work"
[ $((10 * (rx + tx))) -ge $((9 * dropped)) ] || fail "$dropped notifications dropped, only $((rx + tx)) repaired"
[ "$wlost" = 0 ] || fail "the watchdog found $wlost lost notifications the repair missed"
grep -Eq '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' "$UK_TMP/console" ||
	fail "sockets left open, overflows or resets"
echo "all good"
