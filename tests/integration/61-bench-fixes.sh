#!/usr/bin/env bash
# 61-bench-fixes: bench/counters.py and bench/fixes.py on the fixed results in
# tests/fixtures/bench/fixes (3 repetitions of linux, baseline, step1-writev,
# all, all-minus-writev on tap at k1 and c16; one run with failed requests;
# Ctrl-T dumps of baseline and all, CRLF line ends, one dump missing). No QEMU.
# Checks the numbers worked out by hand: medians, min-max, gains, losses and
# counter ratios, then the whole report byte for byte, the chart, and that the
# switch order agrees with mk/variants.mk.
set -uo pipefail
ROOT=${ROOT:-$(pwd)}
. "$ROOT/tests/integration/lib-net.sh"
py=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 missing"
fx=$ROOT/tests/fixtures/bench/fixes
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$fx/raw" "$fx/runs.csv" "$fx/guests.csv" "$fx/meta.txt" "$tmp/"

"$py" "$ROOT/bench/counters.py" "$tmp" || fail "counters.py failed"
"$py" "$ROOT/bench/fixes.py" "$tmp" >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "fixes.py failed"; }
cat "$tmp/stdout"
md=$tmp/fixes.md

# has LINE: the report holds this exact table row.
has() { grep -qxF -- "$1" "$md" || fail "fixes.md lacks the row: $1"; }

echo "== steps: medians (min-max) and the gain over the row above"
has "| linux | 1100 (1000-1200) | 310 (300-320) |"
has "| baseline | 2100 (2000-2200) x1.91 | 620 (600-640) x2.00 |"
# rep 3 of writev k1 (9999 req/s) had failed requests: left out, and said so.
has "| +writev | 4100 (4000-4200) x1.95 [n=2/3] | 630 (620-640) x1.02 |"
# Without step 7 in the run, the last row is "all", not "+timer reload".
has "| all | 8200 (8000-8400) x2.00 | 1250 (1240-1260) x1.98 |"
has "| all / baseline | x3.90 | x2.02 |"
has "| all / linux | x7.45 | x4.03 |"
grep -q "rep 3 tap step1-writev k1: 3 failed" "$md" || fail "the failed run is not listed"

echo "== leave one out"
has "| all - writev | 6150 (6000-6300) -25% | 1250 (1250-1250) +0% |"

echo "== counters: deltas across each load over ab's requests"
has "| sockets visited per egress pass | 1024 -> 4.00 | 1024 -> 5.00 |"
has "| network polls per request | 10.0 -> 1.00 | 5.00 -> 1.00 |"
has "| spins per request | 0.00 -> 2.00 | 0.00 -> 1.50 |"
has "| parks per request | 0.00 -> 0.10 | 0.00 -> 0.10 |"
has "| timer reloads skipped (%) | 0.00 -> 75.0 | 0.00 -> 75.0 |"
has "| listener slots walked per check | 1024 -> - | 1024 -> 1.00 |"
# counters.csv: 11 rows (all's c16 in rep 3 had no dump), generic columns.
[ "$(($(wc -l <"$tmp/counters.csv") - 1))" = 11 ] || fail "counters.csv: expected 11 rows"
head -n1 "$tmp/counters.csv" | tr ',' '\n' >"$tmp/cols"
for c in kernel.timer_reloads_skipped net.polls_with_work net.frames_out kernel.spins_hits \
	sockets.tcp_write_enomem per_req.kernel.parks; do
	grep -qx "$c" "$tmp/cols" || fail "counters.csv lacks column $c"
done
grep -q '^2,tap,all,k1,16000,5.000,1.500,1.000,0.200,2.000,75.000,,' "$tmp/counters.csv" ||
	fail "counters.csv: rep 2 all k1 ratios wrong"

echo "== boot and idle"
has "| all | 0.26 (0.25-0.27) | 0.40% |"

echo "== the whole report"
expect_file "$md" "$fx/expected-fixes.md"
if command -v gnuplot >/dev/null; then
	[ "$(head -c 8 "$tmp/fixes.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "fixes.png is not a PNG"
fi

echo "== the switch order is mk/variants.mk's"
want=$(sed -n 's/^SWITCH_NAMES := //p' "$ROOT/mk/variants.mk")
got=$(cd "$ROOT/bench" && "$py" -c 'import fixes; print(" ".join(s for s, _ in fixes.SWITCHES))')
[ "$want" = "$got" ] || fail "bench/fixes.py SWITCHES ($got) differ from mk/variants.mk ($want)"

echo "== bad input"
mkdir "$tmp/bad"
"$py" "$ROOT/bench/fixes.py" "$tmp/bad" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'runs.csv' "$tmp/err" || fail "missing CSV: exit $rc, $(cat "$tmp/err")"
echo "all good"
