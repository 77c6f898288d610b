#!/usr/bin/env bash
# 62-bench-guard: the benchmark's quiet-host guard, with the load average
# faked through LOADAVG_FILE (no real load needed). A busy host (3.50 > the
# default MAX_LOAD 1.0) makes the batch refuse with exit 3 and say why, leaving
# no results folder; MAX_LOAD above it lets it start, marked passed; ORDER=shuffle
# records each repetition's order in meta.txt; FORCE=1
# starts it, and meta.txt and summary.md say it was forced. The runs are tiny
# native ones (the host's httpd on the user back-end, 1 s per load, no QEMU),
# alternating two placements and both load generators, so the batch's rows,
# its per-run CPU accounting and the summary's sections for them are checked
# too. The bulk, kvm and costs specs refuse a busy host the same way
# (bench/runner/guard.py), and a bad setting of any spec is refused with
# exit 2 before anything starts. Nothing here depends on speed.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
[ -x "$ROOT/$BUILD/host/httpd" ] || skip "$BUILD/host/httpd not built"
py=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 missing"
command -v ab >/dev/null && command -v curl >/dev/null && command -v wrk >/dev/null || skip "ab, curl or wrk missing"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "3.50 2.00 1.00 3/200 12345" >"$tmp/busy"
run() { # OUT-NAME settings...: bench/run bench on a tiny native batch
	local out=$tmp/$1
	shift
	env GUESTS=native BACKENDS=user LOADS=k1 REPS=1 LOAD_SECS=1 IDLE_SECS=0 HOSTPROBE_SECS=0.25 LOADAVG_FILE="$tmp/busy" \
		OUT="$out" "$@" "$ROOT/bench/run" bench >"$out.log" 2>&1
}

echo "== a busy host: refused, with the reason"
run refused; rc=$?
cat "$tmp/refused.log"
[ $rc = 3 ] || fail "exit $rc on a busy host, expected 3"
grep -q 'refusing to start: the 1-minute load average is 3.50' "$tmp/refused.log" || fail "the refusal does not give the load"
grep -q 'MAX_LOAD=1.0' "$tmp/refused.log" && grep -q 'FORCE=1' "$tmp/refused.log" || fail "the refusal does not say how to proceed"
grep -q 'what is running now' "$tmp/refused.log" || fail "the refusal does not show what runs"
[ ! -e "$tmp/refused" ] || fail "a refused batch left a results folder"

echo "== bad settings"
run bad MAX_LOAD=high; rc=$?
[ $rc = 2 ] && grep -q 'MAX_LOAD must be a number' "$tmp/bad.log" || fail "MAX_LOAD=high: exit $rc, $(cat "$tmp/bad.log")"
run bad FORCE=yes; rc=$?
[ $rc = 2 ] || fail "FORCE=yes: exit $rc"
run bad ORDER=random; rc=$?
[ $rc = 2 ] && grep -q "ORDER must be fixed or shuffle" "$tmp/bad.log" || fail "ORDER=random: exit $rc"
run bad PLACEMENTS=vcpu7; rc=$?
[ $rc = 2 ] && grep -q "unknown placement 'vcpu7'" "$tmp/bad.log" || fail "PLACEMENTS=vcpu7: exit $rc"

echo "== MAX_LOAD above the load: the guard passes"
run passed MAX_LOAD=4 || { cat "$tmp/passed.log"; fail "the batch failed with MAX_LOAD=4"; }
grep -qx 'guard: passed: 1-minute load average 3.50 <= MAX_LOAD 4 at start' "$tmp/passed/meta.txt" ||
	fail "meta.txt: $(grep guard "$tmp/passed/meta.txt")"
grep -q 'Quiet-host guard passed' "$tmp/passed/summary.md" || fail "summary.md does not say the guard passed"

echo "== ORDER=shuffle: each repetition's order is recorded"
run shuffled MAX_LOAD=4 ORDER=shuffle REPS=2 || { cat "$tmp/shuffled.log"; fail "the shuffled batch failed"; }
grep -q '; order: shuffle$' "$tmp/shuffled/meta.txt" && grep -qx 'order rep 1: native' "$tmp/shuffled/meta.txt" &&
	grep -qx 'order rep 2: native' "$tmp/shuffled/meta.txt" || fail "meta.txt lacks the shuffled order: $(grep order "$tmp/shuffled/meta.txt")"
[ "$(($(wc -l <"$tmp/shuffled/runs.csv") - 1))" = 2 ] || fail "the shuffled batch ran $(($(wc -l <"$tmp/shuffled/runs.csv") - 1)) rows, expected 2"

echo "== FORCE=1 on a busy host: it runs, and says so"
nproc_ok=$([ "$(nproc)" -ge 2 ] && echo 1 || echo 0)
placements=none
[ "$nproc_ok" = 1 ] && command -v taskset >/dev/null && placements="none vcpu0"
run forced FORCE=1 PLACEMENTS="$placements" LOADGEN="ab wrk" || { cat "$tmp/forced.log"; fail "the forced batch failed"; }
cat "$tmp/forced.log"
m=$tmp/forced/meta.txt
grep -qx 'guard: FORCED: 1-minute load average 3.50 > MAX_LOAD 1.0 at start (FORCE=1): not a quiet-host batch' "$m" ||
	fail "meta.txt does not mark the batch forced"
