#!/usr/bin/env bash
# 69-bench-insns: instructions per request in the benchmark's files and
# reports, on synthetic data. First runner/loadrun.py's marks, against a
# stand-in plugin (a thread answering each label on a FIFO with a counts
# line, as tools/plugin/insncount.c does): the row's instructions per request
# are the difference of the two marks over the requests, outside the wait
# loop the classes other (or kernel and user) alone; with two vCPUs the
# plugin's line per vCPU gives each one's (insns_nowait_by_cpu). Then the reports on
# the fixes fixture (tests/fixtures/bench/fixes, written before the plugin
# column, which must still be read) with three repetitions under the plugin
# added below: their requests/s (1000, below every timed run) must enter no
# cell, their instructions (a failed run left out, a busy one kept) must
# give the instr/req columns of the steps, leave-one-out and write-up
# tables, the verdict on instructions (ahead, tie, behind), and summary.md's
# columns and section. Every number is worked out by hand from the rows
# below. No QEMU.
set -uo pipefail
ROOT=${ROOT:-$(pwd)}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tests/integration/lib/bench.sh"
bench_setup

echo "== loadrun.py's marks against a stand-in plugin"
PYTHONPATH=$ROOT/bench "$py" - "$tmp" <<'PY' || fail "the marks were misread"
import os, sys, threading
from runner.loadrun import Insns, insns_by_cpu, insns_fields, parse_mark
tmp = sys.argv[1]

def plugin(ctl, out, split, vcpus=1):  # each label: the counts so far, 1,000,000 more each time
    fd = os.open(ctl, os.O_RDWR)
    k = 0
    with open(fd, "r") as f, open(out, "a") as o:
        for line in f:
            k += 1
            other = f"kernel {300000 * k}, user {100000 * k}" if split else f"other {400000 * k}"
            for v in range(vcpus if vcpus > 1 else 0):  # vCPU v: (v + 1) / 3 of the work, the rest spin
                o.write(f"{line.strip()}.vcpu{v}: total {500000 * k}, spin {(500000 - (v + 1) * 133333) * k}, "
                        f"park 0, other {(v + 1) * 133333 * k}\n")
            o.write(f"{line.strip()}: total {1000000 * k}, spin {500000 * k}, park {100000 * k}, {other}\n")
            o.flush()

# Two vCPUs: each one's line comes before the sum's; the sum reads as before.
out, ctl = os.path.join(tmp, "insns-vcpus"), os.path.join(tmp, "ctl-vcpus")
os.mkfifo(ctl)
open(out, "w").close()
threading.Thread(target=plugin, args=(ctl, out, False, 2), daemon=True).start()
m = Insns(out, ctl)
a, b = m.mark("k1-ab-before"), m.mark("k1-ab-after")
m.close()
assert insns_fields(a, b, 1000)["insns_nowait_per_req"] == "400.0", (a, b)
assert insns_by_cpu(a, b, 1000) == "133.3/266.7", insns_by_cpu(a, b, 1000)
assert insns_by_cpu({"total": 1}, {"total": 2}, 10) == "", "one vCPU: no split"
assert parse_mark("k1-ab-after.vcpu1: total 5, other 5") == ("k1-ab-after.vcpu1", {"total": 5, "other": 5})

for split in (False, True):
    out, ctl = os.path.join(tmp, f"insns-{split}"), os.path.join(tmp, f"ctl-{split}")
    os.mkfifo(ctl)
    open(out, "w").close()
    threading.Thread(target=plugin, args=(ctl, out, split), daemon=True).start()
    m = Insns(out, ctl)
    a, b = m.mark("k1-ab-before"), m.mark("k1-ab-after")
    m.close()
    assert a["total"] < b["total"], (a, b)
    got = insns_fields(a, b, 1000)
    want = {"insns_per_req": "1000.0", "insns_nowait_per_req": "400.0",
            "insns_kernel_per_req": "300.0" if split else "", "insns_user_per_req": "100.0" if split else ""}
    assert got == want, (split, got)
