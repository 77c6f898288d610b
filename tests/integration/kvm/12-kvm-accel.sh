#!/usr/bin/env bash
# ACCEL=kvm (or --accel kvm) where KVM cannot run stops before QEMU starts,
# with one line saying why (no /dev/kvm, no access to it, or a CPU without
# vmx/svm, as in a VM without nested virtualization) and status 200; left to
# itself qemu-run picks TCG there. Where KVM can run, hello boots under it and
# the kernel reads KVM's CPUID signature (cpu_hypervisor()).
. "$(dirname "$0")/../lib/boot.sh"

auto=$(env -u ACCEL "$QEMU_RUN" --dry-run "$LOADER" "$HELLO" | grep -o -- '-accel [a-z]*')
echo "qemu-run picks: $auto"
if [ "$auto" = "-accel kvm" ]; then
	ACCEL=kvm boot "$HELLO" -- 'verbose quiet -- -e 5 -s 0'
	expect_rc 5
	expect '^kernel: CPU .*; hypervisor KVM;'
	echo "all good (KVM is usable here)"
	exit 0
fi
[ "$auto" = "-accel tcg" ] || fail "qemu-run picks neither tcg nor kvm: '$auto'"

ACCEL=kvm boot "$HELLO" -- 'quiet -- -s 0'
expect_rc 200
expect '^qemu-run: ACCEL=kvm, but KVM is unusable here: (/dev/kvm does not exist|/dev/kvm is not readable|the CPU has no vmx or svm flag)'
expect_not '^loader:' "(QEMU must not have started)"
[ "$(printf '%s\n' "$OUT" | grep -c .)" = 1 ] || fail "more than the one line"
boot "$HELLO" --accel kvm -- 'quiet -- -s 0'
expect_rc 200
ACCEL=kvm "$QEMU_RUN" --dry-run "$LOADER" "$HELLO" >/dev/null 2>&1
[ $? = 200 ] || fail "--dry-run with ACCEL=kvm does not refuse"

# And the default, TCG, reads TCG's signature.
boot "$HELLO" -- 'verbose quiet -- -s 0'
expect_rc 0
expect '^kernel: CPU .*; hypervisor TCG;'
echo "all good"
