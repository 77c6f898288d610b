#!/usr/bin/env bash
# clock.sh: the TSC's rate under KVM (run in L1 through tools/nested/run-l1):
# clock=auto picks an exact source there (kvmclock, or the hypervisor leaf
# where QEMU gives it) and names it; each source is forced in turn and
# either names itself with a rate within 2% of L1's own TSC rate (as
# /proc/cpuinfo gives it) or refuses with status 71 and a line, and a 1 s
# sleep takes at least 1 s of L1's time. Ends with "kvm: all good".
. "$ROOT/tools/nested/scenario-lib.sh"
cd "$ROOT"
HELLO=build/apps/hello.elf
l1mhz=$(awk -F: '/^cpu MHz/ { printf "%d", $2; exit }' /proc/cpuinfo)

boot_clock() { # CLOCK: sets OUT and RC
	OUT=$(ACCEL=kvm tools/qemu-run --timeout 120 --append "verbose quiet clock=$1 -- -s 1000" \
		"$LOADER" "$HELLO" 2>&1 </dev/null | tr -d '\r')
	RC=${PIPESTATUS[0]}
	grep -E '^kernel: (clock|no clock|clock=)|TSC|^slept|^kernel: exit' <<<"$OUT" | sed 's/^/kvm: | /'
}

boot_clock auto
[ "$RC" = 0 ] || fail "clock=auto: status $RC"
contains -E '^kernel: clock: TSC [0-9.]+ MHz from (kvmclock|hypervisor|cpuid) ' <<<"$OUT" ||
	fail "clock=auto did not take an exact source under KVM"
for c in cpuid hypervisor kvmclock pit hpet pmtimer pit0; do
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
say "all good"