assert insns_fields(None, {"total": 1}, 10)["insns_per_req"] == ""
assert insns_fields({"total": 1}, {"total": 2}, 0)["insns_per_req"] == ""
assert parse_mark("exit: total 12, spin 2, other 10") == ("exit", {"total": 12, "spin": 2, "other": 10})
assert parse_mark("# regions: spin 0x1-0x2") is None
got = insns_fields({"total": 0, "idle": 0, "kernel": 0, "user": 0},
                   {"total": 5000, "idle": 1000, "kernel": 3000, "user": 1000}, 10)
assert got == {"insns_per_req": "500.0", "insns_nowait_per_req": "400.0",
               "insns_kernel_per_req": "300.0", "insns_user_per_req": "100.0"}, got
print("marks read right")
PY

echo "== the fixes fixture with three repetitions under the plugin"
fx=$ROOT/tests/fixtures/bench/fixes
d=$tmp/batch
mkdir "$d"
cp -r "$fx/raw" "$fx/guests.csv" "$fx/meta.txt" "$d/"
# Reps 4-6: instructions outside the wait loop per guest and load (k1 c16),
# the total 10,000 more for the unikernel (its spin), Linux's kernel and user.
# rep 6 step2-writev k1 failed (its 99999 must not count); rep 5
# all-minus-writev c16 was busy (it counts); step1-timed-wait has no timed run.
PYTHONPATH=$ROOT/bench "$py" - "$fx/runs.csv" "$d/runs.csv" <<'PY'
import csv, sys
from runner.records import RUN_FIELDS
rows = list(csv.DictReader(open(sys.argv[1])))
nowait = {  # guest: {load: [rep 4, rep 5, rep 6]}
    "linux": {"k1": [30000, 31000, 32000], "c16": [100000, 101000, 102000]},
    "baseline": {"k1": [60000, 61000, 62000], "c16": [90000, 90000, 90000]},
    "step1-timed-wait": {"k1": [50000, 50500, 51000]},
    "step2-writev": {"k1": [20000, 20400, 99999], "c16": [45000, 45500, 46000]},
    "all": {"k1": [15000, 15100, 15200], "c16": [40000, 40400, 40200]},
    "all-minus-writev": {"k1": [15050, 15150, 15250], "c16": [40300, 40500, 40700]},
}
for rep in (4, 5, 6):
    for g, loads in nowait.items():
        for load, vals in loads.items():
            v = vals[rep - 4]
            r = dict(rows[0], rep=str(rep), guest=g, load=load, keepalive=str(int(load == "k1")),
                     concurrency="1" if load == "k1" else "16", requests="1000", failed="0", busy="0",
                     status="ok", plugin="1", insns_nowait_per_req=f"{v:.1f}",
                     rps="1000.0")
            if g == "linux":
                r.update(insns_per_req=f"{v + 200:.1f}", insns_kernel_per_req=f"{v - 3000:.1f}",
                         insns_user_per_req="3000.0")
            else:
                r.update(insns_per_req=f"{v + 10000:.1f}", insns_kernel_per_req="", insns_user_per_req="")
            if (rep, g, load) == (6, "step2-writev", "k1"):
                r.update(failed="2", status="errors")
            if (rep, g, load) == (5, "all-minus-writev", "c16"):
                r.update(busy="1", others_cpu_pct="55.0")
            rows.append(r)
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=RUN_FIELDS, restval="", lineterminator="\n")
w.writeheader()
for r in rows:
    r.setdefault("plugin", "0")
    w.writerow(r)
PY
[ $? = 0 ] || fail "could not write the batch"
bench_run summarise --kind fixes --no-chart "$d" >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "summarise failed"; }
cat "$tmp/stdout"
md=$d/fixes.md

