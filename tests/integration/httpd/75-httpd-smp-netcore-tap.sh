#!/usr/bin/env bash
# The network core (make VARIANT=smp-netcore) on two vCPUs under TCG
# (MTTCG), tap: CPU 1 owns the network, CPU 0 runs httpd and hands it every
# socket call and poll() through rings. GET / byte for byte, ab -k -c 8 and
# ab -c 16 with zero failed requests, a clean exit with every socket closed
# and the network core stopped, the counters consistent
# (lib/smp_counters.py's checks for smp-netcore). Then tools/serve at SMP=2 driven through a
# pseudo-terminal: Ctrl-T prints the counters while httpd waits in a poll()
# the network core runs, and Ctrl-C, relayed to that wait, stops httpd with
# exit 0 (lib/serve_console.py).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
needs ab curl
image=$ROOT/$BUILD/apps/httpd-smp-netcore.elf
[ -f "$image" ] || fail "no $image: make VARIANT=smp-netcore"
UK_TIMEOUT=400 UK_QEMU_OPTS="--smp 2"
uk_tap_serve "$image" "-p 80 -s" "smp=2"
url=$UK_URL
grep -q '^handoff:' "$UK_TMP/console" && fail "counters printed before exit?"

expect_get "$url/" "$UK_TMP/got" "$HTTPD_HELLO"
requests=1
ab_load "$url/" 4000 8 -k || fail "ab -k -c 8"
ab_load "$url/" 2000 16 || fail "ab -c 16"
requests=$((requests + 6000))

uk_tap_stop
c=$UK_TMP/console
[ "$UK_RC" = 0 ] || fail "exit status $UK_RC after the shutdown request"
grep -q '^httpd: stopped (shutdown request)$' "$c" || fail "no clean stop"
grep -Eq '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' "$c" ||
	fail "sockets left open, overflows or resets"
python3 "$ROOT/tests/integration/lib/smp_counters.py" smp-netcore "$c" "$requests" || fail "counters"

PYTHON=$(command -v /usr/bin/python3 || command -v python3)
echo "== tools/serve SMP=2 at a terminal, Ctrl-T then Ctrl-C"
SMP=2 "$PYTHON" "$ROOT/tests/integration/lib/serve_console.py" --serve "$ROOT/tools/serve" --image "$image" \
	--net user --stop key || fail "serve at a terminal at SMP=2 (Ctrl-T, Ctrl-C)"
echo "all good"
