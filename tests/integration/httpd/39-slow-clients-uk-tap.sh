#!/usr/bin/env bash
# 39-slow-clients-uk-tap: slowhttptest against the unikernel's httpd on tap
# (issue 15), a fresh boot for each attack, with a normal client fetching /
# once a second all along (tests/integration/lib/slow.sh has the details):
#   slowloris-1000  1,000 slowloris connections, below the connection limit:
#                   every fetch answered (within the probe's 5 s); every head answered 408
#                   at the head deadline, nothing evicted;
#   slowloris-1500  1,500, past the limit (1,024) and the pcb pool (1,152):
#                   9 of 10 fetches answered; heads evicted for
#                   newcomers, the rest closed at the deadline;
#   slowread-500    500 readers of a 1 MiB answer through a window of a few
#                   hundred bytes: every fetch answered; each answer ended
#                   when it stopped moving.
# After each attack, once the guest is idle, its pools are back where they
# were before it (every pcb, segment, pbuf, socket and descriptor freed), and
# load is clean; at the shutdown, httpd's counters show the deadline closes
# and evictions. Each run prints a "figures:" line (docs/hardening.md quotes them).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/slow.sh"
IMAGE=$ROOT/$BUILD/apps/httpd.elf LOADER=$ROOT/$BUILD/loader/loader.elf
[ -f "$IMAGE" ] || fail "no $IMAGE"
design_image "$IMAGE" # under make test-smp, the design's build on its CPUs
IMAGE=$DESIGN_IMAGE
needs slowhttptest ab curl python3
tmp=$(mktemp -d)
pid=""
# A failing run keeps the guest's console (its counters, and at exit any
# socket left open) in the test's log.
trap 'rc=$?; [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null
	if [ $rc != 0 ] && [ -s "$tmp/console" ]; then
		echo "--- the guest console (last 60 lines)"; tr -d "\r" <"$tmp/console" | tail -n 60
	fi
	netns_destroy "$NET_NS"; rm -rf "$tmp"' EXIT
tap_netns uks
url=http://$NETNS_GUEST_IP

# Ctrl-T on the console: the guest prints its counters, ending with the
# "kernel: time us" line. Sets POOLS to the pools line and UPTIME (ms).
snapshot() {
	local off i dump
	off=$(stat -c %s "$tmp/console")
	printf '\x14' >&3
	for i in $(seq 1 100); do
		dump=$(tail -c +$((off + 1)) "$tmp/console" | tr -d '\r')
		if grep -q '^kernel: time us' <<<"$dump"; then
			POOLS=$(grep '^pools:' <<<"$dump" | tail -n 1)
			UPTIME=$(sed -n 's/^kernel: uptime \([0-9]*\) ms.*/\1/p' <<<"$dump" | tail -n 1)
			return 0
		fi
		sleep 0.1
	done
	fail "no counters from the guest after Ctrl-T"
}

# What must come back after an attack: pcbs, segments, pbufs, sockets,
# descriptors, malloc'd bytes.
held() {
	sed 's/^pools://; s/;/ /g' <<<"$1" | awk '{ for (i = 1; i < NF; i += 2)
		if ($i ~ /^(TCP_PCB|TCP_SEG|PBUF_POOL|PBUF_REF\/ROM|tcp-sockets|fds|malloc-bytes)$/)
			printf "%s %s ", $i, $(i + 1) }'
}

for mode in ${SLOW_ONLY:-$SLOW_MODES}; do # SLOW_ONLY=MODE: one of them
	slow_mode "$mode"
	echo "== $mode"
	rm -f "$tmp/stdin" && mkfifo "$tmp/stdin"
	"${NET_EXEC[@]}" "$QEMU_RUN" --net tap --tap "$NETNS_TAP" --timeout 200 "${DESIGN_QEMU[@]}" \
		--append "$NETNS_GUEST_NET $DESIGN_KOPTS -- -p 80 -s" \
		"$LOADER" "$IMAGE" <"$tmp/stdin" >"$tmp/console" 2>&1 &
	pid=$!
	exec 3>"$tmp/stdin"
	guest_wait_http "$url/" 60 "$pid" || { cat "$tmp/console"; fail "no HTTP answer"; }
	ab_load "$url/" 200 8 -k || fail "warm-up load failed"
	sleep 1
	snapshot
	before=$(held "$POOLS") t0=$UPTIME wall0=$SECONDS

	if ! slow_attack "$NETNS_GUEST_IP" 80; then
		snapshot
		echo "guest: $POOLS"
		fail "$mode: $SLOW_FAILED"
	fi

	# TIME_WAIT and the last closes run out on the guest's clock.
	for i in $(seq 1 30); do
		snapshot
		[ "$(held "$POOLS")" = "$before" ] && break
		sleep 1
	done
	echo "guest clock: $((UPTIME - t0)) ms in $((SECONDS - wall0)) s of wall time"
	[ "$(held "$POOLS")" = "$before" ] ||
		fail "$mode: not everything came back: before: $before; after: $(held "$POOLS")"
	echo "pools back: $before"
	ab_load "$url/" 1000 16 || fail "$mode: load after the attack failed"

	"${NET_EXEC[@]}" curl -s -m 5 "$url/__shutdown" >/dev/null
	wait "$pid"
	rc=$?
	pid=""
	exec 3>&-
	[ $rc = 0 ] || { tail -n 30 "$tmp/console"; fail "$mode: exit status $rc"; }
	line=$(tr -d '\r' <"$tmp/console" | grep '^httpd: accepted' | tail -n 1)
	echo "$line"
	tr -d '\r' <"$tmp/console" | contains -E '^sockets: open 0,' || fail "$mode: sockets left open at exit"
	slow_check "$mode" "$line"
	slow_figures uk "$mode" "$line"
done
echo "all good"