echo "== steps: req/s as before (the plugin's runs in no cell), instr/req beside each load"
has_row "| step | k1 | k1 instr/req | c16 | c16 instr/req |"
has_row "| linux | 1100 (1000-1200) | 31000 (30000-32000) | 310 (300-320) | 101000 (100000-102000) |"
# 61000 / 31000 = 1.97; 90000 / 101000 = 0.89.
has_row "| baseline | 2100 (2000-2200) x1.91 | 61000 (60000-62000) x1.97 | 620 (600-640) x2.00 | 90000 (90000-90000) x0.89 |"
# step1 has instructions only: 50500 / 61000 = 0.83.
has_row "| +timed waits | - | 50500 (50000-51000) x0.83 | - | - |"
# rep 6's 99999 failed: (20000, 20400) -> 20200, / 50500 = 0.40; no req/s ratio over step1 (none).
has_row "| +writev | 4100 (4000-4200) [n=2/3] ~ | 20200 (20000-20400) x0.40 | 630 (620-640) ~ | 45500 (45000-46000) |"
# 15100 / 20200 = 0.75; 40200 / 45500 = 0.88.
has_row "| all | 8200 (8000-8400) x2.00 | 15100 (15000-15200) x0.75 | 1250 (1240-1260) x1.98 | 40200 (40000-40400) x0.88 |"
has_row "| all / baseline | x3.90 | x0.25 | x2.02 | x0.45 |"
has_row "| all / linux | x7.45 | x0.49 | x4.03 | x0.40 |"

echo "== leave one out: the busy run under the plugin counts"
# (40300 + 40500 + 40700) / 3 -> 40500, / 40200 - 1 = +0.7%; 15150 / 15100 - 1 = +0.3%.
has_row "| all - writev | 6225 (6150-6300) -24% [n=2/3] | 15150 (15050-15250) +0.3% | 1250 (1250-1250) +0% | 40500 (40300-40700) +0.7% |"

echo "== the write-up's commits: the steps before and after, in instructions"
grep -F "| 4b0da94 |" "$md" | contains -F "| 61000 (60000-62000) -> 50500 (50000-51000) x0.83 |" ||
	fail "timed waits: no instruction figures"
grep -F "| 90acf79 |" "$md" | contains -F "| 50500 (50000-51000) -> 20200 (20000-20400) x0.40 |" ||
	fail "writev: no instruction figures"

echo "== the verdict on instructions"
has_row "| load | all | fastest rival | all / rival | verdict | all instr/req | fewest-instruction rival | all / rival | verdict on instructions |"
has_row "| k1 | 8200 (8000-8400) | all-minus-writev: 6225 (6150-6300) | x1.32 | ahead | 15100 (15000-15200) | all-minus-writev: 15150 (15050-15250) | x1.00 | ahead |"
has_row "| c16 | 1250 (1240-1260) | all-minus-writev: 1250 (1250-1250) | x1.00 | ahead | 40200 (40000-40400) | all-minus-writev: 40500 (40300-40700) | x0.99 | ahead |"
has_row "Verdict on instructions: held at every load."
grep -qxF "Verdict: held at every load." "$md" || fail "the requests/s verdict changed"
# verdict_with A B C: all-minus-writev's c16 instructions at A, B, C.
verdict_with() {
	"$py" - "$d/runs.csv" "$tmp/v.csv" "$@" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
vals = iter(sys.argv[3:])
for r in rows:
    if r["plugin"] == "1" and r["guest"] == "all-minus-writev" and r["load"] == "c16":
        r["insns_nowait_per_req"] = next(vals)
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(rows[0]), lineterminator="\n")
w.writeheader(); w.writerows(rows)
PY
	rm -rf "$tmp/v" && mkdir "$tmp/v" && cp "$d/guests.csv" "$d/meta.txt" "$tmp/v/" && cp "$tmp/v.csv" "$tmp/v/runs.csv"
	bench_run summarise --kind fixes --no-chart "$tmp/v" >/dev/null 2>&1 || fail "summarise failed on the changed runs"
	md=$tmp/v/fixes.md
}
verdict_with 40000 40100 40300 # a rival's median within all's runs (40000-40400): a tie
has_row "| c16 | 1250 (1240-1260) | all-minus-writev: 1250 (1250-1250) | x1.00 | ahead | 40200 (40000-40400) | all-minus-writev: 40100 (40000-40300) | x1.00 | tie |"
has_row "Verdict on instructions: held at every load."
verdict_with 39000 39100 39200 # below all's fewest: behind
has_row "| c16 | 1250 (1240-1260) | all-minus-writev: 1250 (1250-1250) | x1.00 | ahead | 40200 (40000-40400) | all-minus-writev: 39100 (39000-39200) | x1.03 | behind |"
has_row "Verdict on instructions: not held: behind at c16."
md=$d/fixes.md

