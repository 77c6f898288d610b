# tools/nested/scenario-lib.sh: helpers for the scenarios that run inside the
# nested-KVM host (L1) through tools/nested/run-l1, the tests' (tests/kvm/)
# and the benchmarks' (bench/kvm/) alike (sourced; ROOT=/work there). L1 has
# bash, busybox, ab, curl, iperf3 and the host's QEMU; no Python, so the
# peers that need more than these are small static tools (tools/nested/*.c,
# in build/nested/bin: udpcheck, rudepeer).
#
# Offers:
#   say MSG...               print "kvm: MSG"
#   fail MSG...              print "kvm: FAIL: MSG", the current guest's console
#                            tail, and exit 1
#   contains [OPT...] RE     whether stdin has a line matching RE (reads it all:
#                            `cmd | grep -q` under pipefail can die of SIGPIPE)
#   tap_up IFNAME            wait for QEMU to create IFNAME, give L1 its side
#                            ($HOST_IP/24) and bring it up
#   guest_start NET KERNEL INITRD APPEND [-- QEMU-ARGS...]
#                            boot a guest under -accel kvm in the background:
#                            NET is user (port 8080 forwarded to the guest's
#                            80), tap, vhost (tap with vhost-net) or
#                            vhostpoll (vhost-net polling its rings for
#                            $VHOST_POLL_US after they run dry); sets
#                            GUEST_PID, GUEST_IP, GUEST_CONSOLE; GUEST_SMP=N,
#                            when set, gives it N vCPUs; the guest's
#                            stdin is a fifo on fd 3 (Ctrl-T: guest_status)
#   guest_append NET         the ip=/gw=/mask= words for NET
#   guest_answers URL SECS   whether URL answers 200 within SECS (false at
#                            once when the guest dies)
#   guest_wait_http URL SECS until URL answers 200, or fail
#   guest_status             Ctrl-T, and wait for the dump's last line
#   guest_status_dump        the same, and print the dump
#   guest_stop_http URL      GET URL/__shutdown, wait; GUEST_RC = its status
#   guest_wait [SECS]        wait for the guest, at most SECS (120) before
#                            stopping it; GUEST_RC = its status
#   guest_kill               stop the guest (qemu-run KILLs a QEMU that
#                            ignores the TERM) and wait for it
#   twice WHAT STEP [ARG...] run STEP; when it returns non-zero (a stall: a
#                            guest that stopped answering; a wrong answer is
#                            `fail`), say so and run it once more
#   kvm_stats                "name value" for every counter of L1's KVM
#                            (debugfs), one per line
#   kvm_delta BEFORE AFTER   "name delta" for each counter of two kvm_stats
#   ab_ok URL N C [-k]       ab: true when all N completed, 0 failed, 0 non-2xx;
#                            sets AB_RPS; false when some did not complete (a
#                            stall); fail when some failed or were not 2xx
#   post_mortem MSG...       where L2's vCPU is (QEMU's monitor at $GUEST_MON,
#                            which the guest must have been started with: run
#                            state, registers, instructions, stack, local
#                            APIC), L1's KVM counters 2 s apart, and the
#                            console's tail
set -uo pipefail
HOST_IP=192.0.2.1 TAP_GUEST_IP=192.0.2.2 USER_GUEST_IP=10.0.2.15
VHOST_POLL_US=${VHOST_POLL_US:-2000}
GUEST_MON=127.0.0.1:4444
LOADER=$ROOT/build/loader/loader.elf
KTMP=$(mktemp -d)
GUEST_PID="" GUEST_CONSOLE=$KTMP/none
trap '[ -n "$GUEST_PID" ] && kill "$GUEST_PID" 2>/dev/null; wait 2>/dev/null' EXIT

say() { echo "kvm: $*"; }
contains() { grep "$@" >/dev/null; }
fail() {
	echo "kvm: FAIL: $*"
	[ -f "$GUEST_CONSOLE" ] && { echo "--- guest console (last 40 lines)"; tr -d '\r' <"$GUEST_CONSOLE" | tail -n 40; }
	exit 1
}

# Waits (bounded) until IFNAME is gone: the previous guest's tap outlives
# its QEMU for a moment, and an address given to it is lost with it.
tap_gone() {
	local i
	for i in $(seq 1 600); do
		ip link show "$1" >/dev/null 2>&1 || return 0
		sleep 0.1
	done
	return 1
}

tap_up() {
	local i
	for i in $(seq 1 600); do
		ip link show "$1" >/dev/null 2>&1 && break
		kill -0 "$GUEST_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	ip addr add "$HOST_IP/24" dev "$1" && ip link set "$1" up
}

guest_append() {
	case $1 in
	user) echo "ip=$USER_GUEST_IP gw=10.0.2.2 mask=255.255.255.0" ;;
	*) echo "ip=$TAP_GUEST_IP gw=$HOST_IP mask=255.255.255.0" ;;
	esac
}

guest_start() {
	local net=$1 kernel=$2 initrd=$3 append=$4 netargs=()
	shift 4
	[ "${1:-}" = -- ] && shift
	case $net in
	user) netargs=(--net user --hostfwd 8080:80) GUEST_IP=127.0.0.1:8080 ;;
	tap) netargs=(--net tap --tap tap0) GUEST_IP=$TAP_GUEST_IP ;;
	vhost) netargs=(--net tap --tap tap0 --vhost) GUEST_IP=$TAP_GUEST_IP ;;
	vhostpoll) netargs=(--net tap --tap tap0 --vhost-poll "$VHOST_POLL_US") GUEST_IP=$TAP_GUEST_IP ;;
	*) fail "no back-end $net" ;;
	esac
	[ "$net" = user ] || tap_gone tap0 || fail "tap0 of the previous guest is still there"
	GUEST_CONSOLE=$KTMP/console.$((++GUEST_SEQ))
	rm -f "$KTMP/in" && mkfifo "$KTMP/in"
	[ -z "${GUEST_SMP:-}" ] || netargs+=(--smp "$GUEST_SMP")
	ACCEL=kvm "$ROOT/tools/qemu-run" "${netargs[@]}" --timeout 600 --append "$append" \
		"$kernel" "$initrd" -- "$@" <"$KTMP/in" >"$GUEST_CONSOLE" 2>&1 &
	GUEST_PID=$!
	exec 3>"$KTMP/in"
	[ "$net" = user ] || tap_up tap0 || fail "no tap0 from QEMU"
}
GUEST_SEQ=0

