#!/usr/bin/env bash
# clock.sh: the TSC's rate under KVM (run in L1 through tools/nested/run-l1):
# clock=auto picks an exact source there (kvmclock, or the hypervisor leaf
# where QEMU gives it) and names it; each source is forced in turn and
# either names itself with a rate within 2% of L1's own TSC rate (as
# /proc/cpuinfo gives it) or refuses with status 71 and a line, and a 1 s
# sleep takes at least 1 s of L1's time. With kvmclock, wall-clock time
# comes from KVM's wall clock (no CMOS RTC read): hello's "time:" line
# agrees with L1's clock within 5 s. Ends with "kvm: all good".
. "$ROOT/tools/nested/scenario-lib.sh"
cd "$ROOT"
HELLO=build/apps/hello.elf
l1mhz=$(awk -F: '/^cpu MHz/ { printf "%d", $2; exit }' /proc/cpuinfo)

boot_clock() { # CLOCK [QEMU-ARGS...]: sets OUT and RC
	local clock=$1
	shift
	OUT=$(ACCEL=kvm tools/qemu-run --timeout 120 --append "verbose quiet clock=$clock -- -s 1000" \
		"$LOADER" "$HELLO" -- "$@" 2>&1 </dev/null)
	RC=$?
	OUT=$(tr -d '\r' <<<"$OUT")
	grep -E '^kernel: (clock|no clock|clock=)|TSC|^slept|^kernel: exit' <<<"$OUT" | sed 's/^/kvm: | /'
}

boot_clock auto
[ "$RC" = 0 ] || fail "clock=auto: status $RC"
contains -E '^kernel: clock: TSC [0-9.]+ MHz from (kvmclock|hypervisor|cpuid) ' <<<"$OUT" ||
	fail "clock=auto did not take an exact source under KVM"
boot_clock kvmclock
[ "$RC" = 0 ] || fail "clock=kvmclock: status $RC"
guest_time=$(sed -nE 's/^time: (.*) UTC$/\1/p' <<<"$OUT")
[ -n "$guest_time" ] || fail "clock=kvmclock: hello printed no time"
d=$(($(date -u +%s) - $(date -u -d "$guest_time" +%s)))
[ $((d < 0 ? -d : d)) -le 5 ] || fail "clock=kvmclock: the guest's time $guest_time is ${d}s from L1's"
say "clock=kvmclock: wall-clock time $guest_time, ${d}s from L1's"
for c in cpuid hypervisor kvmclock lapic pit hpet pmtimer pit0; do
	boot_clock "$c"
	case $RC in
	0)
		mhz=$(sed -nE 's/^kernel: clock: TSC ([0-9]+)\.[0-9]+ MHz.*/\1/p' <<<"$OUT")
		[ -n "$mhz" ] || fail "clock=$c: no clock line"
		d=$((mhz - l1mhz))
		[ $((d < 0 ? -d : d)) -le $((l1mhz / 50)) ] || fail "clock=$c: $mhz MHz, L1's $l1mhz MHz"
		contains -E '^slept 1000 ms' <<<"$OUT" || fail "clock=$c: no sleep line"
		say "clock=$c: $mhz MHz (L1: $l1mhz MHz)" ;;
	71)
		contains -E "^kernel: clock=$c: no TSC rate from " <<<"$OUT" || fail "clock=$c: 71 without its line"
		say "clock=$c: refused (71)" ;;
	*) fail "clock=$c: status $RC" ;;
	esac
done
# Where QEMU knows the TSC's rate (tsc-frequency, here the host's own, so
# KVM needs no scaling) it states it in the hypervisor leaf 0x40000010
# (vmware-cpuid-freq, on by default). The host's rate in kHz is what QEMU
# names when another is refused; where even that fails, the case is skipped.
cpu=qemu64,apic,fsgsbase,fxsr,rdrand,rdtscp,xsave,xsaveopt
khz=$((l1mhz * 1000))
boot_clock hypervisor -cpu "$cpu,tsc-frequency=${khz}000"
host_khz=$(sed -nE 's/.*TSC frequency mismatch .* host \(([0-9]+) kHz\).*/\1/p' <<<"$OUT" | head -n1)
if [ "$RC" = 201 ] && [ -n "$host_khz" ]; then
	khz=$host_khz
	boot_clock hypervisor -cpu "$cpu,tsc-frequency=${khz}000"
fi
if [ "$RC" = 0 ]; then
	contains -E "^kernel: clock: TSC ${khz:0:-3}\.${khz: -3} MHz from hypervisor " <<<"$OUT" ||
		fail "clock=hypervisor: not the rate QEMU was given (${khz} kHz)"
	say "clock=hypervisor with tsc-frequency=${khz} kHz: taken"
else
	say "clock=hypervisor with tsc-frequency=${khz} kHz: status $RC (skipped)"
	grep -v '^kvm' <<<"$OUT" | tail -n 3 | sed 's/^/kvm: | /'
fi
say "all good"
