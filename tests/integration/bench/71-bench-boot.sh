#!/usr/bin/env bash
# 71-bench-boot: make bench-boot's batch, small (bench/run boot QUICK=1, the
# unikernel alone, one boot on each machine under TCG): it must finish with
# status 0 and leave boots.csv (a row per boot, each answered, with its
# first-answer times, the guest's own boot time from the kernel's boot_time
# line, QEMU's memory), min-mem.csv's header, meta.txt naming the workload,
# and summary.md with a row per machine, which bench/run summarise writes
# again the same. A bad setting is refused with exit 2 before anything
# starts. No time is asserted: only that each figure is there and a number.
# ACCELS=nested is too slow here (an L1 boot, minutes): its records and
# tables are checked on a canned output of bench/kvm/boot.sh instead
# (tests/fixtures/bench/boot-nested: 3 boots of uk and linux on pc and
# microvm from a real L1 run, and one failed boot of a guest 'broken'),
# every figure worked out by hand from it.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
py=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 missing"
command -v curl >/dev/null || skip "curl missing"
image=$BUILD/apps/httpd-all.elf
[ -f "$ROOT/$image" ] || image=$BUILD/apps/httpd.elf
[ -f "$ROOT/$image" ] && [ -f "$ROOT/$BUILD/loader/loader.elf" ] || skip "$image or the loader not built"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "0.00 0.00 0.00 1/100 1" >"$tmp/quiet" # the guard reads this, not the host's load
boot() { # OUT settings...: bench/run boot on the unikernel alone
	local out=$tmp/$1
	shift
	(cd "$ROOT" && env QUICK=1 GUESTS=uk UK_HTTPD="$image" BOOTS=1 ACCELS=tcg LOADAVG_FILE="$tmp/quiet" OUT="$out" \
		"$@" "$py" bench/run boot) >"$out.log" 2>&1
}

echo "== nested KVM: records and tables from a canned L1 output"
nb=$tmp/nested
mkdir -p "$nb/raw"
cp "$ROOT/tests/fixtures/bench/boot-nested/nested-l1.txt" "$nb/raw/nested-l1.txt"
echo "workload: boot" >"$nb/meta.txt"
(cd "$ROOT/bench" && "$py" - "$nb") <<'PY' || fail "the nested records are not as expected"
import csv, os, sys
from runner.workloads import boot
out = sys.argv[1]
rows = boot.append_nested_records(os.path.join(out, "raw", "nested-l1.txt"), os.path.join(out, "boots.csv"),
                                  os.path.join(out, "exits.csv"), 256)
assert len(rows) == 13, rows
boots = list(csv.DictReader(open(os.path.join(out, "boots.csv"), newline="")))
assert [(r["guest"], r["machine"], r["boot"]) for r in boots[:4]] == \
    [("uk", "pc", "1"), ("uk", "microvm", "1"), ("linux", "pc", "1"), ("linux", "microvm", "1")], boots
uk1 = boots[1]
assert (uk1["accel"], uk1["status"], uk1["exits"], uk1["qemu_to_answer_ms"], uk1["guest_boot_us"],
        uk1["guest_clock"], uk1["mem_mib"], uk1["pss_kib"]) == \
    ("kvm-nested", "ok", "785", "1722.2", "402057.3", "tsc-from-entry", "256", ""), uk1