echo "== the runs under the plugin in the notes: the failed one only"
grep -qF "rep 6 tap step2-writev k1 (under the plugin): errors, 2 failed" "$md" || fail "the failed plugin run is not listed"
grep -F "rep 5 tap all-minus-writev c16" "$md" && fail "the busy plugin run is listed"

echo "== summary.md: instr/req beside req/s, and the section"
bench_run summarise --no-chart "$d" >"$tmp/sum" 2>&1 || { cat "$tmp/sum"; fail "summarise failed"; }
sm=$d/summary.md
grep -qF "| load | guest | req/s | x linux | instr/req | x linux | CPU us/req | x linux | p50 ms | p99 ms | runs |" "$sm" ||
	fail "summary.md's main table has no instr/req column"
# all k1: 15100 / 31000 = 0.49; its timed runs as before (3/3).
grep -F "| ab -k -c 1 | all | 8200 (8000-8400) | x7.45 | 15100 (15000-15200) | x0.49 |" "$sm" | contains -F "| 3/3 |" ||
	fail "summary.md: all k1's row"
# The section: all 25100 (total, spread 200 / 25100 = 0.8%), outside wait 15100 (200 / 15100 =
# 1.3%), 3 runs, plugin cost 1000 / 8200 = x0.12; Linux: 31200 in all (2000 / 31200 = 6.4%),
# outside its idle loop 31000 (6.5%), kernel 28000, user 3000, 1000 / 1100 = x0.91.
grep -qxF "| ab -k -c 1 | all | 25100 (25000-25200) | 0.8% | 15100 (15000-15200) | 1.3% | x0.49 | - | - | 3 | x0.12 |" "$sm" ||
	fail "summary.md: no instructions row for all k1"
grep -qxF "| ab -k -c 1 | linux | 31200 (30200-32200) | 6.4% | 31000 (30000-32000) | 6.5% | ref | 28000 (27000-29000) | 3000 (3000-3000) | 3 | x0.91 |" "$sm" ||
	fail "summary.md: no instructions row for linux k1"
grep -qF "Under the instruction-counting plugin: 33 runs (repetition 4-6)" "$sm" || fail "the header does not count the plugin's runs"
grep -qF "3 repetition(s)." "$sm" || fail "the plugin's repetitions were counted as timed ones"

echo "== a batch under the plugin only (REPS=0): a verdict on instructions alone"
rm -rf "$tmp/only" && mkdir "$tmp/only" && cp "$d/guests.csv" "$d/meta.txt" "$tmp/only/"
{ head -n1 "$d/runs.csv"; awk -F, 'NR > 1 && $1 >= 4' "$d/runs.csv"; } >"$tmp/only/runs.csv"
bench_run summarise --kind fixes --no-chart "$tmp/only" >/dev/null 2>&1 || fail "summarise failed on a batch under the plugin only"
grep -qxF "Verdict: no clean timed run to judge." "$tmp/only/fixes.md" || fail "a batch without timed runs got a requests/s verdict"
grep -qxF "Verdict on instructions: held at every load." "$tmp/only/fixes.md" || fail "no verdict on instructions alone"
grep -qxF "| linux | - | 31000 (30000-32000) | - | 101000 (100000-102000) |" "$tmp/only/fixes.md" ||
	fail "the steps table of a batch under the plugin only"

echo "== a batch without the plugin: no instruction column"
rm -rf "$tmp/plain" && mkdir "$tmp/plain" && cp "$fx/runs.csv" "$fx/guests.csv" "$fx/meta.txt" "$tmp/plain/"
bench_run summarise --kind fixes --no-chart "$tmp/plain" >/dev/null 2>&1 || fail "summarise failed on the plain batch"
grep -qxF "| step | k1 | c16 |" "$tmp/plain/fixes.md" || fail "a batch without the plugin got instruction columns"
grep -q "instr/req\|Verdict on instructions" "$tmp/plain/fixes.md" && fail "a batch without the plugin mentions instructions"
echo "all good"
