#!/usr/bin/env bash
# smp.sh: a scenario for the nested-KVM host (L1: tools/nested/run-l1
# tests/kvm/smp.sh), the kernel's CPUs under KVM (issue 39). Every AP starts
# in x2APIC mode, as the boot CPU runs there under KVM, and registers its own
# paravirtual EOI: a call's IPI on an AP then ends without an EOI write.
#   - pc by the loader, 2 and 4 vCPUs, smp=0: the verbose line (count, APIC
#     IDs, x2APIC), 100 calls to each AP (smpcheck calls 100): on each AP
#     103 IPIs received, 101 calls run, its EOIs paravirtual, no timer; the
#     IPIs sent by the boot CPU all received;
#   - x2apic=0 pv_eoi=0: the same in xAPIC mode, every EOI a register write;
#   - microvm by PVH (qboot's MP table), -cpu host, 2 vCPUs;
#   - four CPUs on one spinlock (smpcheck lock), no increment lost;
#   - an idle 4-vCPU guest: its APs parked a handful of times over 1 s.
# Ends with "kvm: smp: all good" and status 0. Not part of test 13 (which
# runs tests/kvm/basic.sh): run it by hand, as above; L1 takes ~40 s to
# boot under TCG.
. "$ROOT/tools/nested/scenario-lib.sh"
cd "$ROOT"
SMPCHECK=build/apps/smpcheck.elf
HELLO=build/apps/hello.elf

# run WANT-STATUS APPEND QEMU-RUN-ARGS... -- FILES...: sets OUT.
run() {
	local want=$1 append=$2 rc
	shift 2
	OUT=$(ACCEL=kvm tools/qemu-run --timeout 120 --append "$append" "$@" 2>&1 </dev/null)
	rc=$?
	OUT=$(tr -d '\r' <<<"$OUT")
	if [ "$rc" != "$want" ]; then
		echo "$OUT" | tail -n 30
		fail "$append $*: status $rc, want $want"
	fi
	say "$append $*: status $rc"
	grep -E '^(kernel: smp:|kernel: cpu [01] |kernel: locks:|smpcheck:)' <<<"$OUT" | sed 's/^/kvm: | /'
}

expect() { contains -E -- "$1" <<<"$OUT" || { echo "$OUT" | tail -n 30; fail "no line /$1/"; }; }

# check_aps N MODE EOI: each AP of N after `smpcheck calls 100`.
check_aps() {
	local n=$1 mode=$2 eoi=$3 k ids=0
	for ((k = 1; k < n; k++)); do ids+=" $k"; done
	expect "^kernel: smp: $n of $n CPUs in the (MADT|MP table) running \\(APIC IDs $ids\\), $mode; $((n - 1)) of $((n - 1)) APs answered a call;"
	expect '^smpcheck: 100 calls to each of '$((n - 1))' APs, all answered$'
	expect "^kernel: cpu 0 \\(APIC ID 0, online\\): .*ipis sent $((103 * (n - 1))), received 0;"
	for ((k = 1; k < n; k++)); do
		if [ "$eoi" = paravirtual ]; then
			expect "^kernel: cpu $k \\(APIC ID $k, online\\): interrupts 103 \\(timer 0\\); eoi writes [0-9]+ \\(paravirtual [1-9][0-9]*\\); ipis sent 0, received 103; calls run 101;"
		else
			expect "^kernel: cpu $k \\(APIC ID $k, online\\): interrupts 103 \\(timer 0\\); eoi writes 103 \\(paravirtual 0\\); ipis sent 0, received 103; calls run 101;"
		fi
	done
}

for n in 2 4; do
	run 0 "verbose smp=0 -- calls 100" --smp "$n" "$LOADER" "$SMPCHECK"
	check_aps "$n" x2APIC paravirtual
done
run 0 "verbose smp=0 x2apic=0 pv_eoi=0 -- calls 100" --smp 2 "$LOADER" "$SMPCHECK"
check_aps 2 xAPIC register
run 0 "verbose smp=0 -- calls 100" --machine microvm --smp 2 "$SMPCHECK" -- -cpu host
check_aps 2 x2APIC paravirtual
expect '^kernel: smp: 2 of 2 CPUs in the MP table'

run 0 "smp=0 -- lock 20000" --smp 4 "$LOADER" "$SMPCHECK"
expect '^smpcheck: 4 CPUs added 20000 under the lock: 80000 '

run 0 "verbose smp=0 -- -s 1000" --smp 4 "$LOADER" "$HELLO"
for k in 1 2 3; do
	expect "^kernel: cpu $k \\(APIC ID $k, online\\): interrupts 2 \\(timer 0\\);.*idle parks [1-4];"
done
say "smp: all good"
