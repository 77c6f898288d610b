#!/usr/bin/env bash
# 48-iperf-uk-hostile-tap: malformed iperf3 control messages against the
# unikernel's server on tap (tests/integration/lib/iperf_hostile.py: a bad
# cookie, an HTTP request, garbage and ill-typed JSON, a 2 GiB length, a
# state out of order, UDP refused, a second client while a test runs): each
# gets its answer byte for byte and a clean close, the server counts each
# under its reason, and a normal transfer each way still works after them.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/iperf.sh"
iperf_uk_boot tap 200 "%NET% -- -s"

echo "== malformed control messages"
out=$("${NET_EXEC[@]}" python3 "$ROOT/tests/integration/lib/iperf_hostile.py" "$IPERF_ADDR" "$IPERF_PORT") ||
	{ echo "$out"; iperf_console; fail "a malformed message got the wrong answer"; }
echo "$out"
kill -0 "$IPERF_PID" || { iperf_console; fail "the guest died"; }

M=$((1024 * 1024))
iperf_transfer "--bytes $((32 * M))" -n 32M
iperf_transfer "--bytes $((32 * M)) --reverse" -n 32M -R

# Tests begun: the hostile script's 7 that got past their cookie, and the 2
# transfers; the rest as its "expect:" line says.
iperf_uk_stop 'tests 9, done 2, refused 1, client terminated 0; bad cookie 2, bad length 1, bad json 3, bad state 1, busy 1, timed out 0, closed early 1, socket errors 0' ''
echo "all good"
