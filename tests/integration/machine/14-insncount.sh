#!/usr/bin/env bash
# 14-insncount: the instruction-counting plugin (tools/plugin/insncount.c)
# through tools/qemu-run --count. hello, booted twice with a 100 ms sleep,
# is counted: millions of instructions at exit, the two boots within 10% of
# each other (the BIOS and the loader poll devices, so a boot's count moves a
# little), and the sleep's park counted in the wait region. A label written
# to the ctl FIFO while the guest runs gets a mark line no later than the
# exit's. The regions come from the image's symbols (they must agree with
# nm's); the Linux guest's from its kallsyms, which must put every exported
# symbol where __ksymtab does. A bad plugin argument stops QEMU, and counting
# refuses an emulator without a plugin build. Under QEMU=10 (make
# test-qemu10) all of it runs with QEMU 10's plugin build; under 7.2 its
# boot is tried too when deps/qemu10 and that build are there. Nothing
# depends on speed.
set -uo pipefail
. "$(dirname "$0")/../lib/boot.sh"
run=$ROOT/tools/qemu-run
case "${QEMU:-}" in 10) plugin=$ROOT/$BUILD/plugin/insncount-10.so ;; *) plugin=$ROOT/$BUILD/plugin/insncount-7.2.so ;; esac
[ -f "$plugin" ] || { echo "$plugin not built (make plugin)"; exit 77; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

# field FILE LABEL CLASS: the count of CLASS on the mark line LABEL.
field() { sed -nE "s/^$2:(.*,)? $3 ([0-9]+)(,.*)?$/\2/p" "$1" | tail -n1; }

echo "== hello twice: counted, nonzero, stable, the park in the wait region"
for i in 1 2; do
	"$run" --accel tcg --timeout 60 --count "$tmp/c$i" --append '-- -s 100' "$LOADER" "$HELLO" >"$tmp/log$i" 2>&1 ||
		{ cat "$tmp/log$i"; fail "boot $i failed"; }
	cat "$tmp/c$i"
done
t1=$(field "$tmp/c1" exit total) t2=$(field "$tmp/c2" exit total)
[ -n "$t1" ] && [ -n "$t2" ] || fail "no exit line"
[ "$t1" -gt 1000000 ] && [ "$t2" -gt 1000000 ] || fail "hello counted only $t1 and $t2 instructions"
awk -v a="$t1" -v b="$t2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.1 * a) }' ||
	fail "two boots of hello: $t1 and $t2 instructions, more than 10% apart"
for i in 1 2; do
	park=$(field "$tmp/c$i" exit park) other=$(field "$tmp/c$i" exit other)
	[ -n "$park" ] && [ "$park" -gt 0 ] || fail "boot $i: the sleep's park was not counted (park ${park:-missing})"
	[ "$(field "$tmp/c$i" exit total)" = "$((park + other + $(field "$tmp/c$i" exit spin)))" ] ||
		fail "boot $i: the classes do not add up to the total"
done
grep -qE '^# regions: .*park 0x[0-9a-f]+-0x[0-9a-f]+' "$tmp/c1" || fail "the file does not list the park's range"

echo "== the regions are the image's symbols"
while read -r cls start end name; do
	want=$(nm -S "$HELLO" | awk -v n="$name" '$4 == n { print $1, $2 }')
	[ -n "$want" ] || fail "$name is not in nm's list"
	read -r addr size <<<"$want"
	[ $((start)) = $((16#$addr)) ] && [ $((end)) = $((16#$addr + 16#$size)) ] ||
		fail "$cls $name: $start-$end, nm says $addr + $size"
done < <(python3 "$ROOT/tools/plugin/insnregions.py" --list "$LOADER" "$HELLO")
python3 "$ROOT/tools/plugin/insnregions.py" --list "$LOADER" "$HELLO" | contains '^park .* cpu_park$' || fail "no park region"

echo "== a mark from the ctl FIFO while the guest runs"
mkfifo "$tmp/ctl"
"$run" --accel tcg --timeout 60 --count "$tmp/m" --count-ctl "$tmp/ctl" --append '-- -s 1500' "$LOADER" "$HELLO" \
	>"$tmp/mlog" 2>&1 &
pid=$!
sleep 0.5
echo "mid-1" >"$tmp/ctl"
echo "bad label!" >"$tmp/ctl"
wait "$pid" || { cat "$tmp/mlog"; fail "the marked boot failed"; }
pid=""
cat "$tmp/m"
mid=$(field "$tmp/m" mid-1 total) end=$(field "$tmp/m" exit total)
[ -n "$mid" ] && [ -n "$end" ] || fail "no mark line for the label (or no exit line)"
[ "$mid" -le "$end" ] || fail "the mark ($mid) counts more than the exit ($end)"
grep -q '^bad-label: total ' "$tmp/m" || fail "a label with a space was not answered as bad-label"

echo "== bad arguments and emulators"
"$run" --accel tcg --timeout 30 --append '-- -e 3' "$LOADER" "$HELLO" -- -plugin "$plugin,out=$tmp/x,bogus=1" \
	>"$tmp/bad" 2>&1; rc=$?
[ $rc = 201 ] && grep -q "insncount: unknown argument 'bogus=1'" "$tmp/bad" || { cat "$tmp/bad"; fail "a bad argument: exit $rc"; }
"$run" --count-ctl "$tmp/ctl" "$LOADER" 2>"$tmp/err"; rc=$?
[ $rc = 200 ] && grep -q -- "--count-ctl needs --count" "$tmp/err" || fail "--count-ctl alone: exit $rc"
INSNCOUNT_PLUGIN=$tmp/none.so "$run" --accel tcg --count "$tmp/x" "$LOADER" 2>"$tmp/err"; rc=$?
[ $rc = 200 ] && grep -q "no $tmp/none.so" "$tmp/err" || fail "a missing plugin: exit $rc, $(cat "$tmp/err")"

if [ -f "$ROOT/$BUILD/linux/vmlinux" ]; then
	echo "== the Linux guest's kallsyms against its exported symbols"
	python3 "$ROOT/tools/plugin/insnregions.py" --check-ksymtab "$ROOT/$BUILD/linux/vmlinux" || fail "kallsyms misread"
	python3 "$ROOT/tools/plugin/insnregions.py" "$ROOT/$BUILD/linux/vmlinux" >"$tmp/lr" || fail "no regions for vmlinux"
	grep -qx 'split=half' "$tmp/lr" && grep -q '^region=idle:ffffffff8' "$tmp/lr" || fail "vmlinux regions: $(cat "$tmp/lr")"
fi

if [ "${QEMU:-}" != 10 ] && QEMU=10 "$run" --version >/dev/null 2>&1 &&
	[ -f "$ROOT/$BUILD/plugin/insncount-10.so" ]; then
	echo "== QEMU 10"
	QEMU=10 "$run" --accel tcg --timeout 60 --count "$tmp/q10" --append '-- -s 100' "$LOADER" "$HELLO" >"$tmp/q10log" 2>&1 ||
		{ cat "$tmp/q10log"; fail "the QEMU 10 boot failed"; }
	cat "$tmp/q10"
	[ "$(field "$tmp/q10" exit total)" -gt 1000000 ] && [ "$(field "$tmp/q10" exit park)" -gt 0 ] ||
		fail "QEMU 10 did not count"
else
	echo "(no deps/qemu10 or no QEMU 10 plugin build: QEMU 10 not tried)"
fi
echo "all good"