assert boots[2]["guest_clock"] == "linux-boottime", boots[2]
bad = boots[12]
assert (bad["guest"], bad["status"], bad["exits"], bad["guest_boot_us"]) == ("broken", "no_answer", "", ""), bad
exits = list(csv.DictReader(open(os.path.join(out, "exits.csv"), newline="")))
mine = {(e["reason"], e["count"]) for e in exits if (e["guest"], e["machine"], e["boot"]) == ("uk", "microvm", "3")}
assert ("0x7b", "533") in mine and ("0x60", "11") in mine and ("0x400", "162") in mine, mine
assert not [e for e in exits if e["guest"] == "broken"], exits
print("nested: 13 boots and their exits by reason recorded")
PY
"$py" "$ROOT/bench/run" summarise "$nb" >/dev/null 2>&1 || fail "bench/run summarise failed on the nested records"
nmd=$nb/summary.md
nrow() { grep -qxF -- "$1" "$nmd" || { cat "$nmd"; fail "summary.md lacks the line: $1"; }; }
nrow "| uk | microvm | kvm-nested | 3 of 3 | 1722.2 (1176.6-1723.7) | - | 402.057 (220.993-439.458) (tsc-from-entry) | - | - | - | - | none tried | 784 (768-785) |"
nrow "| broken | pc | kvm-nested | 0 of 1 | - | - | - | - | - | - | - | none tried | - |"
nrow "| guest | machine | boots | exits to listening | pio (0x7b) | intr (0x60) | npf (0x400) | cpuid (0x72) | msr (0x7c) | vintr (0x64) | cr0 sel (0x65) | cr4 write (0x14) | other |"
nrow "| uk | microvm | 3 | 784 (768-785) | 533 | 24 | 162 | 42 | 15 | 0 | 2 | 3 | 3 |"
nrow "| linux | microvm | 3 | 38534 (37681-38676) | 33862 | 2583 | 698 | 731 | 289 | 245 | 2 | 126 | 46 |"
nrow "- microvm: uk 784, linux 38534: 0.0203 (1/49.2)"
nrow "- pc: uk 7842, linux 48507: 0.1617 (1/6.2)"
nrow "- uk on microvm (nested KVM): 784 exits from QEMU's start to listening, linux 38534: 1/49.2 of them (goal: at most 1/20): met"
echo "nested: summary.md's rows, exits by reason and ratios as worked out"

echo "== a bad setting: refused before anything starts"
boot bad MACHINES="pc vax"; rc=$?
[ $rc = 2 ] || { cat "$tmp/bad.log"; fail "MACHINES='pc vax' gave exit $rc, expected 2"; }
grep -q "unknown machine 'vax'" "$tmp/bad.log" || fail "the refusal does not name the bad machine"
[ ! -e "$tmp/bad" ] || fail "a refused batch left a results folder"

echo "== one boot on each machine"
boot ok; rc=$?
cat "$tmp/ok.log"
[ $rc = 0 ] || fail "bench/run boot exited $rc"
out=$tmp/ok
grep -qx 'workload: boot' "$out/meta.txt" || fail "meta.txt does not name the workload"
"$py" - "$out" <<'PY' || fail "boots.csv is not as expected"
import csv, os, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "boots.csv"), newline="")))
assert [(r["guest"], r["machine"], r["accel"], r["boot"]) for r in rows] == \
    [("uk", "pc", "tcg", "1"), ("uk", "microvm", "tcg", "1")], rows
for r in rows:
    assert r["status"] == "ok", r
    for k in ("qemu_to_answer_ms", "run_to_answer_ms", "guest_boot_us", "pss_kib", "rss_kib"):
        assert float(r[k]) > 0, (k, r)
    # QEMU starts after qemu-run does; the guest's boot is within its answer.
    assert float(r["qemu_to_answer_ms"]) <= float(r["run_to_answer_ms"]), r
    assert float(r["guest_boot_us"]) / 1000 < float(r["qemu_to_answer_ms"]), r
    assert r["guest_clock"] == "tsc-from-entry", r
    assert int(r["rss_kib"]) >= int(r["pss_kib"]), r
header = next(csv.reader(open(os.path.join(out, "min-mem.csv"), newline="")))
assert header == ["guest", "machine", "accel", "mem_mib", "served"], header
print("boots.csv: 2 boots answered, every figure a number")
PY
md=$out/summary.md
for m in pc microvm; do
	grep -qE "^\| uk \| $m \| tcg \| 1 of 1 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \(tsc-from-entry\) \| [0-9.]+ \| [0-9.]+ \|" "$md" ||
		{ cat "$md"; fail "summary.md has no full row for uk on $m"; }
done
cp "$md" "$tmp/first.md"
"$py" "$ROOT/bench/run" summarise "$out" >/dev/null 2>&1 || fail "bench/run summarise failed on the batch"
cmp -s "$md" "$tmp/first.md" || fail "bench/run summarise wrote a different summary.md"
echo "bench-boot: records and table well formed"
