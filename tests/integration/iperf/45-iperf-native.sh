#!/usr/bin/env bash
# 45-iperf-native: the iperf3 server (apps/iperf) built for the host, on
# 127.0.0.1, against Debian's own iperf3 -c: 256 MiB up and down, byte for
# byte, iperf3's counts (its --json) equal to the server's own line; four
# streams each way; 256-byte writes with -N; timed runs; options it does not
# offer answered with iperf3's "not implemented"; malformed control messages
# (tests/integration/lib/iperf_hostile.py) closed and counted, after which a
# normal run still works; the counters at exit; bad options refused.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/iperf.sh"

server=$ROOT/$BUILD/host/iperf
[ -x "$server" ] || skip "$server not built"
needs iperf3
tmp=$(mktemp -d)
IPERF_PID=""
trap '[ -n "$IPERF_PID" ] && kill "$IPERF_PID" 2>/dev/null; rm -rf "$tmp"' EXIT

IPERF_ADDR=127.0.0.1 IPERF_PORT=$(free_port) IPERF_CONSOLE=$tmp/console
"$server" -a 127.0.0.1 -p "$IPERF_PORT" -s -I 10 >"$IPERF_CONSOLE" 2>&1 &
IPERF_PID=$!
iperf_wait_listening 10

M=$((1024 * 1024))
iperf_both_ways "--bytes $((256 * M))" -n 256M
iperf_both_ways "--bytes $((256 * M)) --streams 4" -n 256M -P 4
iperf_both_ways "--bytes $((16 * M)) --len 256" -n 16M -l 256 -N
# -k: the server sends exactly 1000 writes of 1000 bytes; iperf3's client
# stops after 1000 reads, which may hold less (it counts reads as blocks).
iperf_transfer "--bytes $((1000 * 1000)) --len 1000 --reverse --receiver-may-lag" -k 1000 -l 1000 -R
# Timed: an upload still ends exact (the server reads on to the client's
# count); a download's client stops counting at TEST_END, as iperf3 does.
iperf_transfer "--streams 2" -t 2 -P 2
iperf_transfer "--reverse --receiver-may-lag" -t 2 -R

echo "== options the server does not offer: iperf3's own 'not implemented' error"
for opt in "-u" "--bidir" "-O 1" "-M 1200"; do
	# shellcheck disable=SC2086
	iperf_client -t 1 $opt
	grep -q '"error":.*not implemented' "$IPERF_JSON" || { cat "$IPERF_JSON"; fail "iperf3 $opt was not refused"; }
	rm -f "$IPERF_JSON"
done

echo "== malformed control messages"
out=$(python3 "$ROOT/tests/integration/lib/iperf_hostile.py" 127.0.0.1 "$IPERF_PORT") ||
	{ echo "$out"; fail "a malformed message got the wrong answer"; }
echo "$out"
kill -0 "$IPERF_PID" || fail "the server died"
iperf_both_ways "--bytes $((32 * M))" -n 32M

echo "== shutdown cookie, counters"
iperf_shutdown
wait "$IPERF_PID"
rc=$?
IPERF_PID=""
iperf_console | grep -vE '^iperf: test [0-9]+ from .*: (upload|download)'
[ $rc = 0 ] || fail "exit status $rc after the shutdown cookie"
# Tests begun: 11 good transfers, 4 refused options, and the hostile script's
# 7 control connections that got past their cookie (its "expect:" line gives
# the rest: two bad cookies and a busy one are no tests).
want='^iperf: tests 22, done 11, refused 5, client terminated 0; bad cookie 2, bad length 1, bad json 3, bad state 1, busy 1, timed out 0, closed early 1, socket errors 0$'
iperf_counters | contains -E "$want" || fail "counters: $(iperf_counters)"
grep -q '^iperf: stopped (shutdown request)$' "$IPERF_CONSOLE" || fail "no clean stop"

echo "== SIGTERM stops it; bad options are refused"
port=$(free_port)
"$server" -a 127.0.0.1 -p "$port" -q >"$tmp/quiet" 2>&1 &
IPERF_PID=$!
sleep 0.5
kill -TERM "$IPERF_PID"
wait "$IPERF_PID"
rc=$?
IPERF_PID=""
[ $rc = 0 ] || fail "exit status $rc on SIGTERM"
"$server" -p 70000 2>/dev/null; [ $? = 2 ] || fail "-p 70000 accepted"
"$server" -I 0 2>/dev/null; [ $? = 2 ] || fail "-I 0 accepted"
"$server" extra 2>/dev/null; [ $? = 2 ] || fail "a stray argument accepted"
echo "all good"
