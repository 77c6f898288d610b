# tools/lib/guest.sh: start a guest under tools/qemu-run in the background,
# see it come up, stop it. The one way the bench scripts, tools/serve and the
# integration tests boot a server guest (sourced; bash); the Python scripts
# use it too, through bench/runner/guest.py and tools/lib/guest-run.
#
# Offers:
#   contains [GREP-OPTION...] RE
#                     whether stdin has a line matching RE, read to its end:
#                     under pipefail `cmd | grep -q` fails when grep's exit at
#                     the first match kills cmd with SIGPIPE
#   guest_console_in FIFO
#                     makes FIFO, the next guest's console input, and holds it
#                     open read-write on GUEST_CONSOLE_FD: neither side blocks
#                     on the other's open, and QEMU reads no end-of-file while
#                     we hold it (Ctrl-T, 0x14, written there makes the
#                     unikernel print its counters); false when it cannot
#   guest_start CONSOLE PIDFILE COMMAND...
#                     runs COMMAND (tools/qemu-run and its arguments, behind
#                     any prefix: ip netns exec, env, taskset, setsid) in the
#                     background, its stdin the fifo of guest_console_in (else
#                     /dev/null), its output in the file CONSOLE; with a
#                     PIDFILE, QEMU writes its pid there (-pidfile) and this
#                     waits up to 5 s for it. Sets GUEST_PID (the command's)
#                     and GUEST_QEMU_PID (QEMU's; empty without it)
#   guest_wait_console FILE RE SECS [PID]
#                     until FILE (a console; CRs dropped) has a line matching
#                     RE (grep -E); false after SECS or once PID (default
#                     GUEST_PID; none when empty) has ended without it
#   guest_wait_http URL SECS [PID]
#                     until URL answers 200, through the NET_EXEC array (a
#                     prefix such as `ip netns exec NS`) when it is set; false
#                     after SECS or once PID (as above) has ended
#   guest_wait_exit SECS
#                     until GUEST_PID has ended: GUEST_RC is its status (for
#                     qemu-run, the app's), GUEST_PID empty, the console input
#                     released; false while it still runs after SECS
#   guest_kill        kills what is left of the guest (QEMU and the command),
#                     waits for it and releases the console input
# One guest at a time: the GUEST_* variables are the current one's.
# shellcheck disable=SC2034 # the GUEST_* variables are for the caller
GUEST_PID="" GUEST_QEMU_PID="" GUEST_RC="" GUEST_CONSOLE_IN="" GUEST_CONSOLE_FD=""

contains() { grep "$@" >/dev/null; }

guest_console_in() {
	GUEST_CONSOLE_IN=$1
	rm -f "$GUEST_CONSOLE_IN"
	mkfifo "$GUEST_CONSOLE_IN" && exec {GUEST_CONSOLE_FD}<>"$GUEST_CONSOLE_IN" && return 0
	rm -f "$GUEST_CONSOLE_IN"
	GUEST_CONSOLE_IN="" GUEST_CONSOLE_FD=""
	return 1
}

guest_start() {
	local console=$1 pidfile=$2 stdin=${GUEST_CONSOLE_IN:-/dev/null} extra=() a
	shift 2
	GUEST_QEMU_PID="" GUEST_RC=""
	if [ -n "$pidfile" ]; then
		rm -f "$pidfile"
		# After qemu-run's own `--` when the command has one (QEMU's arguments).
		extra=(-- -pidfile "$pidfile")
		for a in "$@"; do [ "$a" = -- ] && extra=(-pidfile "$pidfile"); done
	fi
	"$@" "${extra[@]}" <"$stdin" >"$console" 2>&1 &
	GUEST_PID=$!
	[ -n "$pidfile" ] || return 0
	for _ in $(seq 100); do
		[ -s "$pidfile" ] && break
		sleep 0.05
	done
	GUEST_QEMU_PID=$(cat "$pidfile" 2>/dev/null)
}

# Whether process $1 runs (an empty $1: nothing to watch, yes).
guest_alive() { [ -z "$1" ] || kill -0 "$1" 2>/dev/null; }

guest_wait_console() {
	local file=$1 re=$2 end=$((SECONDS + $3)) pid=${4-$GUEST_PID}
	until tr -d '\r' 2>/dev/null <"$file" | contains -E -- "$re"; do
		if [ $SECONDS -ge "$end" ] || ! guest_alive "$pid"; then
			# A last look: a guest may say it just before it ends.
			tr -d '\r' 2>/dev/null <"$file" | contains -E -- "$re"
			return
		fi
		sleep 0.05
	done
}

guest_wait_http() {
	local url=$1 end=$((SECONDS + $2)) pid=${3-$GUEST_PID}
	while [ $SECONDS -lt "$end" ]; do
		[ "$("${NET_EXEC[@]}" curl -s -o /dev/null -w '%{http_code}' --connect-timeout 0.5 -m 1 "$url" 2>/dev/null)" = 200 ] &&
			return 0
		guest_alive "$pid" || return 1
		sleep 0.05
	done
	return 1
}


# Releases the console input (the guest has ended, or is being killed).
guest_console_close() {
	[ -n "$GUEST_CONSOLE_FD" ] && exec {GUEST_CONSOLE_FD}>&-
	[ -n "$GUEST_CONSOLE_IN" ] && rm -f "$GUEST_CONSOLE_IN"
	GUEST_CONSOLE_FD="" GUEST_CONSOLE_IN=""
}

guest_wait_exit() {
	local i
	[ -n "$GUEST_PID" ] || return 0
	for ((i = 0; i < $1 * 10; i++)); do
		kill -0 "$GUEST_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$GUEST_PID" 2>/dev/null && return 1
	wait "$GUEST_PID" 2>/dev/null
	GUEST_RC=$?
	GUEST_PID="" GUEST_QEMU_PID=""
	guest_console_close
}

guest_kill() {
	[ -n "$GUEST_QEMU_PID" ] && kill "$GUEST_QEMU_PID" 2>/dev/null
	[ -n "$GUEST_PID" ] && kill "$GUEST_PID" 2>/dev/null
	[ -n "$GUEST_PID" ] && wait "$GUEST_PID" 2>/dev/null
	GUEST_PID="" GUEST_QEMU_PID=""
	guest_console_close
}
