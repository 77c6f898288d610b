#!/usr/bin/env bash
# 71-bench-boot: make bench-boot's batch, small (bench/run boot QUICK=1, the
# unikernel alone, one boot on each machine under TCG): it must finish with
# status 0 and leave boots.csv (a row per boot, each answered, with its
# first-answer times, the guest's own boot time from the kernel's boot_time
# line, QEMU's memory), min-mem.csv's header, meta.txt naming the workload,
# and summary.md with a row per machine, which bench/run summarise writes
# again the same. A bad setting is refused with exit 2 before anything
# starts. No time is asserted: only that each figure is there and a number.
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
