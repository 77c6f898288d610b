#!/usr/bin/env bash
# 80-bench-smp: the benchmark's figures for guests of more than one vCPU, on
# a captured batch (tests/fixtures/bench/smp: make bench QUICK=1 SMP="1 2"
# with uk and the global-lock design, COUNT=1; its .counters files cut to
# the kernel's lines and the lock design's own). First the counter parser on
# the captured dumps: the per-CPU lines read as cpuN.* (the boot CPU's own
# lines keep their columns), their sums as cpus.*, the lock line as
# lock.NAME_*, the time line as time_us.*. Then summary.md's two tables:
# per request (each figure worked out by hand from the dumps and runs.csv
# below) and idle (guests.csv). Last, bench-kvm's report on a made-up L1
# output whose dumps have per-CPU lines: their sums and the lock and call
# waits' pause-loop exits per request. No QEMU.
set -uo pipefail
ROOT=${ROOT:-$(pwd)}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/bench.sh"
bench_setup bench/smp
md=$tmp/summary.md

echo "== the parser on a captured dump (lock-smp2, after k1)"
PYTHONPATH=$ROOT/bench "$py" - "$tmp/raw/1-tap-7.2-none-lock-smp2.counters" <<'PY' || fail "the dump was misread"
import sys
from runner.report.counters import read_counters_file
header, dumps = read_counters_file(sys.argv[1])
assert header["guest"] == "lock-smp2", header
mark, d = dumps[1]
assert mark == "k1 ab after 36.2", mark
want = {
    # kernel: cpu 0 (APIC ID 0, online): interrupts 2221 (timer 0); ...
    "cpu0.interrupts": 2221, "cpu0.interrupts_timer": 0, "cpu0.ipis_sent": 1620, "cpu0.ipis_received": 2218,
    "cpu0.calls_run": 0, "cpu0.pauses_lock": 754111, "cpu0.pauses_call": 0,
    # kernel: cpu 0 spins: parks 2201; wakes sent 1619; ...
    "cpu0.parks": 2201, "cpu0.wakes_sent": 1619, "cpu0.spin_pauses": 0,
    "cpu0.pause_loop_exits_estimated_amd_lock": 87, "cpu0.pause_loop_exits_estimated_intel_lock": 1805,
    "cpu0.pause_loop_exits_estimated_intel_call": 2,
    "cpu1.interrupts_timer": 324, "cpu1.ipis_sent": 2218, "cpu1.ipis_received": 1614, "cpu1.calls_run": 1,
    "cpu1.idle_parks": 3, "cpu1.pauses_lock": 66255, "cpu1.parks": 2248,
    "cpu1.pause_loop_exits_estimated_intel_lock": 129,
    # the sums over the CPUs
    "cpus.ipis_sent": 3838, "cpus.pauses_lock": 820366, "cpus.wakes_sent": 3837,
    "cpus.pause_loop_exits_estimated_amd_lock": 91,
    # kernel: locks: console 86 (contended 0, pauses 0, broken 0); net 37886 (contended 868, ...)
    "lock.console_acquisitions": 86, "lock.console_contended": 0, "lock.net_acquisitions": 37886,
    "lock.net_contended": 868, "lock.net_pauses": 820366, "lock.net_broken": 0,
    # kernel: time us: receive+stack 336, egress 0, spin 633490, park 7073238, app+other 653139
    "time_us.receive_stack": 336, "time_us.spin": 633490, "time_us.park": 7073238, "time_us.app_other": 653139,
    # the boot CPU's own lines, as before, and the lock design's
    "kernel.interrupts": 2221, "kernel.parks": 2201, "kernel.spin_pauses": 0,
    "net.wakes_to_the_app_cpu": 2218, "net.wakes_to_the_network_cpu": 1617,
}
bad = {k: (d.get(k), v) for k, v in want.items() if d.get(k) != v}
assert not bad, bad
clash = [k for k in d if k.startswith("kernel.") and k[-2:] in ("_2", "_3")]
assert not clash, f"per-CPU lines collided with the boot CPU's columns: {clash}"
print("ok:", len(d), "columns")
PY

echo "== summary.md: per request"
bench_summarise --no-chart
has "## More than one CPU: per request"
has_row "| load | guest | CPUs | console lock | net lock | lock PAUSEs | IPIs sent | IPIs received | wakes | calls | PLE lock+call | instr by CPU |"
# lock-smp2 k1, 1871 requests (runs.csv, rep 1): net (37886 - 162) / 1871 =
# 20.16, contended (868 - 1) / 1871 = 0.46; console 48 (0); lock PAUSEs
# (820366 - 64322) / 1871 = 404.1; IPIs sent cpu0 1616, cpu1 2202; wakes
# (3837 - 19) / 1871 = 2.04; PLE AMD 87 / 1871, Intel (1934 - 13) / 1871;
# instructions by vCPU from the run under the plugin (rep 2: 29006.7/25407.1).
has_row "| k1 | lock-smp2 | 2 | 0.03 (0.00) | 20.16 (0.46) | 404.1 | 0.86 / 1.18 | 1.18 / 0.86 | 2.04 | 0.00 | 0.046 / 1.027 | 29007 / 25407 |"
has_row "| c16 | lock-smp2 | 2 | 0.01 (0.00) | 11.13 (0.46) | 317.1 | 0.11 / 0.14 | 0.14 / 0.11 | 0.25 | 0.00 | 0.031 / 0.285 | 17741 / 52237 |"
# uk-smp2: its second CPU started and idle: no IPI, no lock but the console.
has_row "| k1 | uk-smp2 | 2 | 0.00 (0.00) | - (-) | 0.0 | 0.00 / 0.00 | 0.00 / 0.00 | 0.00 | 0.00 | 0.000 / 0.000 | 12279 / 0 |"
grep -qE '^\| (k1|c16) \| (uk|lock) \|' "$md" && fail "a one-CPU guest has a row in the per-CPU table"

