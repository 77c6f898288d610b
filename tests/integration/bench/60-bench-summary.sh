#!/usr/bin/env bash
# 60-bench-summary: bench/run summarise on the fixed results in
# tests/fixtures/bench (3 repetitions, 3 guests, both back-ends; a failed
# boot, an ab error with failed requests, a run with 3 non-2xx answers and
# listen overflows), written in the format before emulators, placements and
# load generators, which must still be read. Every number below is worked out
# by hand from runs.csv; the run with non-2xx answers and the ab error must
# not enter a median, the overflows must be marked and listed; the chart must
# be a PNG; bad input must give a clear error (exit 2), not a traceback.
# No QEMU.
set -uo pipefail
ROOT=${ROOT:-$(pwd)}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/bench.sh"
bench_setup bench
bench_summarise
cat "$tmp/stdout"
md=$tmp/summary.md

# row LOAD GUEST TEXT: the main table's row for LOAD and GUEST in the
# section of back-end $section holds TEXT.
row() {
	awk -v s="## back-end \`$section\`" 'index($0, s) == 1 { on = 1; next } /^## / { on = 0 } on' "$md" |
		grep -F -- "| $1 | $2 |" | contains -F -- "$3" || fail "back-end $section, $1, $2: no '$3' in its row"
}

echo "== the requests/s tables (rows: load; columns: linux, native, uk-httpd)"
# tap, linux: k1 2755 2900 3045; k8 4940 5200 5460; c1 570 600 630; c64 551 580 609.
has "| ab -k -c 1 | 2900 (2755-3045) | 75000 (71250-78750) x25.86 | 4100 (3895-4305) x1.41 [n=2/3] |"
# uk-httpd k8: rep 2 did not boot; (6650 + 7350) / 2 = 7000, / 5200 = 1.346.
has "| ab -k -c 8 | 5200 (4940-5460) | 150000 (142500-157500) x28.85 | 7000 (6650-7350) x1.35 [n=2/3] |"
# uk-httpd c1: rep 1 (855 req/s) had 3 non-2xx answers, rep 2 did not boot:
# only rep 3's 960 counts, 960 / 600 = 1.60.
has "| ab -c 1 | 600 (570-630) | 17000 (16150-17850) x28.33 | 960 x1.60 [n=1/3] |"
# user, linux k8: rep 3 was an ab error (12 failed): (4446 + 4680) / 2 = 4563.
has "| ab -k -c 8 | 4563 (4446-4680) [n=2/3] | 135000 (128250-141750) x29.59 | 6300 (5985-6615) x1.38 |"
# user c64: every run of linux and uk-httpd hit a listen overflow (counted, marked).
has "| ab -c 64 | 522 (496-548) ! | 13500 (12825-14175) x25.86 | 765 (727-803) x1.47 ! |"
grep -q 'ab -k -c 1 .*2900 (2755-3045)' "$tmp/stdout" || fail "printed table lacks the linux k1 median"

echo "== the main table: CPU per request from server_cpu_s / requests, p99"
section=tap
# linux k1: 4.40 s over 11020, 11600, 12180 requests = 399.3, 379.3, 361.2 us.
row "ab -k -c 1" linux "| 2900 (2755-3045) | ref | 379.3 (361.2-399.3) | ref |"
# uk-httpd k1: 4.40 s / 15580 = 282.4, / 17220 = 255.5; median 269.0; 269.0 / 379.3 = 0.71.
row "ab -k -c 1" uk-httpd "| 4100 (3895-4305) [n=2/3] | x1.41 | 269.0 (255.5-282.4) | x0.71 |"
# uk-httpd c1: rep 3 alone: 4.40 s / 3840 = 1145.8 us, p99 2.604 ms, 1 of 3 runs.
row "ab -c 1" uk-httpd "| 1145.8 |"
row "ab -c 1" uk-httpd "| 2.604 | 1/3 |"
row "ab -c 1" linux "| 1833.3 (1746.0-1929.8) | ref |"
section=user
row "ab -k -c 8" linux "| 4563 (4446-4680) [n=2/3] | ref |"
row "ab -k -c 8" linux "| 2/3 |"

echo "== a batch from before the guard says so"
has "Quiet-host guard: not recorded"
has "Flagged busy: not measured"

echo "== runs to read with care"
has "- rep 1 tap uk-httpd ab -c 1: 3 non-2xx"
has "- rep 3 user linux ab -k -c 8: ab_error, 12 failed"
has "- rep 1 user linux ab -c 64: listen overflow (10 drops)"
has "- rep 3 user uk-httpd ab -c 64: listen overflow (30 drops)"
has "- rep 2 tap 7.2 none uk-httpd: no_boot"
[ "$(grep -c '^- rep ' "$md")" = 9 ] || fail "expected 9 runs to read with care (1 non-2xx, 1 ab error, 6 overflows, 1 boot)"

echo "== boots: rep 2 tap uk-httpd did not boot; idle CPU from rep 1"
has "| back-end \`tap\` | uk-httpd | 0.60 (0.50-0.70) | 0.30% | 1.50 MB | 2/3 |"

is_png "$tmp/chart.png"

echo "== bad input"
mkdir "$tmp/bad"
bench_run summarise "$tmp/bad" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'runs.csv' "$tmp/err" || fail "missing CSV: exit $rc, $(cat "$tmp/err")"
printf 'a,b\n1,2\n' >"$tmp/bad/runs.csv"
cp "$fx/guests.csv" "$tmp/bad/"
bench_run summarise "$tmp/bad" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'unexpected header' "$tmp/err" || fail "bad header: exit $rc, $(cat "$tmp/err")"
{ head -n1 "$fx/runs.csv"; echo "1,tap,linux,k1,1"; } >"$tmp/bad/runs.csv"
bench_run summarise "$tmp/bad" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'wrong number of fields' "$tmp/err" || fail "short row: exit $rc, $(cat "$tmp/err")"
echo "all good"
