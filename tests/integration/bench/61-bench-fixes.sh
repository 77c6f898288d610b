#!/usr/bin/env bash
# 61-bench-fixes: bench/run summarise --kind fixes (counters.csv and fixes.md:
# report/counters.py and report/fixes.py) on the fixed results in
# tests/fixtures/bench/fixes (3 repetitions of linux, baseline, step2-writev,
# all, all-minus-writev on tap at k1 and c16; one run with failed requests,
# one flagged busy, one guest whose shutdown was unclean; Ctrl-T dumps of
# baseline and all right before and after each load, CRLF line ends, one dump
# missing). No QEMU. Checks the numbers worked out by hand: medians,
# min-max, gains, losses, which runs count, and the counter deltas and
# ratios, cut at each load's own dumps (the idle gap between two loads,
# where the busy-polling baseline polls 5000 times, stays out); and that the
# switch order agrees with mk/variants.mk. The fixtures' kernel lines are
# ones the kernel can print: a timer reload only when parking (reloads +
# skipped <= parks), a timer interrupt only after a reload, an interrupt
# ending every park.
set -uo pipefail
ROOT=${ROOT:-$(pwd)}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/bench.sh"
bench_setup bench/fixes

echo "== the fixtures' kernel counters are ones the kernel can produce"
"$py" - "$fx"/raw/*.counters <<'PY' || fail "a fixture's kernel line is impossible"
import re, sys
k = re.compile(r"interrupts (\d+) \(unexpected \d+, timer (\d+)\);(?: eoi writes \d+ \(paravirtual \d+\);)? parks (\d+); timer reloads (\d+) \(skipped (\d+)\)")
bad = 0
for path in sys.argv[1:]:
    prev = None
    for line in open(path, newline=""):
        m = k.search(line)
        if not m:
            continue
        irq, tirq, parks, rel, skip = map(int, m.groups())
        if rel + skip > parks or tirq > rel or irq < parks:
            print(f"{path}: {line.strip()}"); bad += 1
        if prev and any(a < b for a, b in zip((irq, tirq, parks, rel, skip), prev)):
            print(f"{path}: a counter went down: {line.strip()}"); bad += 1
        prev = (irq, tirq, parks, rel, skip)
sys.exit(1 if bad else 0)
PY

bench_summarise --kind fixes
cat "$tmp/stdout"
md=$tmp/fixes.md


echo "== steps: medians (min-max) and the gain over the row above"
has_row "| linux | 1100 (1000-1200) | 310 (300-320) |"
has_row "| baseline | 2100 (2000-2200) x1.91 | 620 (600-640) x2.00 |"
# rep 3 of writev k1 (9999 req/s) had failed requests: left out, and said so.
# rep 1's guest did not shut down cleanly: its runs count, marked ~.
has_row "| +writev | 4100 (4000-4200) x1.95 [n=2/3] ~ | 630 (620-640) x1.02 ~ |"
# Without step 9 in the run, the last row is "all", not "+timer reload".
has_row "| all | 8200 (8000-8400) x2.00 | 1250 (1240-1260) x1.98 |"
has_row "| all / baseline | x3.90 | x2.02 |"
has_row "| all / linux | x7.45 | x4.03 |"
grep -q "rep 3 tap step2-writev k1: errors, 3 failed" "$md" || fail "the failed run is not listed"
grep -q "rep 1 tap step2-writev k1: unclean shutdown (counted)" "$md" || fail "the unclean shutdown is not listed"

echo "== leave one out: rep 2 of all-minus-writev k1 (6000) was busy: (6150 + 6300) / 2 = 6225, / 8200 = -24%"
has_row "| all - writev | 6225 (6150-6300) -24% [n=2/3] | 1250 (1250-1250) +0% |"
grep -q "rep 2 tap all-minus-writev k1: busy: others took 42.0% of a core" "$md" || fail "the busy run is not listed"
bench_run summarise --kind fixes --include-busy --no-chart "$tmp" >/dev/null || fail "summarise --include-busy failed"
has_row "| all - writev | 6150 (6000-6300) -25% | 1250 (1250-1250) +0% |"
bench_run summarise --kind fixes --no-chart "$tmp" >/dev/null

echo "== counters: deltas across each load over its requests"
has_row "| sockets visited per egress pass | 1024 -> 4.00 | 1024 -> 5.00 |"
has_row "| network polls per request | 10.0 -> 1.00 | 5.00 -> 1.00 |"
has_row "| spins per request | 0.00 -> 2.00 | 0.00 -> 1.50 |"
has_row "| parks per request | 0.00 -> 0.10 | 0.00 -> 0.10 |"
# baseline never parks, so it never arms the timer: no share to take.
has_row "| timer reloads skipped (%) | - -> 75.0 | - -> 75.0 |"
has_row "| listener slots walked per check | 1024 -> - | 1024 -> 1.00 |"
# counters.csv: 11 rows (all's c16 in rep 3 had no dump after it), generic columns.
[ "$(($(wc -l <"$tmp/counters.csv") - 1))" = 11 ] || fail "counters.csv: expected 11 rows"
head -n1 "$tmp/counters.csv" | tr ',' '\n' >"$tmp/cols"
for c in kernel.timer_reloads_skipped net.polls_with_work net.frames_out kernel.spins_hits \
	sockets.tcp_write_enomem per_req.kernel.parks bound_before_ms bound_after_ms loadgen emulator; do
	grep -qx "$c" "$tmp/cols" || fail "counters.csv lacks column $c"
done
# rep 2, all, k1: 16000 requests; the bounds 3.4 and 2.1 ms from the marks;
# visited 500 / 100 passes, polls 24000, spins 16000, parks 3200, frames out
# 32000, skipped 30 of 40 arms, no listener check.
grep -q '^2,tap,7.2,none,all,k1,ab,16000,3.4,2.1,5.000,1.500,1.000,0.200,2.000,75.000,,' "$tmp/counters.csv" ||
	fail "counters.csv: rep 2 all k1 ratios wrong"
# rep 1, baseline, c16: polls went 40005 (after k1) -> 45005 (before c16:
# the idle gap) -> 51005 (after c16). Only 6000 of them are c16's.
col=$(grep -nx 'net.polls' "$tmp/cols" | cut -d: -f1)
got=$(awk -F, -v c="$col" '$1 == 1 && $5 == "baseline" && $6 == "c16" { print $c }' "$tmp/counters.csv")
[ "$got" = 6000 ] || fail "rep 1 baseline c16: net.polls delta $got, expected 6000 (the gap before the load counted?)"

echo "== counters from a batch before the before/after marks: consecutive dumps"
mkdir "$tmp/old" "$tmp/old/raw"
printf '%s\n' "rep,backend,guest,load,keepalive,concurrency,requests,secs,rps,failed,non2xx,mean_ms,p99_ms,server_cpu_s,server_cpu_pct,listen_overflows,overflow,status" \
	"1,tap,all,k1,1,1,100,1.000,100.0,0,0,1.000,2.000,1.00,100.0,0,0,ok" >"$tmp/old/runs.csv"
printf '%s\n' "rep,backend,guest,boot_s,idle_cpu_pct,image_bytes,status" "1,tap,all,0.30,0.20,1500000,ok" >"$tmp/old/guests.csv"
printf '%s\n' "# rep 1 backend tap guest all" "@ start" "net: frames in 0 (0 bytes) out 3 (0 bytes); polls 5, 0 with work" \
	"@ k1" "net: frames in 0 (0 bytes) out 203 (0 bytes); polls 405, 0 with work" >"$tmp/old/raw/1-tap-all.counters"
bench_run summarise --no-chart "$tmp/old" >/dev/null || fail "summarise on an old batch failed"
grep -q '^1,tap,7.2,none,all,k1,ab,100,,,,4.000,' "$tmp/old/counters.csv" || fail "old-format counters: $(cat "$tmp/old/counters.csv")"

echo "== boot and idle"
has_row "| all | 0.26 (0.25-0.27) | 0.40% |"
is_png "$tmp/fixes.png"

echo "== is all the fastest: against the fastest of baseline, the steps and all-minus-*"
# k1: step2-writev's 9999 had failed requests and does not count (its clean
# runs give 4100); the fastest rival is all-minus-writev, 6225 < 8200.
has_row "| k1 | 8200 (8000-8400) | all-minus-writev: 6225 (6150-6300) | x1.32 | ahead |"
has_row "| c16 | 1250 (1240-1260) | all-minus-writev: 1250 (1250-1250) | x1.00 | ahead |"
grep -qxF 'Idle CPU of `all`: 0.40% (limit 0.5%).' "$md" || fail "no idle line for all"
grep -qxF "Verdict: held at every load." "$md" || fail "the verdict is not 'held'"
# verdict_of RPS: the verdict with all-minus-writev's three c16 runs at RPS.
verdict_of() {
	rm -rf "$tmp/v" && mkdir "$tmp/v" && cp -r "$tmp/raw" "$tmp/guests.csv" "$tmp/meta.txt" "$tmp/v/"
	"$py" - "$tmp/runs.csv" "$tmp/v/runs.csv" "$1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    if r["guest"] == "all-minus-writev" and r["load"] == "c16":
        r["rps"] = sys.argv[3]
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(rows[0]))
w.writeheader(); w.writerows(rows)
PY
	bench_run summarise --kind fixes "$tmp/v" >/dev/null 2>&1 || fail "summarise failed on the changed runs"
	md=$tmp/v/fixes.md
}
verdict_of 1260.0 # a rival's median at all's max: a tie
has_row "| c16 | 1250 (1240-1260) | all-minus-writev: 1260 (1260-1260) | x0.99 | tie |"
grep -qxF "Verdict: held at every load." "$md" || fail "a tie is not held"
verdict_of 1261.0 # above all's max: behind
has_row "| c16 | 1250 (1240-1260) | all-minus-writev: 1261 (1261-1261) | x0.99 | behind |"
grep -qxF "Verdict: not held: behind at c16." "$md" || fail "behind at c16 is not 'not held'"
md=$tmp/fixes.md

echo "== a committed batch's counters.csv.gz reads as its counters.csv"
rm -rf "$tmp/gz" && mkdir "$tmp/gz" && cp "$tmp/runs.csv" "$tmp/guests.csv" "$tmp/meta.txt" "$tmp/gz/"
gzip -c "$tmp/counters.csv" >"$tmp/gz/counters.csv.gz"
bench_run summarise --kind fixes --no-chart "$tmp/gz" >/dev/null 2>&1 || fail "summarise failed on counters.csv.gz"
bench_run summarise --kind fixes --no-chart "$tmp" >/dev/null 2>&1 || fail "summarise failed"
diff <(grep -A3 '^## Counters' "$tmp/fixes.md") <(grep -A3 '^## Counters' "$tmp/gz/fixes.md") >/dev/null &&
	grep -qF '| all | 4.00 | 5.00 |' "$tmp/gz/fixes.md" || fail "counters.csv.gz did not give the counters tables"

echo "== the switch order is mk/variants.mk's"
want=$(sed -n 's/^SWITCH_NAMES := //p' "$ROOT/mk/variants.mk")
got=$(cd "$ROOT/bench" && "$py" -c 'from runner.report import fixes; print(" ".join(s for s, _ in fixes.SWITCHES))')
[ "$want" = "$got" ] || fail "bench/runner/report/fixes.py SWITCHES ($got) differ from mk/variants.mk ($want)"

echo "== bad input"
mkdir "$tmp/bad"
bench_run summarise --kind fixes "$tmp/bad" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'runs.csv' "$tmp/err" || fail "missing CSV: exit $rc, $(cat "$tmp/err")"
echo "all good"
