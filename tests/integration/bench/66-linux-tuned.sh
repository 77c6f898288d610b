#!/usr/bin/env bash
# 66-linux-tuned: the benchmark's linux-tuned guest (tools/lib/guests.sh): the
# Linux image with idle=poll mitigations=off busy_poll=50 on its command line.
# Its init must write 50 to net.core.busy_poll and net.core.busy_read and print
# what it reads back; the guest must serve (GET /, a short ab -k, 0 failed,
# 0 non-2xx); idle=poll must show as what it is, an idle guest whose vCPU
# never halts (its vCPU thread running or runnable over 60% of 3 s of idle,
# whatever else loads the host; the plain guest's idles near 1%); the shutdown request must end QEMU with the app's 0. A
# malformed busy_poll= must end the guest with init's status 105 and a message.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tools/lib/guests.sh"
linux_test curl ab

GUESTS_BUILD=$ROOT/$BUILD guest_resolve linux-tuned || fail "guests.sh does not know linux-tuned"
echo "linux-tuned: $GUEST_PREFIX"
for opt in idle=poll mitigations=off busy_poll=50; do
	[[ " $GUEST_PREFIX " == *" $opt "* ]] || fail "linux-tuned's command line lacks $opt"
done

echo "== booting linux-tuned (user)"
port=$(free_port)
"$QEMU_RUN" --net user --hostfwd "$port:8080" --timeout 200 --append "$GUEST_PREFIX $USER_GUEST_NET -- -p 8080 -s" \
	"$GUEST_KERNEL" "$GUEST_INITRD" -- -pidfile "$tmp/qemu.pid" </dev/null >"$tmp/console" 2>&1 &
pid=$!
guest_wait_http "http://127.0.0.1:$port/" 150 "$pid" || { cat "$tmp/console"; fail "no HTTP answer"; }
tr -d '\r' <"$tmp/console" | contains -x 'init: net.core.busy_poll=50 net.core.busy_read=50' ||
	{ cat "$tmp/console"; fail "init did not set busy polling"; }
curl -s "http://127.0.0.1:$port/" | contains '^Hello from httpd' || fail "GET / gave no page"
ab_load "http://127.0.0.1:$port/" 300 4 -k || fail "ab -k failed"

# The vCPU thread's time running or waiting to run (schedstat, ns): a vCPU
# that never halts wants a core all the time, however many other processes
# share the host (its share of a busy host alone would say nothing).
qpid=$(cat "$tmp/qemu.pid")
vcpu=""
for t in /proc/"$qpid"/task/*; do [ "$(cat "$t/comm")" = "CPU 0/TCG" ] && vcpu=$t; done
[ -n "$vcpu" ] || fail "no vCPU thread named 'CPU 0/TCG' in QEMU $qpid"
wanted() { local run wait _; read -r run wait _ <"$vcpu/schedstat"; echo $((run + wait)); }
sleep 1
w0=$(wanted) s0=$(date +%s%N)
sleep 3
w1=$(wanted) s1=$(date +%s%N)
pct=$(awk -v w=$((w1 - w0)) -v s=$((s1 - s0)) 'BEGIN { printf "%.0f", 100 * w / s }')
echo "idle: the vCPU thread ran or waited to run $pct% of the time"
[ "$pct" -gt 60 ] || fail "the vCPU wanted a core only $pct% of the time while idle: idle=poll is not in effect"

curl -s -m 5 "http://127.0.0.1:$port/__shutdown" >/dev/null
wait "$pid"
rc=$? pid=""
rm -f "$tmp/qemu.pid"
[ $rc = 0 ] || { cat "$tmp/console"; fail "exit status $rc after the shutdown request"; }

echo "== a malformed busy_poll=: init ends the guest with 105"
"$QEMU_RUN" --net user --timeout 200 --append "${GUEST_PREFIX/busy_poll=50/busy_poll=5x} $USER_GUEST_NET -- -p 8080 -s" \
	"$GUEST_KERNEL" "$GUEST_INITRD" </dev/null >"$tmp/console" 2>&1
rc=$?
tr -d '\r' <"$tmp/console" | grep -v '^$' | tail -n 3
[ $rc = 105 ] || fail "exit status $rc, expected init's 105"
tr -d '\r' <"$tmp/console" | contains "init: busy_poll= wants microseconds (0-999999), not '5x'" || fail "no message about busy_poll="
echo "all good"
