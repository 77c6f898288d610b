# tools/lib/measured.sh: the guest a benchmark measures, a QEMU guest or a
# server run on the host (a native guest): started, its server's process
# found, stopped and cleaned up the one way bench/run-bench and
# bench/run-bulk do it (sourced after tools/lib/log.sh, guest.sh and
# guests.sh; bash). The guest is guest_resolve's current one (GUEST_KIND,
# GUEST_SERVER, GUEST_CTRL_T); the process is tools/lib/guest.sh's.
#
# Offers:
#   measured_start CONSOLE PIDFILE CONSOLE_IN COMMAND...
#                     starts the guest with COMMAND (behind any prefix: ip
#                     netns exec, env, taskset, timeout), its output in
#                     CONSOLE, and sets SERVER_PID, the process whose CPU is
#                     the server's. A native guest: COMMAND runs the server,
#                     and SERVER_PID is the process at the end of
#                     GUEST_SERVER's chain of names below it, once there (2 s
#                     at most; empty if not). A QEMU guest: COMMAND is
#                     tools/qemu-run's, QEMU writes its pid to PIDFILE and
#                     SERVER_PID is QEMU's; a guest that prints its counters
#                     on Ctrl-T (GUEST_CTRL_T) gets the fifo CONSOLE_IN as its
#                     console input (guest_console_in), else none (said so)
#   MEASURED_FILES    files that go with the guest (a fifo, a trace), the
#                     caller's to add to; removed once the guest is gone
#   measured_stop SECS
#                     after the caller's shutdown request: waits up to SECS
#                     for the guest to end, then GUEST_RC is its status;
#                     kills it when it still runs, GUEST_RC then `killed`.
#                     True only for status 0
#   measured_kill     kills what is left of the guest: the server, QEMU and
#                     the command
# SERVER_PID is empty and MEASURED_FILES gone once the guest has ended.
SERVER_PID="" MEASURED_FILES=()

# The process at the end of a chain of names, each a child of the one
# before, from process $1 down; empty while the chain is not there yet.
server_process() {
	local pid=$1 name
	shift
	for name in "$@"; do
		pid=$(pgrep -P "$pid" -x "$name" | head -n1)
		[ -n "$pid" ] || return 0
	done
	echo "$pid"
}

measured_start() {
	local console=$1 pidfile=$2 console_in=$3
	shift 3
	if [ "$GUEST_KIND" = native ]; then
		guest_start "$console" "" "$@"
		SERVER_PID=""
		for _ in $(seq 1 100); do
			# shellcheck disable=SC2086 # GUEST_SERVER is a list of names
			SERVER_PID=$(server_process "$GUEST_PID" $GUEST_SERVER)
			[ -n "$SERVER_PID" ] && break
			sleep 0.02
		done
		return 0
	fi
	if [ -n "$GUEST_CTRL_T" ]; then
		guest_console_in "$console_in" || log "no fifo for the console: no counters"
	fi
	guest_start "$console" "$pidfile" "$@"
	SERVER_PID=$GUEST_QEMU_PID
}

# The guest has ended: what went with it goes.
measured_gone() {
	SERVER_PID=""
	[ ${#MEASURED_FILES[@]} = 0 ] || rm -f "${MEASURED_FILES[@]}"
	MEASURED_FILES=()
}

measured_kill() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
	guest_kill
	measured_gone
}

measured_stop() {
	if guest_wait_exit "$1"; then
		measured_gone
	else
		measured_kill
		GUEST_RC=killed
	fi
	[ "$GUEST_RC" = 0 ]
}
