#!/usr/bin/env bash
# test-timeout: 600
# Many short connections on both CPUs at once, for each SMP design (one boot
# per design: SMP_DESIGN when make test-smp sets it, else every design of
# SMP_DESIGNS in mk/variants.mk), its httpd build on two vCPUs under MTTCG
# with smp=2, tap. After a warm-up at the load's concurrency, two ab runs of
# new connections (-c 32 and -c 16) and an h2load of keep-alive requests
# (-c 16; a third ab where h2load is missing) at once, each with 0 failed:
# accepts, reads, answers and closes on the application's CPU racing the
# network's CPU. A wake-up lost between the CPUs leaves a request
# unanswered, which the clients' 10 s limits fail. Then, at rest:
#   - every pools field (pcbs, segments, pbufs, lent buffers, sockets,
#     descriptors, malloc'd bytes) back at its value after the warm-up, by
#     Ctrl-T snapshots retaken 1 s apart for at most 10 s (TIME_WAIT is 2 s);
#   - the counters of that snapshot (lib/smp_counters.py): no IPI received
#     that was not sent, every wake the design sent taken once, by a park or
#     before it, and the design's own line;
# and after the shutdown request exit status 0, no socket open, no backlog
# overflow and no reset, and the exit's counters consistent too.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
needs ab curl python3
COUNTERS=$ROOT/tests/integration/lib/smp_counters.py

