#!/usr/bin/env bash
# A CPU model without a feature the loader or the kernel needs is refused
# before anything uses it: one line naming the feature and what needs it,
# then the exit line and status 69, never a fault (under TCG a missing SSE,
# CMOV or long mode is a triple fault, which qemu-run would report as 202, or
# an invalid-opcode panic, 70). Long mode, PAE and MSRs are checked in the
# loader's 32-bit entry, before it enters long mode; the rest (NX: test 06)
# in its C. RDRAND is optional: without it the canary comes from the TSC.
. "$(dirname "$0")/../lib/boot.sh"

check() { # CPU REASON-REGEX
	QEMU_EXTRA="-cpu $1" boot "$HELLO" -- 'quiet -- -s 0'
	expect_rc 69
	expect "^loader: error: the CPU has no $2"
	[ "$(printf '%s\n' "$OUT" | grep -c '^loader: error')" = 1 ] || fail "not exactly one error line"
	expect '^loader: exit status 69$'
	expect_not '^argv'
}
check qemu32 "long mode \\(the image is 64-bit code\\)$"
check qemu64,-lm "long mode"
check pentium3 "long mode"
check qemu64,-pae "PAE \\(long mode's page tables need it\\)$"
check qemu64,-msr "MSRs"
check qemu64,-tsc "TSC \\(the kernel's clock counts it\\)$"
check qemu64,-fpu "x87 FPU"
check qemu64,-cmov "CMOV"
check qemu64,-fxsr "FXSR"
check qemu64,-sse "SSE \\("
check qemu64,-sse2 "SSE2 \\(the compiled x86-64 code uses it\\)$"
check qemu64,-apic "local APIC"

QEMU_EXTRA="-cpu qemu64,-rdrand" boot "$HELLO" -- 'verbose quiet -- -s 0'
expect_rc 0
expect '^kernel: CPU .* RDRAND no,'
echo "all good"