# A try that connected waits for its answer (to the end of the bound): one
# given up half-way is a connection the guest sees reset (test 13 counts
# resets). Only the connect is retried quickly, for a guest not yet up.
guest_answers() {
	local end=$((SECONDS + $2)) got
	while [ $SECONDS -lt $end ]; do
		got=$(curl -s -o /dev/null -w '%{http_code} %{local_port}' --connect-timeout 1 \
			-m $((end - SECONDS + 1)) "$1")
		[ "${got% *}" = 200 ] && return 0
		[ "${got% *}" = 000 ] || say "probe $1: answer ${got% *} on port ${got#* }"
		kill -0 "$GUEST_PID" 2>/dev/null || { say "the guest died before answering $1"; return 1; }
		sleep 0.1
	done
	say "no answer from $1 within $2 s"
	return 1
}

guest_wait_http() {
	guest_answers "$@" || fail "no answer from $1"
}

# The dump is thousands of port writes, each an exit to QEMU's user space
# in L1; behind slirp, after a load, L1 has taken longer than 10 s for it.
guest_status() {
	local off i
	off=$(stat -c %s "$GUEST_CONSOLE")
	printf '\x14' >&3
	for i in $(seq 1 600); do
		tail -c +$((off + 1)) "$GUEST_CONSOLE" | tr -d '\r' | contains '^kernel: time us' && return 0
		sleep 0.1
	done
	fail "no counters after Ctrl-T"
}

# The dump itself, printed (Ctrl-T, then the console from that point to the
# dump's last line).
guest_status_dump() {
	local off
	off=$(stat -c %s "$GUEST_CONSOLE")
	guest_status
	tail -c +$((off + 1)) "$GUEST_CONSOLE" | tr -d '\r' | sed -n '/^[a-z][a-z0-9_-]*: /p' | sed '/^kernel: time us/q'
}

guest_wait() {
	local end=$((SECONDS + ${1:-120}))
	while kill -0 "$GUEST_PID" 2>/dev/null && [ $SECONDS -lt $end ]; do
		sleep 0.1
	done
	kill -0 "$GUEST_PID" 2>/dev/null && { say "the guest still runs after ${1:-120} s: stopping it"; kill "$GUEST_PID"; }
	wait "$GUEST_PID"
	GUEST_RC=$?
	GUEST_PID=""
	exec 3>&-
}

guest_kill() {
	kill "$GUEST_PID" 2>/dev/null
	guest_wait 30
}

twice() {
	local what=$1
	shift
	"$@" && return 0
	say "$what stalled; once more"
	"$@" || fail "$what stalled twice"
}

guest_stop_http() {
	curl -s -m 10 -o /dev/null "$1/__shutdown"
	guest_wait
}

kvm_stats() {
	local f
	for f in /sys/kernel/debug/kvm/*; do
		[ -f "$f" ] && echo "${f##*/} $(timeout 2 cat "$f" 2>/dev/null)"
	done
}

kvm_delta() {
	awk 'NR == FNR { before[$1] = $2; next } ($1 in before) { print $1, $2 - before[$1] }' "$1" "$2"
}

ab_ok() {
	local url=$1 n=$2 c=$3 k=${4:-} out=$KTMP/ab
	ab -q $k -n "$n" -c "$c" -s 20 "$url" >"$out" 2>&1
	contains "^Complete requests: *$n\$" <"$out" || { cat "$out"; return 1; }
	contains '^Failed requests: *0$' <"$out" && ! contains '^Non-2xx responses' <"$out" ||
		{ cat "$out"; fail "ab $k -c $c $url: failed or non-2xx requests"; }
	AB_RPS=$(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$out")
}

mon() {
	# busybox's nc waits for the monitor to close the socket, which it
	# never does: the timeout ends each command's session.
	(echo "$1"; sleep 1) | timeout 3 nc "${GUEST_MON%:*}" "${GUEST_MON#*:}" 2>/dev/null | tr -d '\r' |
		sed 's/\x1b\[[0-9;]*[A-Za-z]//g' | grep -av '^(qemu)'
}

# Each line of the post-mortem starts "kvm: | ", so that test 13's log,
# which keeps only "kvm:" lines of a passing run, keeps it too; line by
# line (sed would hold it all back), since L1 itself may hang mid-way.
post_mortem() {
	say "post-mortem: $*"
	{
		mon "info status"
		mon "info registers" | head -n 24
		mon "x/4i \$pc"
		mon "x/8gx \$sp"
		mon "info lapic" | grep -E 'Timer|LVTT|ISR|IRR|PPR'
		grep -E ' (kvm|kvm_amd)$' /proc/modules
		kvm_stats | grep -E '^(exits|halt_exits|irq_injections|mmio_exits) '
		sleep 2
		kvm_stats | grep -E '^(exits|halt_exits|irq_injections|mmio_exits) '
		echo "--- guest console (last 30 lines)"
		tr -d '\r' <"$GUEST_CONSOLE" | tail -n 30
	} 2>&1 | while IFS= read -r line; do echo "kvm: | $line"; done
}
