# lib/iperf.sh: helpers for the iperf tests 45-49 (sourced, after lib/net.sh).
#
# Set before use:
#   IPERF_ADDR, IPERF_PORT   where the server listens (as the client reaches it)
#   IPERF_CONSOLE            the file the server's output goes to
#   NET_EXEC                 (lib/net.sh) the client's prefix, e.g. a namespace
#   IPERF_PID                the process whose death means the server died
# Offers:
#   iperf_wait_listening SECS     until the console says "iperf: listening"
#   iperf_transfer WHAT ARGS...   iperf3 -c ARGS --json (5 minutes at most),
#                                 then tests/integration/lib/iperf_check.py with
#                                 the server's result line for that test; WHAT
#                                 is check options (e.g. "--bytes 268435456
#                                 --reverse"); fails the test on a miss and
#                                 prints how long the transfer took
#   iperf_both_ways WHAT ARGS...  iperf_transfer WHAT ARGS..., then the same
#                                 reversed (WHAT --reverse, ARGS... -R)
#   iperf_client_only WHAT ARGS...   the same without a server line to compare
#                                 (Debian's iperf3 -s prints none of ours)
#   iperf_shutdown                sends the server's shutdown cookie (-s)
#   iperf_counters                the server's counter line (after it stopped)
#   iperf_boot BACKEND SECS KERNEL INITRD APPEND
#                                 boots a guest under tools/qemu-run (killed
#                                 after SECS) on `tap` (a fresh namespace) or
#                                 `user` (a free port forwarded to 5201):
#                                 lib/net.sh's net_backend, whose NET_GUEST
#                                 (the ip=/gw=/mask= words) replaces APPEND's
#                                 "%NET%"; sets IPERF_ADDR, IPERF_PORT,
#                                 IPERF_PID, IPERF_CONSOLE; cleans up at exit.
#                                 DESIGN_QEMU's options go to qemu-run too
#                                 (lib/design.sh: set by iperf_uk_boot under
#                                 a design, else none)
#   iperf_guest_stop              shutdown cookie, wait: IPERF_RC = qemu-run's status
#   iperf_uk_boot BACKEND SECS APPEND
#                                 the unikernel's server (build/apps/iperf.elf;
#                                 under $SMP_DESIGN the design's build on its
#                                 CPUs, lib/design.sh) booted by iperf_boot,
#                                 until it listens (skips without iperf3)
#   iperf_uk_stop COUNTS SOCKETS  iperf_guest_stop, the console shown less its
#                                 per-test lines; fails unless the status is 0,
#                                 the counter line is "iperf: COUNTS" and the
#                                 sockets line says "open 0, accepted N,
#                                 backlog overflows 0, SOCKETS" (COUNTS and
#                                 SOCKETS: extended regular expressions)
# Every check reads bytes iperf3 itself counted; nothing here measures speed.

IPERF_CHECK=${ROOT:-.}/tests/integration/lib/iperf_check.py
IPERF_SHUTDOWN_COOKIE=----------shutdown-iperf------------

# The console without carriage returns (the unikernel's console has them).
iperf_console() { tr -d '\r' <"$IPERF_CONSOLE"; }

iperf_wait_listening() {
	guest_wait_console "$IPERF_CONSOLE" '^iperf: listening' "$1" "$IPERF_PID" ||
		{ iperf_console; fail "the iperf server did not start"; }
}

