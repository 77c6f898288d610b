#!/usr/bin/env bash
# Every way a guest can end comes out of tools/qemu-run as its own status: the
# app's 0-127 only when the console's last line ("kernel: exit status N")
# confirms isa-debug-exit's code, so QEMU printing warnings on stderr does not
# turn a clean exit into a failure, and QEMU's own exit 0 (a triple fault, a
# reset) or a code nobody confirmed never reads as the app's status. The same
# for the Linux guest: init's exit line and status, and a kernel panic.
. "$(dirname "$0")/../lib/boot.sh"
EXITCHECK=$ROOT/$BUILD/apps/exitcheck.elf
tmp=$(mktemp -d)
trap 'kill "$qemu" 2>/dev/null; rm -rf "$tmp"' EXIT
qemu=""

# The app's own statuses, 0 and the highest 7-bit one, each confirmed by the line.
for s in 0 1 127; do
	boot "$HELLO" -- "quiet -- -e $s -s 0"
	expect_rc "$s"
	[ "$(printf '%s\n' "$OUT" | grep -v '^qemu-run:' | tail -n1)" = "kernel: exit status $s" ] ||
		fail "the console's last line is not the exit line"
done

# A CPU model TCG cannot fully give prints warnings on QEMU's stderr; the
# app's 0 (QEMU's exit code 1, as for QEMU's own failure) is still 0.
QEMU_EXTRA="-cpu EPYC" boot "$HELLO" -- 'quiet -- -s 0'
expect "warning: TCG doesn't support requested feature" "(the configuration prints on stderr)"
expect_rc 0

# A triple fault: QEMU (-no-reboot) exits 0, which is no status at all.
boot "$EXITCHECK" -- 'quiet -- triple-fault'
expect_rc 202
expect '^qemu-run: the guest ended without an exit status: QEMU exited 0'
# The exit line alone is no exit: printed, then a triple fault.
boot "$EXITCHECK" -- 'quiet -- fake-line 0'
expect '^kernel: exit status 0$'
expect_rc 202
# A code no line confirms: written with no exit line, or with another status's.
boot "$EXITCHECK" -- 'quiet -- raw-port 5'
expect_rc 203
expect '^qemu-run: QEMU ended with exit code 11, which the console'
boot "$EXITCHECK" -- 'quiet -- mismatch 3 4'
expect_rc 203

# QEMU's own failure, and what qemu-run refuses before starting it.
QEMU_EXTRA="-device no-such-device" boot "$HELLO" -- 'quiet -- -s 0'
expect_rc 201
expect '^qemu-run: QEMU failed'
boot "$HELLO" --no-such-option -- 'quiet'
expect_rc 200
boot "$HELLO" --accel bogus -- 'quiet'
expect_rc 200
expect "ACCEL must be tcg or kvm"

# --timeout, and QEMU stopped by a signal (KILL; TERM, which QEMU turns into
# its own exit 0).
BOOT_TIMEOUT=2 boot "$HELLO" -- 'quiet -- -s 60000'
expect_rc 204
expect '^qemu-run: the guest was still running after 2s'
for sig in KILL TERM; do
	rm -f "$tmp/pid"
	"$QEMU_RUN" --timeout 60 --append 'quiet -- -s 60000' "$LOADER" "$HELLO" -- -pidfile "$tmp/pid" \
		>"$tmp/out" 2>&1 &
	qemu=$!
	for _ in $(seq 100); do [ -s "$tmp/pid" ] && break; sleep 0.1; done
	sleep 0.5
	kill -s "$sig" "$(cat "$tmp/pid")"
	wait "$qemu"
	RC=$? qemu=""
	OUT=$(tr -d '\r' <"$tmp/out")
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	echo "  SIG$sig: rc=$RC"
	expect_rc 203
done

# The Linux guest: init's exit line carries the app's status (httpd refuses
# an unknown option with 2); a kernel panic (no init to run) is its own status.
kernel=$ROOT/$BUILD/linux/vmlinux initrd=$ROOT/$BUILD/linux/initrd.img
if [ -f "$kernel" ] && [ -f "$initrd" ]; then
	for case in "2|-- --no-such-option" "205|rdinit=/nonexistent"; do
		want=${case%%|*} append="console=ttyS0 quiet panic=-1 ${case#*|}"
		echo "+ qemu-run --append '$append' vmlinux initrd.img"
		"$QEMU_RUN" --timeout 120 --append "$append" "$kernel" "$initrd" </dev/null >"$tmp/out" 2>&1
		RC=$?
		OUT=$(tr -d '\r' <"$tmp/out")
		printf '%s\n' "$OUT" | tail -n 4 | sed 's/^/  | /'
		echo "  rc=$RC"
		expect_rc "$want"
	done
	expect '^qemu-run: the Linux guest panicked: Kernel panic - not syncing'
else
	echo "Linux guest not built: its cases skipped"
fi
echo "all good"