echo "== a guest with no counters of ours: its instructions per vCPU alone"
sed -n 's/^\(2,tap,7.2,none,ab,\)lock-smp2\(,k1,.*,\)29006.7\/25407.1$/\1linux-smp2\230000.0\/20000.0/p' \
	"$tmp/runs.csv" >"$tmp/linux-row"
[ -s "$tmp/linux-row" ] || fail "no plugin row to copy"
cp "$tmp/runs.csv" "$tmp/runs.orig" && cat "$tmp/linux-row" >>"$tmp/runs.csv"
bench_summarise --no-chart
has_row "| k1 | linux-smp2 | 2 | - | - | - | - | - | - | - | - | - | 30000 / 20000 |"
mv "$tmp/runs.orig" "$tmp/runs.csv" && bench_summarise --no-chart

echo "== summary.md: idle"
has "## Idle: what a guest costs the host with nothing to do"
# lock-smp2: 0.17% of a core over the sample, 0.085% per vCPU, its vCPU threads 0.13%.
has_row "| back-end \`tap\` | lock-smp2 | 2 | 0.0017 | 0.17% | 0.085% | 0.13% | met |"
has_row "| back-end \`tap\` | uk | 1 | 0.0008 | 0.08% | 0.080% | 0.04% | met |"

echo "== guests.csv and runs.csv of the format before (no vCPU columns) still read"
cut -d, -f1-10 "$tmp/guests.csv" >"$tmp/g" && mv "$tmp/g" "$tmp/guests.csv"
cut -d, -f1-32 "$tmp/runs.csv" >"$tmp/r" && mv "$tmp/r" "$tmp/runs.csv"
bench_summarise --no-chart
has_row "| back-end \`tap\` | lock-smp2 | 2 | 0.0017 | 0.17% | 0.085% | - | met |"
has_row "| k1 | lock-smp2 | 2 | 0.03 (0.00) | 20.16 (0.46) | 404.1 | 0.86 / 1.18 | 1.18 / 0.86 | 2.04 | 0.00 | 0.046 / 1.027 | - |"

echo "== bench-kvm's report: every CPU's counters, the lock and call waits priced"
k=$tmp/kvm
mkdir -p "$k/raw"
cpu() { # cpu N IPIS LOCK_PAUSES AMD_LOCK INTEL_LOCK INTEL_CALL SPIN_PAUSES
	echo "kernel: cpu $1 (APIC ID $1, online): interrupts 10 (timer 0); eoi writes 10 (paravirtual 10); ipis sent $2, received 0; calls run 0; idle parks 0; pauses: lock $3, call 0"
	echo "kernel: cpu $1 spins: parks 5; wakes sent $2; spin pauses $7; pause-loop exits estimated amd: spin 1, lock $4, call 0; pause-loop exits estimated intel: spin 2, lock $5, call $6"
}
{
	echo "run 1 vhost lock-smp2 k1 requests 1000 failed 0 secs 2.0 l1cpu_ms 500"
	echo "delta 1 vhost lock-smp2 k1 exits 20000"
	echo "dump 1 vhost lock-smp2"
	echo "@ k1 ab before 0"
	echo "kernel: spin pauses 0; pause-loop exits estimated amd 0; pause-loop exits estimated intel 0"
	cpu 0 0 0 0 0 0 0
	cpu 1 0 0 0 0 0 0
	echo "@ k1 ab after 0"
	echo "kernel: spin pauses 100; pause-loop exits estimated amd 1; pause-loop exits estimated intel 2"
	cpu 0 300 40000 10 100 5 100
	cpu 1 700 20000 2 50 0 100
	echo "enddump"
} >"$k/raw/l1-1.txt"
bench_run summarise --kind kvm "$k" >"$tmp/kvm.out" 2>&1 || { cat "$tmp/kvm.out"; fail "the kvm summary failed"; }
md=$k/summary.md
has "| load | guest | notifies | parks | interrupts | eoi writes | one-shot loads | spin PAUSEs | PLE exits AMD (est.) | PLE exits Intel (est.) | IPIs sent | lock+call PAUSEs | lock+call PLE AMD (est.) | lock+call PLE Intel (est.) |"
# Per 1000 requests: spin PAUSEs 200 (both CPUs', not the boot CPU's line's
# 100), IPIs 1000, lock PAUSEs 60000, their exits AMD 12, Intel 155 (the
# call's 5 with the locks' 150); what did not move, or no dump has, 0.
has_row "| k1 | lock-smp2 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | 0.20 | 0.00 | 0.00 | 1.00 | 60.00 | 0.01 | 0.15 |"
echo "ok"
