#!/usr/bin/env bash
# 63-bench-columns: the summary's new columns on a fixed CSV
# (tests/fixtures/bench/columns: linux, uk and native on tap at k1 and c1, 3
# repetitions, under two emulators; a forced batch; one run flagged busy, one
# with non-2xx answers, one guest whose shutdown was unclean). Every number
# is worked out by hand from runs.csv below: CPU per request and its ratio to
# the reference guest, p50 and p99, which runs count (busy and non-2xx runs do
# not, unless --include-busy for the busy one; the unclean shutdown's runs
# do, marked ~), the header's load average, guard and flagged runs, the
# comparison across emulators, and the chart's ratios. No QEMU.
set -uo pipefail
ROOT=${ROOT:-$(pwd)}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/bench.sh"
bench_setup bench/columns
md=$tmp/summary.md

# row EMULATOR TEXT: the main table of emulator EMULATOR has the row TEXT.
row() {
	awk -v s="## back-end \`tap\`, QEMU $1, placement none, ab" '$0 == s { on = 1; next } /^#/ { on = 0 } on' "$md" |
		contains -xF -- "$2" || fail "QEMU $1's main table lacks the row: $2"
}

bench_summarise
cat "$tmp/stdout"

echo "== the header: a forced batch, its load average, the busy run"
has "**FORCED batch, not a quiet host:** 1-minute load average 3.50 > MAX_LOAD 1.0 at start"
has "Load average (1, 5, 15 min) at start: 3.50 2.00 1.00; at end: 2.75 2.10 1.05."
has "Flagged busy: 1 of 30 runs (other processes took more than 10% of a core); left out of the medians."
grep -q "FORCED batch" "$tmp/stdout" || fail "the printed summary does not say the batch was forced"

echo "== QEMU 7.2: requests/s, CPU us/req and their ratios to linux, p50, p99"
# linux k1: 2000 2200 2400 req/s; 500 450 400 us; p50 .40 .44 .48; p99 1.0 1.1 1.2.
row 7.2 "| ab -k -c 1 | linux | 2200 (2000-2400) | ref | 450.0 (400.0-500.0) | ref | 0.440 | 1.100 | 3/3 |"
# uk k1: rep 2 (6600) was busy: (6000 + 7000) / 2 = 6500, / 2200 = 2.95;
# CPU (150 + 130) / 2 = 140, / 450 = 0.31; p50 (.10 + .14) / 2; p99 (.5 + .7) / 2.
row 7.2 "| ab -k -c 1 | uk | 6500 (6000-7000) [n=2/3] | x2.95 | 140.0 (130.0-150.0) | x0.31 | 0.120 | 0.600 | 2/3 |"
# native k1: 55000 / 2200 = 25.0; 10 us / 450 = 0.022.
row 7.2 "| ab -k -c 1 | native | 55000 (50000-60000) | x25.0 | 10.0 (10.0-10.0) | x0.02 | 0.010 | 0.050 | 3/3 |"
# uk c1: rep 1 (1500) had 2 non-2xx: (1650 + 1800) / 2 = 1725, / 550 = 3.14;
# CPU (550 + 500) / 2 = 525, / 1800 = 0.29; p99 (2.5 + 3.0) / 2 = 2.75.
row 7.2 "| ab -c 1 | uk | 1725 (1650-1800) [n=2/3] | x3.14 | 525.0 (500.0-550.0) | x0.29 | 0.650 | 2.750 | 2/3 |"

echo "== QEMU 10: the unclean shutdown (rep 3 of uk) counts, marked ~; native's runs serve both emulators"
# uk k1: 6900 7200 7500 -> 7200, / 2300 = 3.13; CPU 125 / 440 = 0.28.
row 10 "| ab -k -c 1 | uk | 7200 (6900-7500) ~ | x3.13 | 125.0 (120.0-130.0) | x0.28 | 0.110 | 0.600 | 3/3 |"
# native k1 against linux under 10: 55000 / 2300 = 23.9.
row 10 "| ab -k -c 1 | native | 55000 (50000-60000) | x23.9 | 10.0 (10.0-10.0) | x0.02 | 0.010 | 0.050 | 3/3 |"
# uk c1: 1800 / 560 = 3.21; CPU 500 / 1700 = 0.29.
row 10 "| ab -c 1 | uk | 1800 (1700-1900) ~ | x3.21 | 500.0 (480.0-520.0) | x0.29 | 0.600 | 2.500 | 3/3 |"

echo "== each guest under each emulator: ratios under each, and the change from 7.2"
# uk k1: 7200 / 6500 = 1.108 -> +11%.
has "| uk | k1 | 6500 (6000-7000) x2.95, CPU x0.31 [n=2/3] | 7200 (6900-7500) x3.13, CPU x0.28, +11% ~ |"
has "| linux | c1 | 550 (500-600) | 560 (520-600), +2% |"

echo "== where the CPU went: others (2.0 and 4.0 counted), the load generator's us per request"
# uk k1 under 7.2: load generator 1.00 s over 24000 and 28000 requests: 41.7 and 35.7 us, median 38.7.
has "| ab -k -c 1 | uk | 90% | 38.7 | 3.0 (2.0-4.0)% | 0.0% |"

echo "== runs to read with care"
has "- rep 1 tap 7.2 uk ab -c 1: errors, 2 non-2xx"
has "- rep 2 tap 7.2 uk ab -k -c 1: busy: others took 35.0% of a core"
has "- rep 3 tap 10 uk ab -k -c 1: the guest's shutdown was unclean (counted)"
has "- rep 3 tap 10 none uk: unclean_stop"

echo "== the chart's numbers: ratios to linux (requests/s, CPU per request) per guest"
# Columns: load, 3 x (median min max) for linux native uk, then (rps, cpu) ratios for each.
line=$(sed -n '2p' "$tmp/chart.dat")
[ "$line" = "k1 2200.0 2000.0 2400.0 55000.0 50000.0 60000.0 6500.0 6000.0 7000.0 1.0000 1.0000 25.0000 0.0222 2.9545 0.3111" ] ||
	fail "chart.dat, QEMU 7.2 k1: $line"
if command -v gnuplot >/dev/null; then
	[ "$(head -c 8 "$tmp/chart.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "chart.png is not a PNG"
	grep -q "ratio to linux" "$tmp/chart.gp" || fail "the chart has no ratio panel"
fi

echo "== --include-busy: the busy run counts, marked b; the non-2xx run still does not"
bench_summarise --include-busy
has "Flagged busy: 1 of 30 runs (other processes took more than 10% of a core); counted anyway (--include-busy)."
# uk k1 under 7.2: 6000 6600 7000 -> 6600, / 2200 = 3.00; CPU 150 140 130 -> 140.
row 7.2 "| ab -k -c 1 | uk | 6600 (6000-7000) b | x3.00 | 140.0 (130.0-150.0) | x0.31 | 0.120 | 0.600 | 3/3 |"
row 7.2 "| ab -c 1 | uk | 1725 (1650-1800) [n=2/3] | x3.14 | 525.0 (500.0-550.0) | x0.29 | 0.650 | 2.750 | 2/3 |"
echo "all good"
