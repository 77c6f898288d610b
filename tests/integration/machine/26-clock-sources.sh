#!/usr/bin/env bash
# test-timeout: 400
# The TSC's rate from each source the PC machine offers under TCG, forced by
# the `clock` option (kernel/clock_sources.c): the local APIC's timer, PIT
# channel 2, the HPET, the ACPI PM timer, PIT channel 0. Each boot names its
# source and rate, runs hello to its exit status, and the rates agree with
# the PIT's. A source the machine lacks (CPUID leaf 0x15 on qemu64, the
# hypervisor leaf and kvmclock under TCG, the HPET with hpet=off, the local
# APIC's timer where the CPU does not say it is TCG) refuses the boot with
# status 71 and a line naming it, before the app runs. The auto choice under
# TCG is the local APIC's timer, and the boot says so. Then QEMU's microvm
# machine (PVH boot), with no speaker gate: the auto choice boots hello
# there, and with neither PIT nor ACPI nor TCG's CPUID signature the boot is
# refused (71) with the list of what was tried.
. "$(dirname "$0")/../lib/boot.sh"

boot "$HELLO" -- 'verbose -- -e 3'
expect_rc 3
expect '^kernel: [0-9]+ MiB RAM, heap up to [0-9]+ MiB, TSC [0-9]+ MHz from lapic, booted in'
expect '^kernel: clock: TSC [0-9]+\.[0-9]{3} MHz from lapic \(local APIC timer calibration\)$'

declare -A mhz
for source in lapic pit hpet pmtimer pit0; do
	boot "$HELLO" -- "clock=$source quiet -- -e 5 -s 20"
	expect_rc 5
	expect "^kernel: clock: TSC [0-9]+\\.[0-9]{3} MHz from $source \\("
	expect '^slept 20 ms: [0-9]+ ms passed$'
	mhz[$source]=$(sed -nE 's/^kernel: clock: TSC ([0-9]+)\.[0-9]+ MHz.*/\1/p' <<<"$OUT")
done
for source in lapic hpet pmtimer pit0; do
	# Within a factor of 1.5 of the PIT's: a wrong unit or width would be
	# far off, while a calibration under TCG reads the host's TSC, which a
	# busy host can stretch by tens of percent (the PIT's least of five
	# rounds most: seen 1.4x at a load average near 6).
	[ $((mhz[$source] * 3)) -ge $((mhz[pit] * 2)) ] && [ $((mhz[$source] * 2)) -le $((mhz[pit] * 3)) ] ||
		fail "$source gives ${mhz[$source]} MHz, the PIT ${mhz[pit]} MHz"
done
echo "rates (MHz): lapic ${mhz[lapic]}, pit ${mhz[pit]}, hpet ${mhz[hpet]}, pmtimer ${mhz[pmtimer]}, pit0 ${mhz[pit0]}"

for source in cpuid hypervisor kvmclock; do
	boot "$HELLO" -- "clock=$source -- -e 5"
	expect_rc 71
	expect "^kernel: clock=$source: no TSC rate from "
	expect_not '^argv\[' "(the app did not run)"
	expect_not '^panic' "(a refusal, not a panic)"
done
QEMU_EXTRA="-machine hpet=off" boot "$HELLO" -- 'clock=hpet -- -e 5'
expect_rc 71
expect '^kernel: clock=hpet: no TSC rate from HPET calibration: no such ACPI table$'
# QEMU names TCG in CPUID leaf 0x40000000 unless told not to: then the
# local APIC's rate is not known, and it is refused like a missing device.
QEMU_EXTRA="-cpu qemu64,tcg-cpuid=off" boot "$HELLO" -- 'clock=lapic -- -e 5'
expect_rc 71
expect "^kernel: clock=lapic: no TSC rate from local APIC timer calibration: its rate is known only under QEMU's TCG$"
boot "$HELLO" -- 'clock=tsc -- -e 5'
expect_rc 64
expect '^kernel: option clock=tsc: not one of auto, cpuid, hypervisor, kvmclock, lapic, pit, hpet, pmtimer, pit0'

# microvm: no speaker gate, and here no RTC either.
QEMU_EXTRA="-machine rtc=off" boot "$HELLO" --machine microvm -- 'verbose -- -e 0 -s 20'
expect_rc 0
expect '^kernel: no CMOS RTC answers \(its registers read 0xff\): wall-clock time starts at 1970'
expect '^kernel: clock: TSC [0-9]+\.[0-9]{3} MHz from [a-z0-9]+ \('
expect '^argv\[1\] = "-e"$'
expect '^slept 20 ms: [0-9]+ ms passed$'
expect '^kernel: exit status 0$'
expect_not '^panic'
# Neither PIT nor ACPI (qemu-run turns microvm's off) nor a hypervisor
# that says it is TCG (the local APIC's timer's rate unknown).
QEMU_EXTRA="-machine pit=off,rtc=off -cpu qemu64,tcg-cpuid=off" boot "$HELLO" --machine microvm -- 'quiet -- -e 0'
expect_rc 71
expect '^kernel: no clock: no source gives the TSC.s rate'
expect '^kernel:   lapic \(local APIC timer calibration\): its rate is known only under QEMU.s TCG$'
expect '^kernel:   pit0 \(PIT channel 0 calibration\): '
expect '^kernel: exit status 71$'
expect_not '^argv\['
expect_not '^panic'
echo "all good"
