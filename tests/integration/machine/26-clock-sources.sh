#!/usr/bin/env bash
# test-timeout: 400
# The TSC's rate from each source the PC machine offers under TCG, forced by
# the `clock` option (kernel/clock_sources.c): PIT channel 2, the HPET, the
# ACPI PM timer, PIT channel 0. Each boot names its source and rate, runs
# hello to its exit status, and the rates agree with the PIT's. A source the
# machine lacks (CPUID leaf 0x15 on qemu64, the hypervisor leaf and kvmclock
# under TCG, the HPET with hpet=off) refuses the boot with status 71 and a
# line naming it, before the app runs. The PC machine's own boot (auto)
# still says nothing about its clock. Then QEMU's microvm machine, if this
# QEMU has it, with no speaker gate: the auto choice boots hello there, and
# with neither PIT nor ACPI nor a hypervisor the boot is refused (71) with
# the list of what was tried. microvm runs raw QEMU (tools/qemu-run knows
# only the PC machine here), with the multiboot loader as an option ROM.
. "$(dirname "$0")/../lib/boot.sh"

boot "$HELLO" -- 'verbose -- -e 3'
expect_rc 3
expect '^kernel: [0-9]+ MiB RAM, heap up to [0-9]+ MiB, TSC [0-9]+ MHz from pit, booted in'
expect_not '^kernel: clock:' "(the PC machine's boot says nothing new)"

declare -A mhz
for source in pit hpet pmtimer pit0; do
	boot "$HELLO" -- "clock=$source quiet -- -e 5 -s 20"
	expect_rc 5
	expect "^kernel: clock: TSC [0-9]+\\.[0-9]{3} MHz from $source \\("
	expect '^slept 20 ms: [0-9]+ ms passed$'
	mhz[$source]=$(sed -nE 's/^kernel: clock: TSC ([0-9]+)\.[0-9]+ MHz.*/\1/p' <<<"$OUT")
done
for source in hpet pmtimer pit0; do
	# Within 10% of the PIT's: under TCG each calibration reads a loaded
	# host's TSC, and the least of five rounds differs by source.
	d=$((mhz[$source] - mhz[pit]))
	[ $((d < 0 ? -d : d)) -le $((mhz[pit] / 10)) ] ||
		fail "$source gives ${mhz[$source]} MHz, the PIT ${mhz[pit]} MHz"
done
echo "rates (MHz): pit ${mhz[pit]}, hpet ${mhz[hpet]}, pmtimer ${mhz[pmtimer]}, pit0 ${mhz[pit0]}"

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
boot "$HELLO" -- 'clock=tsc -- -e 5'
expect_rc 64
expect '^kernel: option clock=tsc: not one of auto, cpuid, hypervisor, kvmclock, pit, hpet, pmtimer, pit0'

# microvm: raw QEMU; isa-debug-exit's code 2N+1 is the guest's N.
qemu=${QEMU_BIN:-qemu-system-x86_64}
if ! "$qemu" -machine help 2>/dev/null | grep -q '^microvm '; then
	echo "no microvm machine in $qemu: its cases skipped"
	echo "all good"
	exit 0
fi
microvm() {
	local machine=$1 append=$2 log code
	log=$(mktemp)
	echo "+ $qemu -M $machine ... -append '$append'"
	timeout 60 "$qemu" -M "$machine" -accel tcg -m 64M -smp 1 -nographic -no-reboot \
		-cpu qemu64,apic,fsgsbase,fxsr,rdrand,rdtscp,xsave,xsaveopt \
		-device isa-debug-exit,iobase=0xf4,iosize=4 -kernel "$LOADER" -initrd "$HELLO" \
		-append "$append" </dev/null >"$log" 2>&1
	code=$?
	OUT=$(tr -d '\r' <"$log")
	rm -f "$log"
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	# Odd codes only: QEMU's own exit 0 (a triple fault) is no status.
	if [ $((code % 2)) = 1 ]; then RC=$(((code - 1) / 2)); else RC="none"; fi
	echo "  qemu exit code $code: status $RC"
}
microvm microvm,x-option-roms=on,rtc=off 'verbose -- -e 0 -s 20'
expect_rc 0
expect '^kernel: no CMOS RTC answers \(its registers read 0xff\): wall-clock time starts at 1970'
expect '^kernel: clock: TSC [0-9]+\.[0-9]{3} MHz from [a-z0-9]+ \('
expect '^argv\[1\] = "-e"$'
expect '^slept 20 ms: [0-9]+ ms passed$'
expect '^kernel: exit status 0$'
expect_not '^panic'
microvm microvm,x-option-roms=on,pit=off,acpi=off,rtc=off 'quiet -- -e 0'
expect_rc 71
expect '^kernel: no clock: no source gives the TSC.s rate'
expect '^kernel:   pit0 \(PIT channel 0 calibration\): '
expect '^kernel: exit status 71$'
expect_not '^argv\['
expect_not '^panic'
echo "all good"
