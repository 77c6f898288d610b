#!/usr/bin/env bash
# test-timeout: 400
# Many short connections and keep-alive requests on both CPUs at once: the
# short soak (test 36's: 20,000 keep-alive requests at -c 8 and 64, 3,000
# new connections at -c 16, after two warm-up rounds) against the
# global-lock design (make VARIANT=smp-lock) on two vCPUs under MTTCG,
# CPU 1 running the network and CPU 0 httpd. A wake-up lost between them
# leaves a request unanswered, which ab's 60 s limit fails; a leak shows as
# a pools field (pcbs, segments, pbufs, lent buffers, sockets, descriptors,
# malloc'd bytes) not back at its value after the warm-up. Then the exit's
# counters must be consistent (lib/smp_lock_counters.py: IPIs sent equal
# received, wakes seen no more than sent).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
image=$BUILD/apps/httpd-smp-lock.elf
[ -f "$ROOT/$image" ] || fail "no $image: make VARIANT=smp-lock"
netns_usable || skip "tap back-end needs root, ip and /dev/net/tun"
command -v ab >/dev/null && command -v curl >/dev/null || skip "ab or curl missing"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

BUILD=$BUILD "$ROOT/bench/run" soak QUICK=1 IMAGE="$image" SMP=2 KOPTS=smp=2 OUT="$out"
rc=$?
[ $rc = 77 ] && skip "the soak could not make a namespace here"
report=$out/report.md
[ -f "$report" ] || fail "bench/run soak exited with $rc and wrote no report"
[ $rc = 0 ] || { tail -n 40 "$out/raw/console.log"; fail "bench/run soak exited with $rc"; }
grep -q '^## Verdict: PASS$' "$report" || fail "the report's verdict is not PASS"
grep -q '^| keepalive | 20000 | 20000 | 0 | 0 | ' "$report" || fail "keep-alive phase: not 20000 complete, 0 failed"
grep -q '^| new | 3000 | 3000 | 0 | 0 | ' "$report" || fail "new-connection phase: not 3000 complete, 0 failed"
! grep -q 'DIFFERS' "$report" || fail "a pools field differs"
grep -q '^Guest exit status after /__shutdown: 0\.$' "$report" || fail "guest exit status not 0"

console=$out/raw/console.log
tr -d '\r' <"$console" >"$out/console"
grep -q '^net: global lock: network on cpu 1;' "$out/console" || fail "the network did not run on CPU 1"
# Requests the guest served: every ab run's (warm-up and soak) complete count.
requests=$(awk -F'|' '/^\| [a-z0-9-]+ \| `ab / { gsub(/ /, "", $4); n += $4 } END { print n + 0 }' "$report")
[ "$requests" -gt 23000 ] || fail "the report counts $requests requests"
exec python3 "$ROOT/tests/integration/lib/smp_lock_counters.py" "$out/console" "$requests"
