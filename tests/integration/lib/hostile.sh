# lib/hostile.sh: the frame of the hand-made TCP attacks (hostile/22-24;
# sourced). Each attack runs against a fresh httpd on tap, once for
# httpd.elf and once for the release build httpd-all.elf when it has been
# built (under $SMP_DESIGN once, for the design's build, itself a release
# build: lib/design.sh); what it sends is the test's own Python (on
# lib/rawtcp.py, with lib/attack.py's Guest).
#
# Offers (besides lib/net.sh):
#   hostile_attack WHAT GUARD MSG [pools]
#       the whole test (python3 and curl needed, else skip): the attack's
#       Python, read from stdin, against each image, each in a subshell of
#       its own, stopping at the first that fails. For each image:
#         - "== IMAGE"; httpd on tap (uk_tap_start) with deadlines far
#           beyond the test (-t 60 -w 60), so that an attacker's connection
#           stays until its own reset, its console input a fifo (Ctrl-T
#           there prints the counters); its first answer
#         - the Python inside the namespace, lib/ on its path, as `python3 -
#           TAP HOST CONSOLE CONSOLE-INPUT GUARD` (what attack.py's Guest
#           reads); its failure is hostile_failed WHAT
#         - the shutdown request (uk_tap_stop): exit status 0, no panic, the
#           exit's sockets line open 0, with `pools` every pool back at
#           exit; the guard's counter GUARD (its name before the number on
#           the console's last "net: guards:" line, net/stats.c) at least 1,
#           else FAIL MSG
#   hostile_failed MSG
#       a guest still running is asked for its counters; the console's last
#       lines, any panic, then FAIL MSG

. "${ROOT:-.}/tests/integration/lib/net.sh"

hostile_failed() {
	if guest_alive "$UK_PID"; then
		printf '\x14' >&"$GUEST_CONSOLE_FD"
		guest_wait_console "$UK_TMP/console" '^pools:' 10 "$UK_PID" || true
	fi
	tr -d '\r' <"$UK_TMP/console" >"$UK_TMP/c"
	tail -n 40 "$UK_TMP/c"
	grep -m1 '^panic:' "$UK_TMP/c" && fail "$1: the guest panicked"
	fail "$1"
}

# hostile_once IMAGE WHAT GUARD MSG POOLS SCRIPT: one image's attack (above).
hostile_once() {
	local image=$1 what=$2 guard=$3 msg=$4 pools=$5 script=$6 n
	echo "== $(basename "$image")"
	UK_CONSOLE_IN=1
	uk_tap_start "$image" "-p 80 -s -t 60 -w 60"
	guest_wait_http "$UK_URL/" 60 "$UK_PID" || hostile_failed "no HTTP answer"

	"${NET_EXEC[@]}" env PYTHONPATH="$ROOT/tests/integration/lib" python3 - "$NETNS_TAP" "$NETNS_GUEST_IP" \
		"$UK_TMP/console" "$GUEST_CONSOLE_IN" "$guard" <<<"$script" || hostile_failed "$what"

	uk_tap_stop
	[ "$UK_RC" = 0 ] || fail "exit status $UK_RC"
	! grep '^panic:' "$UK_TMP/console" || fail "the guest panicked"
	# The last of each line: those of a Ctrl-T during the attack come before.
	grep '^sockets: open' "$UK_TMP/console" | tail -n 1 | grep -Eq '^sockets: open 0,' || fail "sockets left open"
	if [ "$pools" = pools ]; then
		grep '^pools:' "$UK_TMP/console" | tail -n 1 |
			grep -Eq '^pools: .*PBUF_POOL 0;.* rx-lent 0; tcp-sockets 0 udp-sockets 0;' || fail "pools not back at exit"
	fi
	n=$(sed -nE "/^net: guards:/s/.*$guard ([0-9]+).*/\1/p" "$UK_TMP/console" | tail -n 1)
	echo "counted at exit: $guard ${n:-(no such counter)}"
	[ "${n:-0}" -ge 1 ] || fail "$msg (net: guards: ... $guard N)"
}

hostile_attack() {
	local script image images
	needs python3 curl
	script=$(cat)
	images=("$ROOT/$BUILD/apps/httpd.elf")
	if [ -n "${SMP_DESIGN:-}" ]; then
		: # uk_tap_start boots the design's build of httpd.elf
	elif [ -f "$ROOT/$BUILD/apps/httpd-all.elf" ]; then
		images+=("$ROOT/$BUILD/apps/httpd-all.elf")
	else
		echo "(no $BUILD/apps/httpd-all.elf: the release build is not attacked)"
	fi
	for image in "${images[@]}"; do
		(hostile_once "$image" "$1" "$2" "$3" "${4:-}" "$script") || exit $?
	done
}
