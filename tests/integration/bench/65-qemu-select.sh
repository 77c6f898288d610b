#!/usr/bin/env bash
# 65-qemu-select: QEMU=7.2|10|PATH picks the emulator in tools/qemu-run, the
# one place QEMU is started (no other script in the tree names the binary).
# A bad choice is a clear error (exit 200, not started), QEMU=10 without deps/qemu10 says how
# to fetch it, and with it: its own firmware (-L) and modules
# (QEMU_MODULE_DIR) on the command line, and a boot whose exit status is the
# app's and whose stderr holds no complaint of QEMU's (7.2's modules refuse
# to load into 10 and would turn the exit status into QEMU's failure).
set -uo pipefail
. "$(dirname "$0")/../lib/boot.sh"
run=$ROOT/tools/qemu-run
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== the system's QEMU by default"
v=$(QEMU= "$run" --version) || fail "qemu-run --version failed"
echo "$v"
[[ $v == "QEMU emulator version "*"["*qemu-system-x86_64"]" ]] || fail "unexpected --version: $v"
QEMU= "$run" --dry-run "$LOADER" | contains '^qemu-system-x86_64 ' || fail "the default is not the system's qemu-system-x86_64"
QEMU= "$run" --dry-run "$LOADER" | contains 'debug-threads=on' || fail "QEMU's threads are not named"
case "$v" in
"QEMU emulator version 7.2"*) QEMU=7.2 "$run" --version >/dev/null || fail "QEMU=7.2 refused on a 7.2 system" ;;
*) QEMU=7.2 "$run" --version 2>"$tmp/err"; [ $? = 2 ] && grep -q "the system's QEMU is" "$tmp/err" ||
	fail "QEMU=7.2 accepted on a system whose QEMU is not 7.2" ;;
esac

echo "== bad choices"
QEMU=bogus "$run" --version 2>"$tmp/err"; rc=$?
[ $rc = 200 ] && grep -q "QEMU must be 7.2, 10 or the path" "$tmp/err" || fail "QEMU=bogus: exit $rc, $(cat "$tmp/err")"
QEMU=/nonexistent/qemu-system-x86_64 "$run" --version 2>"$tmp/err"; rc=$?
[ $rc = 200 ] && grep -q "no such executable" "$tmp/err" || fail "QEMU=/nonexistent: exit $rc, $(cat "$tmp/err")"
# Without deps/qemu10 (a copy of qemu-run in a tree that lacks it):
mkdir -p "$tmp/tree/tools" && cp "$run" "$tmp/tree/tools/"
QEMU=10 "$tmp/tree/tools/qemu-run" --version 2>"$tmp/err"; rc=$?
[ $rc = 200 ] && grep -q "mk/deps.sh qemu10" "$tmp/err" || fail "QEMU=10 without deps/qemu10: exit $rc, $(cat "$tmp/err")"

echo "== nothing but qemu-run starts QEMU (committed batch records name the emulator they ran; they start nothing)"
# tools/nested/mkl1.sh names the binary to pack it into the nested-KVM
# host, where tools/qemu-run starts it.
others=$(cd "$ROOT" && git grep -l 'qemu-system-x86_64' -- . ':!README.md' ':!tools/qemu-run' ':!mk/deps.sh' \
	':!tests/integration/bench/65-qemu-select.sh' ':!bench/results' ':!tools/nested/mkl1.sh' 2>/dev/null)
[ -z "$others" ] || fail "files naming qemu-system-x86_64 besides tools/qemu-run: $others"

q10=$ROOT/deps/qemu10/root
if [ ! -x "$q10/usr/bin/qemu-system-x86_64" ]; then
	echo "QEMU 10 not fetched (mk/deps.sh qemu10; make test-qemu10 does): its boot is not checked here"
	echo "all good"
	exit 0
fi
echo "== QEMU=10: its own firmware and modules"
v=$(QEMU=10 "$run" --version) || fail "QEMU=10 --version failed"
echo "$v"
[[ $v == "QEMU emulator version 10."* ]] || fail "QEMU=10 is not 10.x: $v"
cmd=$(QEMU=10 "$run" --dry-run --net user "$LOADER")
echo "$cmd"
[[ $cmd == "QEMU_MODULE_DIR=$q10/usr/lib/x86_64-linux-gnu/qemu $q10/usr/bin/qemu-system-x86_64 -L $q10/usr/share/qemu -L /usr/share/seabios "* ]] ||
	fail "QEMU=10's command line lacks its firmware or module paths"
echo "== QEMU=10 (and the same binary as a path): a boot ends with the app's status, QEMU silent"
for q in 10 "$q10/usr/bin/qemu-system-x86_64"; do
	QEMU=$q "$run" --timeout 60 --net user --append '-- -e 3 -s 10 under ten' "$LOADER" "$HELLO" \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	cat "$tmp/out" "$tmp/err"
	[ $rc = 3 ] || fail "QEMU=$q: exit $rc, expected the app's 3"
	tr -d '\r' <"$tmp/out" | contains 'argv\[6\] = "ten"' || fail "QEMU=$q: the app's words are not on the console"
	[ ! -s "$tmp/err" ] || fail "QEMU=$q: QEMU complained: $(cat "$tmp/err")"
done
echo "all good"
