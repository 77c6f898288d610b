#!/usr/bin/env bash
# 68-bench-best-linux: summary.md's "uk against the best Linux guest" on a
# fixed CSV (tests/fixtures/bench/best: linux, linux-tuned, linux-epoll,
# linux-nginx, uk, native and native-nginx on tap at k1 and c16, 3
# repetitions; a linux-nginx run with non-2xx answers, a busy linux-epoll
# run). Every number is worked out by hand from runs.csv below: at each load
# the Linux guest with the highest median of the runs that count is named
# (never a native one, however fast), and uk's ratios of requests/s and CPU
# per request are taken against it, with the range of the ratios paired by
# repetition; --include-busy can change which guest
# that is; REF= changes the main table's reference, not this table; a batch
# without a Linux guest has no such table; an unknown --ref is an error
# (exit 2). No QEMU.
set -uo pipefail
ROOT=${ROOT:-$(pwd)}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/bench.sh"
bench_setup bench/best
md=$tmp/summary.md

# best TEXT: the best-Linux table has the row TEXT.
best() {
	awk '/^## uk against the best Linux guest/ { on = 1; next } /^## / { on = 0 } on' "$md" |
		contains -xF -- "$1" || fail "the best-Linux table lacks the row: $1"
}

bench_summarise --no-chart
cat "$tmp/stdout"

echo "== at k1, linux-nginx: its rep 2 (9000 req/s, 5 non-2xx) does not count"
# linux 2000 2100 2200 -> 2100; linux-tuned 3000 3300 3200 -> 3200;
# linux-epoll 2500 2600 2700 -> 2600; linux-nginx (3200 + 3500) / 2 = 3350;
# native 50000 and native-nginx 60000 are not Linux guests.
# uk 9000 9900 10800 -> 9900, / 3350 = 2.955; CPU 160 / ((400 + 420) / 2) = 0.390.
# Paired, by repetition: 9000 / 3200 = 2.81, 10800 / 3500 = 3.09 (rep 2 has no pair).
best "| ab -k -c 1 | uk | 9900 (9000-10800) | linux-nginx | 3350 (3200-3500) [n=2/3] | x2.96 | x2.81-3.09 (2) | x0.39 |"
echo "== at c16, linux-tuned: linux-epoll's busy rep 2 (5000) does not count"
# linux-tuned 930 940 960 -> 940; linux-epoll (900 + 950) / 2 = 925; linux-nginx 850; linux 650.
# uk 7000 7520 8000 -> 7520, / 940 = 8.00; CPU 210 / 1100 = 0.191.
# Paired: 7000 / 930 = 7.53, 7520 / 940 = 8.00, 8000 / 960 = 8.33.
best "| ab -c 16 | uk | 7520 (7000-8000) | linux-tuned | 940 (930-960) | x8.00 | x7.53-8.33 (3) | x0.19 |"
grep -q '^ab -c 16 *uk .*linux-tuned .*x8.00' "$tmp/stdout" || fail "the printed summary lacks the best-Linux table"
[ "$(awk '/^## uk against/ { on = 1; next } /^## / { on = 0 } on && /^\| ab/' "$md" | wc -l)" = 2 ] ||
	fail "the best-Linux table should have 2 rows (uk at k1 and c16): native guests are not set against it"

echo "== --include-busy: linux-epoll's 5000 counts, so it is the best at c16"
bench_summarise --no-chart --include-busy
# linux-epoll 900 5000 950 -> 950 > 940; 7520 / 950 = 7.92; CPU 210 / median(1000 300 900) = 0.233.
# Paired: 7000 / 900 = 7.78, 7520 / 5000 = 1.50, 8000 / 950 = 8.42.
best "| ab -c 16 | uk | 7520 (7000-8000) | linux-epoll | 950 (900-5000) b | x7.92 | x1.50-8.42 (3) | x0.23 |"

echo "== --ref linux-nginx: the main table's ratios change, the best-Linux table does not"
bench_summarise --no-chart --ref linux-nginx
has "| ab -k -c 1 | uk | 9900 (9000-10800) | x2.96 |"
has "| ab -k -c 1 | linux-nginx | 3350 (3200-3500) [n=2/3] | ref |"
best "| ab -k -c 1 | uk | 9900 (9000-10800) | linux-nginx | 3350 (3200-3500) [n=2/3] | x2.96 | x2.81-3.09 (2) | x0.39 |"
bench_run summarise --no-chart --ref linux-nope "$tmp" >"$tmp/stdout" 2>&1
rc=$?
[ $rc = 2 ] && contains -F 'no such guest' <"$tmp/stdout" || fail "unknown --ref: exit $rc, $(cat "$tmp/stdout")"

echo "== no Linux guest: no such table"
awk -F, 'NR == 1 || $6 !~ /^linux/' "$fx/runs.csv" >"$tmp/runs.csv"
awk -F, 'NR == 1 || $5 !~ /^linux/' "$fx/guests.csv" >"$tmp/guests.csv"
bench_summarise --no-chart
contains -F 'against the best Linux guest' <"$md" && fail "a batch without Linux guests has a best-Linux table"
echo "all good"