# pools_now: the pools line of a fresh Ctrl-T dump, once the dump is whole
# (its last line, the locks', is on the console).
pools_now() {
	local before
	before=$(tr -d '\r' <"$UK_TMP/console" | grep -c '^kernel: locks:')
	printf '\x14' >&"$GUEST_CONSOLE_FD"
	for _ in $(seq 100); do
		if [ "$(tr -d '\r' <"$UK_TMP/console" | grep -c '^kernel: locks:')" -gt "$before" ]; then
			tr -d '\r' <"$UK_TMP/console" | grep '^pools:' | tail -n 1
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# pools_at_rest LINE: the pools line without the heap's break and high-water
# mark (the break moves within newlib's trim slack; the mark may grow).
pools_at_rest() { sed 's/; heap-bytes .*//' <<<"$1"; }

# load NAME CMD...: a client in the namespace, its output in $UK_TMP/NAME.
load() {
	local name=$1
	shift
	"${NET_EXEC[@]}" timeout 200 "$@" >"$UK_TMP/$name" 2>&1
}

# ab_ok NAME N: the ab run NAME completed N requests, none failed or non-2xx.
ab_ok() {
	grep -q "^Complete requests: *$2\$" "$UK_TMP/$1" && grep -q '^Failed requests: *0$' "$UK_TMP/$1" &&
		! grep -q '^Non-2xx responses' "$UK_TMP/$1"
}

stress() {
	local design=$1 image=$ROOT/$BUILD/apps/httpd-$1.elf url base after i requests c
	echo "== design $design"
	[ -f "$image" ] || fail "no $image: make smp-designs"
	UK_TIMEOUT=500 UK_CONSOLE_IN=1 UK_QEMU_OPTS="--smp 2"
	uk_tap_serve "$image" "-p 80 -s" "smp=2"
	url=$UK_URL/
	on_fail() {
		printf '\x14' >&"$GUEST_CONSOLE_FD"
		sleep 2
		tr -d '\r' <"$UK_TMP/console" | tail -n 40
		fail "$design: $*"
	}

	# Warm-up at the load's concurrency: the pools' and the heap's first use.
	expect_get "$url" "$UK_TMP/got" "$HTTPD_HELLO"
	ab_load "$url" 2000 48 || on_fail "warm-up ab -c 48"
	ab_load "$url" 2000 16 -k || on_fail "warm-up ab -k -c 16"
	requests=4001
	sleep 3 # TIME_WAIT (2 s) runs out
	base=$(pools_now) || on_fail "no answer to Ctrl-T"
	echo "at rest after the warm-up: $base"

	echo "== at once: ab -c 32 -n 20000, ab -c 16 -n 10000, and keep-alive -c 16 -n 10000"
	SECONDS=0
	load ab32 ab -q -n 20000 -c 32 -s 10 "$url" &
	local p1=$!
	load ab16 ab -q -n 10000 -c 16 -s 10 "$url" &
	local p2=$!
	if command -v h2load >/dev/null; then
		load keep h2load --h1 -n 10000 -c 16 -t 1 -N 10 "$url" &
	else
		load keep ab -q -k -n 10000 -c 16 -s 10 "$url" &
	fi
	local p3=$!
	wait $p1 && ab_ok ab32 20000 || { cat "$UK_TMP/ab32"; on_fail "ab -c 32: not 20000 complete with 0 failed"; }
	wait $p2 && ab_ok ab16 10000 || { cat "$UK_TMP/ab16"; on_fail "ab -c 16: not 10000 complete with 0 failed"; }
	if command -v h2load >/dev/null; then
		wait $p3 && contains -E '^requests: 10000 total, 10000 started, 10000 done, 10000 succeeded, 0 failed, 0 errored, 0 timeout$' \
			<"$UK_TMP/keep" || { cat "$UK_TMP/keep"; on_fail "h2load --h1 -c 16: not every request succeeded"; }
	else
		wait $p3 && ab_ok keep 10000 || { cat "$UK_TMP/keep"; on_fail "ab -k -c 16: not 10000 complete with 0 failed"; }
	fi
	for c in ab32 ab16; do
		echo "$c: $(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$UK_TMP/$c") req/s"
	done
	echo "keep-alive: $(grep -E '^(finished in|requests:)|^Requests per second' "$UK_TMP/keep" | tr '\n' ' ')"
	requests=$((requests + 40000))
	echo "40000 requests in ${SECONDS}s, 0 failed"

	# At rest: every pool back at its value after the warm-up.
	sleep 3
	for i in $(seq 10); do
		after=$(pools_now) || on_fail "no answer to Ctrl-T"
		[ "$(pools_at_rest "$after")" = "$(pools_at_rest "$base")" ] && break
		sleep 1
	done
	echo "at rest after the load:    $after"
	[ "$(pools_at_rest "$after")" = "$(pools_at_rest "$base")" ] ||
		on_fail "a pools field differs from its value after the warm-up (a leak)"
	tr -d '\r' <"$UK_TMP/console" >"$UK_TMP/rest"
	python3 "$COUNTERS" "$design" "$UK_TMP/rest" "$requests" || on_fail "the counters at rest"

	uk_tap_stop >/dev/null
	c=$UK_TMP/console
	grep -E '^(sockets:|net: global lock|virtio-net: rx [0-9]|kernel: uptime|kernel: cpu|kernel: locks)' "$c" | tail -n 7
	[ "$UK_RC" = 0 ] || fail "$design: exit status $UK_RC after the shutdown request"
	grep -q '^httpd: stopped (shutdown request)$' "$c" || fail "$design: no clean stop"
	grep '^sockets: open' "$c" | tail -n 1 | contains -E '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' ||
		fail "$design: sockets left open, overflows or resets"
	grep '^pools:' "$c" | tail -n 1 | contains -E ' PBUF_REF/ROM 0 PBUF_POOL 0; lwip-heap [0-9]+; rx-lent 0; tcp-sockets 0 udp-sockets 0; fds 0;' ||
		fail "$design: buffers, sockets or descriptors held at exit"
	python3 "$COUNTERS" "$design" "$c" "$((requests + 1))" || fail "$design: the exit's counters"
	echo "$design: all good"
}

designs=$(smp_designs)
[ -n "$designs" ] || fail "no SMP design (SMP_DESIGNS in mk/variants.mk)"
for design in $designs; do
	(stress "$design") || exit $?
done
echo "all good"