grep -qx 'load at start: 3.50 2.00 1.00' "$m" && grep -qx 'load at end: 3.50 2.00 1.00' "$m" || fail "meta.txt lacks the load at start and end"
grep -qE '^flagged runs: [0-9]+ of [0-9]+ ' "$m" || fail "meta.txt lacks the flagged runs"
for when in start end; do
	for kib in 256 2048 8192; do
		grep -qE "^host probe $when( \(core [0-9]+\))?: $kib KiB: min [0-9]+ median [0-9]+ max [0-9]+ M updates/s over [0-9]+ windows of 250 ms\$" "$m" ||
			fail "meta.txt lacks the host probe at $when for $kib KiB"
	done
	[ -s "$(dirname "$m")/raw/hostprobe-$when.txt" ] || fail "no raw/hostprobe-$when.txt"
done
grep -qE '^image native: .*build/host/httpd, .*-O2' "$m" || fail "meta.txt lacks the native image's build flags"
grep -qF '**FORCED batch, not a quiet host:**' "$tmp/forced/summary.md" || fail "summary.md does not say the batch was forced"
grep -qF 'Load average (1, 5, 15 min) at start: 3.50 2.00 1.00; at end: 3.50 2.00 1.00.' "$tmp/forced/summary.md" ||
	fail "summary.md lacks the load average"
grep -qE '^Flagged busy: [0-9]+ of [0-9]+ runs' "$tmp/forced/summary.md" || fail "summary.md lacks the flagged runs"

echo "== the batch's rows: one per placement and load generator, every field accounted"
n=$(echo $placements | wc -w)
[ "$(($(wc -l <"$tmp/forced/runs.csv") - 1))" = $((2 * n)) ] || fail "runs.csv: expected $((2 * n)) rows"
"$py" - "$tmp/forced/runs.csv" <<'PY' || fail "runs.csv rows are not what one native run gives"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    assert r["emulator"] == "host" and r["guest"] == "native" and r["load"] == "k1", r
    assert r["loadgen"] in ("ab", "wrk") and r["placement"] in ("none", "vcpu0"), r
    assert r["status"] == "ok" and int(r["requests"]) > 0 and r["failed"] == "0" and r["non2xx"] == "0", r
    for f in ("rps", "p50_ms", "p99_ms", "server_cpu_s", "cpu_us_per_req", "loadgen_cpu_s", "others_cpu_pct", "steal_pct"):
        float(r[f])  # every one measured
    assert float(r["p50_ms"]) <= float(r["p99_ms"]), r
    assert r["busy"] == ("1" if float(r["others_cpu_pct"]) > 10 else "0"), r
PY
grep -q '^## Each guest under each load generator' "$tmp/forced/summary.md" || fail "no load-generator comparison"
if [ "$n" = 2 ]; then
	grep -q '^## Each guest under each placement' "$tmp/forced/summary.md" || fail "no placement comparison"
fi

echo "== the other batches share the guard: bulk, KVM exits, costs refuse a busy host"
guarded() { # NAME COMMAND...: refused with exit 3, the reason, and no results folder
	local name=$1 rc
	shift
	(cd "$ROOT" && env LOADAVG_FILE="$tmp/busy" OUT="$tmp/$name" "$@") >"$tmp/$name.log" 2>&1
	rc=$?
	[ $rc = 3 ] && grep -q 'refusing to start: the 1-minute load average is 3.50' "$tmp/$name.log" &&
		[ ! -e "$tmp/$name" ] || { cat "$tmp/$name.log"; fail "$name on a busy host: exit $rc"; }
}
guarded bulk GUESTS=native LOADS=up HTTP_LOADS=none bench/run bulk
guarded kvm bench/run kvm
guarded costs bench/run costs REPS=1 ROUNDS=10
(cd "$ROOT" && OUT="$tmp/costs-bad" bench/run costs REPS=five) >"$tmp/costs-bad.log" 2>&1
[ $? = 2 ] && grep -q "REPS must be a whole number" "$tmp/costs-bad.log" && [ ! -e "$tmp/costs-bad" ] ||
	fail "costs REPS=five: $(cat "$tmp/costs-bad.log")"
(cd "$ROOT" && bench/run costs ROUND=10) >"$tmp/typo.log" 2>&1
[ $? = 2 ] && grep -q "spec costs has no setting ROUND" "$tmp/typo.log" || fail "a misspelt setting: $(cat "$tmp/typo.log")"
(cd "$ROOT" && bench/run nosuch) >"$tmp/nosuch.log" 2>&1
[ $? = 2 ] && grep -q "no spec 'nosuch'" "$tmp/nosuch.log" || fail "an unknown spec: $(cat "$tmp/nosuch.log")"
echo "all good"