# Waits until the console has more than $1 result lines ("done:" or "ended:"),
# then prints the last one.
iperf_next_result() {
	local before=$1 i n
	for i in $(seq 300); do
		n=$(iperf_console | grep -cE '^iperf: test [0-9]+ (done|from .* ended):')
		[ "$n" -gt "$before" ] && { iperf_console | grep -E '^iperf: test [0-9]+ (done|from .* ended):' | tail -n1; return 0; }
		kill -0 "$IPERF_PID" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

# Runs the client; sets IPERF_JSON (its output file) and IPERF_SECS.
iperf_client() {
	local t0
	IPERF_JSON=$(mktemp)
	t0=$(date +%s.%N)
	"${NET_EXEC[@]}" timeout 300 iperf3 -c "$IPERF_ADDR" -p "$IPERF_PORT" "$@" --json >"$IPERF_JSON" 2>&1
	IPERF_SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

iperf_transfer() {
	local what=$1 before line out
	shift
	before=$(iperf_console | grep -cE '^iperf: test [0-9]+ (done|from .* ended):')
	echo "== iperf3 -c $* ($what)"
	iperf_client "$@"
	line=$(iperf_next_result "$before") || { iperf_console | tail -n 20; fail "no result line from the server"; }
	echo "server: $line"
	# shellcheck disable=SC2086 # what is a list of options
	out=$(python3 "$IPERF_CHECK" "$IPERF_JSON" $what --server "$line") ||
		{ echo "$out"; cat "$IPERF_JSON" | head -c 3000; rm -f "$IPERF_JSON"; fail "iperf3 $*"; }
	echo "$out (${IPERF_SECS}s)"
	rm -f "$IPERF_JSON"
}

iperf_both_ways() {
	local what=$1
	shift
	iperf_transfer "$what" "$@"
	iperf_transfer "$what --reverse" "$@" -R
}

iperf_client_only() {
	local what=$1 out
	shift
	echo "== iperf3 -c $* ($what)"
	iperf_client "$@"
	# shellcheck disable=SC2086
	out=$(python3 "$IPERF_CHECK" "$IPERF_JSON" $what) ||
		{ echo "$out"; cat "$IPERF_JSON" | head -c 3000; rm -f "$IPERF_JSON"; fail "iperf3 $*"; }
	echo "$out (${IPERF_SECS}s)"
	rm -f "$IPERF_JSON"
}

iperf_shutdown() {
	"${NET_EXEC[@]}" timeout 10 bash -c \
		"printf '%s\\0' $IPERF_SHUTDOWN_COOKIE >/dev/tcp/$IPERF_ADDR/$IPERF_PORT" 2>/dev/null
}

iperf_counters() {
	iperf_console | grep -E '^iperf: tests [0-9]+, done'
}

iperf_boot() {
	local backend=$1 secs=$2 kernel=$3 initrd=$4 append=$5
	IPERF_TMP=$(mktemp -d) IPERF_PID=""
	IPERF_CONSOLE=$IPERF_TMP/console
	trap 'guest_kill; netns_destroy "$NET_NS"; rm -rf "$IPERF_TMP"' EXIT
	net_backend "$backend" iperf 5201
	IPERF_ADDR=$NET_HOST IPERF_PORT=${NET_PORTS[0]}
	append=${append//%NET%/$NET_GUEST} IPERF_LIMIT=$secs
	echo "+ qemu-run ${NET_QEMU[*]} ${DESIGN_QEMU[*]} --append '$append' $kernel $initrd"
	# shellcheck disable=SC2086 # no INITRD: no word
	guest_start "$IPERF_CONSOLE" "" "${NET_EXEC[@]}" "$QEMU_RUN" "${NET_QEMU[@]}" "${DESIGN_QEMU[@]}" \
		--timeout "$secs" --append "$append" "$kernel" $initrd
	IPERF_PID=$GUEST_PID
}

iperf_guest_stop() {
	iperf_shutdown
	guest_wait_exit $((IPERF_LIMIT + 10)) # qemu-run's --timeout ends it before
	IPERF_RC=$GUEST_RC
	IPERF_PID=""
}

iperf_uk_boot() {
	local image=$ROOT/$BUILD/apps/iperf.elf
	[ -f "$image" ] || fail "no $image"
	needs iperf3
	design_image "$image"
	iperf_boot "$1" "$2" "$ROOT/$BUILD/loader/loader.elf" "$DESIGN_IMAGE" "$DESIGN_KOPTS $3"
	iperf_wait_listening 60
}

iperf_uk_stop() {
	local counts=$1 sockets=$2
	iperf_guest_stop
	iperf_console | grep -vE '^iperf: test [0-9]+ from .*: (upload|download)'
	[ "$IPERF_RC" = 0 ] || fail "exit status $IPERF_RC after the shutdown cookie"
	iperf_counters | contains -E "^iperf: $counts\$" || fail "counters: $(iperf_counters)"
	iperf_console | contains -E "^sockets: open 0, accepted [0-9]+, backlog overflows 0, $sockets" ||
		fail "sockets left open, backlog overflows or not \"$sockets\": $(iperf_console | grep '^sockets:')"
}
