#!/usr/bin/env bash
# The soak (`bench/run soak`, `make soak`) in short: 20,000 keep-alive
# requests and 3,000 new connections against the unikernel's httpd on tap.
# Passes when the soak exits 0 and its report shows what that means: every ab
# run complete with none failed, every pools field after the load equal to its
# value after the warm-up (the heap's break within the trim slack), the
# guest's exit status 0. About 20 s here; on a failure the log holds the
# soak's report and the last lines of the guest's console.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
[ -f "$ROOT/$BUILD/apps/httpd.elf" ] || fail "no $BUILD/apps/httpd.elf"
netns_usable || skip "tap back-end needs root, ip and /dev/net/tun"
command -v ab >/dev/null && command -v curl >/dev/null || skip "ab or curl missing"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Under make test-smp, the design's build on its CPUs (lib/design.sh).
design_image "$ROOT/$BUILD/apps/httpd.elf"
BUILD=$BUILD "$ROOT/bench/run" soak KEEPALIVE=20000 NEW=3000 CONC_K="8 64" CONC_N=16 TIMEOUT=60 OUT="$out" \
	IMAGE="$DESIGN_IMAGE" SMP="$DESIGN_SMP" KOPTS="$DESIGN_KOPTS"
rc=$?
[ $rc = 77 ] && skip "the soak could not make a namespace here"
report=$out/report.md
[ -f "$report" ] || fail "bench/run soak exited with $rc and wrote no report"
# On a failure the guest's console says more than the report.
[ $rc = 0 ] || { tail -n 40 "$out/raw/console.log"; fail "bench/run soak exited with $rc"; }

grep -q '^## Verdict: PASS$' "$report" || fail "the report's verdict is not PASS"
# Every load row ok, with the requests asked for.
rows=$(grep -c '^| \(warmup[0-9]*-k\|warmup[0-9]*-new\|keepalive\|new\) | `ab ' "$report")
[ "$rows" -ge 3 ] || fail "the report lists $rows ab runs"
! grep '^| [a-z0-9-]* | `ab ' "$report" | contains -v '| ok |$' || fail "an ab run is not ok"
grep -q '^| keepalive | 20000 | 20000 | 0 | 0 | ' "$report" || fail "keep-alive phase: not 20000 complete, 0 failed"
grep -q '^| new | 3000 | 3000 | 0 | 0 | ' "$report" || fail "new-connection phase: not 3000 complete, 0 failed"
# Every pools field compared, each equal (heap-bytes: within the slack).
for f in TCP_PCB TCP_PCB_LISTEN TCP_SEG PBUF_POOL PBUF_REF/ROM lwip-heap rx-lent tcp-sockets udp-sockets \
	fds malloc-bytes heap-high-water; do
	grep -q "^| $f | .* | equal |\$" "$report" || fail "pools field $f not equal after the load"
done
grep -Eq '^\| heap-bytes \| .* \| (equal|within the trim slack \([-+][0-9]+\)) \|$' "$report" ||
	fail "heap-bytes outside the trim slack"
! grep -q 'DIFFERS' "$report" || fail "a pools field differs"
grep -q '^Guest exit status after /__shutdown: 0\.$' "$report" || fail "guest exit status not 0"
echo "all good"
