#!/usr/bin/env bash
# The global-lock design (make VARIANT=smp-lock) on two vCPUs under TCG
# (MTTCG), tap: CPU 1 runs the network, CPU 0 httpd. GET / byte for byte,
# ab -k -c 8 and ab -c 16 with zero failed requests, a clean exit with every
# socket closed, and the counters consistent: IPIs sent equal IPIs received
# over both CPUs (but one wake per CPU in flight at exit), more lock acquisitions than requests, no wake counted as
# ending a park more often than one was sent. Prints acquisitions, contended
# acquisitions and IPIs per request.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
needs ab curl
image=$ROOT/$BUILD/apps/httpd-smp-lock.elf
[ -f "$image" ] || fail "no $image: make VARIANT=smp-lock"
UK_TIMEOUT=400 UK_QEMU_OPTS="--smp 2"
uk_tap_serve "$image" "-p 80 -s" "smp=2"
url=$UK_URL
grep -q '^net: global lock' "$UK_TMP/console" && fail "counters printed before exit?"

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
grep -q '^net: global lock: network on cpu 1;' "$c" || fail "the network did not run on CPU 1"
exec python3 - "$c" "$requests" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
requests = int(sys.argv[2])
def fail(why):
    print("FAIL: " + why)
    sys.exit(1)
# Every CPU's line: "ipis sent N, received M" (kernel/smp.c).
sent = [int(x) for x in re.findall(r"ipis sent (\d+)", text)]
received = [int(x) for x in re.findall(r"received (\d+);", text)]
if len(sent) < 2 or len(sent) != len(received):
    fail("no per-CPU IPI counters: %s %s" % (sent, received))
# One wake per target may still be in flight when the exit's report is
# written (the network CPU stops at the lock the exit keeps): no more.
if not 0 <= sum(sent) - sum(received) <= len(sent):
    fail("IPIs sent %d, received %d" % (sum(sent), sum(received)))
m = re.search(r"locks:.*?net (\d+) \(contended (\d+), pauses (\d+)", text)
if not m:
    fail("no net lock counters")
acq, contended, pauses = map(int, m.groups())
if acq <= requests:
    fail("lock acquisitions %d not above requests %d" % (acq, requests))
w = re.search(r"wakes to the app cpu (\d+) \(ended a park (\d+), before the halt (\d+)\).*"
              r"wakes to the network cpu (\d+) \(ended a park (\d+), before the halt (\d+)\)", text)
if not w:
    fail("no wake counters")
a_sent, a_ended, a_early, n_sent, n_ended, n_early = map(int, w.groups())
if a_ended + a_early > a_sent or n_ended + n_early > n_sent:
    fail("more wakes seen than sent: %s" % (w.groups(),))
print("per request (%d): lock acquisitions %.1f, contended %.2f, pauses %.1f, IPIs %.2f; "
      "wakes to app %.2f (wasted %d), to network %.2f (wasted %d)" % (
      requests, acq / requests, contended / requests, pauses / requests, sum(sent) / requests,
      a_sent / requests, a_sent - a_ended, n_sent / requests, n_sent - n_ended))
print("all good")
PY
