#!/usr/bin/env bash
# 60-bench-summary: bench/summarise.py on the fixed results in
# tests/fixtures/bench (3 repetitions, 3 guests, both back-ends, with a failed
# boot, an ab error, non-2xx answers and listen overflows): the summary must
# match expected-summary.md byte for byte, the chart must be a PNG, and bad
# input must give a clear error (exit 2), not a traceback.
set -uo pipefail
ROOT=${ROOT:-$(pwd)}
. "$ROOT/tests/integration/lib-net.sh"
py=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 missing"
fx=$ROOT/tests/fixtures/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp "$fx/runs.csv" "$fx/guests.csv" "$fx/meta.txt" "$tmp/"
"$py" "$ROOT/bench/summarise.py" "$tmp" >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "summarise failed"; }
cat "$tmp/stdout"
expect_file "$tmp/summary.md" "$fx/expected-summary.md"
grep -q 'ab -k -c 1 .*2900 (2755-3045)' "$tmp/stdout" || fail "printed table lacks the linux k1 median"
if command -v gnuplot >/dev/null; then
	[ "$(head -c 8 "$tmp/chart.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "chart.png is not a PNG"
fi

echo "== bad input"
mkdir "$tmp/bad"
"$py" "$ROOT/bench/summarise.py" "$tmp/bad" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'runs.csv' "$tmp/err" || fail "missing CSV: exit $rc, $(cat "$tmp/err")"
printf 'a,b\n1,2\n' >"$tmp/bad/runs.csv"
cp "$fx/guests.csv" "$tmp/bad/"
"$py" "$ROOT/bench/summarise.py" "$tmp/bad" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'unexpected header' "$tmp/err" || fail "bad header: exit $rc, $(cat "$tmp/err")"
{ head -n1 "$fx/runs.csv"; echo "1,tap,linux,k1,1"; } >"$tmp/bad/runs.csv"
"$py" "$ROOT/bench/summarise.py" "$tmp/bad" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'wrong number of fields' "$tmp/err" || fail "short row: exit $rc, $(cat "$tmp/err")"
echo "all good"
