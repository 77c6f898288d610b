#!/usr/bin/env bash
# More than one CPU (kernel/smp.c, issue 39): hello under TCG with its vCPUs
# on threads of their own (qemu-run --smp N: MTTCG), on pc and microvm, by
# the loader and by PVH. With smp=0 every CPU the firmware lists starts:
# the verbose line says how many of how many run, from which table (the
# MADT on pc and on microvm with ACPI, qboot's MP table on microvm without)
# and their APIC IDs; each AP answered the boot's call with its own APIC ID
# and took a wake, so its counters show 2 IPIs received, 1 call run and no timer interrupt, and
# the IPIs all CPUs sent equal those they received. An idle guest's APs do
# not spin: after a 1 s sleep each has parked a handful of times, and the
# whole QEMU took well under a second of host CPU (one spinning vCPU would
# take the whole second). The default (smp=1) starts none and prints no SMP
# line at any -smp; smp=2 of 4 starts one; smp=0 at -smp 1 finds one CPU.
# smpcheck (tests/images/smpcheck.c) then calls each AP 100 times (the
# counters at both ends agree), hands each AP's idle loop a function, runs
# four CPUs on one spinlock (no increment lost), and looks up a descriptor
# from AP 1: the table is the boot CPU's, and the debug build's check
# panics there (70), naming the CPU. The other boots exit with status 0.
# test-timeout: 600
. "$(dirname "$0")/../lib/boot.sh"

# children_cpu: sets CHILDREN_CPU to the seconds of CPU (user + system)
# this shell's finished children have taken so far: bash's `times`, run in
# this shell (in a $(...) it would count the subshell's children).
TIMES=$(mktemp)
trap 'rm -f "$TIMES"' EXIT
children_cpu() {
	times >"$TIMES"
	CHILDREN_CPU=$(tail -n 1 "$TIMES" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } print s }')
}

# check_cpus N: OUT is a boot with N CPUs running, each AP as above.
check_cpus() {
	local n=$1 ids="" k sent=0 received=0 line
	for ((k = 0; k < n; k++)); do ids+="${ids:+ }$k"; done
	expect "^kernel: smp: $n of $n CPUs in the (MADT|MP table) running \\(APIC IDs $ids\\), xAPIC; $((n - 1)) of $((n - 1)) APs answered a call;"
	for ((k = 0; k < n; k++)); do
		line=$(grep -E "^kernel: cpu $k \\(APIC ID $k, online\\): " <<<"$OUT") || fail "no counters for CPU $k"
		s=$(sed -nE 's/.*ipis sent ([0-9]+), received ([0-9]+);.*/\1 \2/p' <<<"$line")
		sent=$((sent + ${s% *})) received=$((received + ${s#* }))
		[ "$k" = 0 ] && continue
		grep -Eq 'interrupts 2 \(timer 0\);.*ipis sent 0, received 2; calls run 1; idle parks [1-4];' <<<"$line" ||
			fail "CPU $k: not one call, one wake, no timer and a few parks: $line"
	done
	[ "$sent" = "$received" ] || fail "$sent IPIs sent, $received received"
	[ "$sent" = $((2 * (n - 1))) ] || fail "$sent IPIs sent for $((n - 1)) APs (a call and a wake each)"
	expect '^kernel: locks: console [0-9]+ \(contended [0-9]+, pauses [0-9]+, broken 0\)'
	expect_not '^kernel: smp: .*(did not|lost|refused|halted)'
	expect '^kernel: exit status 0$'
}

for machine in pc microvm; do
	for n in 2 4; do
		echo "== $machine, $n vCPUs, smp=0"
		children_cpu
		before=$CHILDREN_CPU
		boot "$HELLO" --machine "$machine" --smp "$n" -- 'verbose smp=0 -- -s 1000'
		children_cpu
		cpu=$(awk -v a="$before" -v b="$CHILDREN_CPU" 'BEGIN { printf "%.2f", b - a }')
		expect_rc 0
		echo "  host CPU $cpu s for the boot and the 1 s sleep"
		awk -v c="$cpu" 'BEGIN { exit !(c < 1.0) }' ||
			fail "QEMU took $cpu s of host CPU over a 1 s idle sleep with $n vCPUs: an AP spins"
		check_cpus "$n"
	done

	echo "== $machine, 4 vCPUs, the default: none started"
	boot "$HELLO" --machine "$machine" --smp 4 -- 'verbose -- -s 0'
	expect_rc 0
	expect_not '^kernel: smp:'
	expect_not '^kernel: cpu [0-9]'
	expect '^kernel: exit status 0$'

	echo "== $machine, 1 vCPU, smp=0"
	boot "$HELLO" --machine "$machine" -- 'verbose smp=0 -- -s 0'
	expect_rc 0
	expect '^kernel: smp: 1 CPU in the (MADT|MP table)$'
	expect_not '^kernel: cpu [0-9]'
	expect '^kernel: exit status 0$'
done

echo "== pc, 4 vCPUs, smp=2"
boot "$HELLO" --smp 4 -- 'verbose smp=2 -- -s 0'
expect_rc 0
expect '^kernel: smp: 2 of 4 CPUs in the MADT running \(APIC IDs 0 1\)'
expect_not '^kernel: cpu 2'

echo "== the other entries: pc by PVH, microvm by the loader, 3 vCPUs"
boot "$HELLO" --boot pvh --smp 3 -- 'verbose smp=0 -- -s 0'
expect_rc 0
check_cpus 3
boot "$HELLO" --machine microvm --boot loader --smp 3 -- 'verbose smp=0 -- -s 0'
expect_rc 0
check_cpus 3

echo "== microvm with ACPI on (qemu-run --acpi on): the MADT, through the start info's RSDP"
boot "$HELLO" --machine microvm --acpi on --smp 3 -- 'verbose smp=0 -- -s 0'
expect_rc 0
check_cpus 3
expect '^kernel: smp: 3 of 3 CPUs in the MADT '

echo "== hot-plug slots (-smp 2,maxcpus=4): the two present"
QEMU_EXTRA="-smp 2,maxcpus=4" boot "$HELLO" --smp 2 -- 'verbose smp=0 -- -s 0'
expect_rc 0
check_cpus 2

SMPCHECK=$ROOT/$BUILD/apps/smpcheck.elf
echo "== smpcheck: 100 calls to each of 3 APs, counted both ends"
boot "$SMPCHECK" --smp 4 -- 'smp=0 -- calls 100'
expect_rc 0
expect '^smpcheck: 100 calls to each of 3 APs, all answered$'
expect '^kernel: cpu 0 \(APIC ID 0, online\): .*ipis sent 309, received 0;'
for k in 1 2 3; do
	expect "^kernel: cpu $k \\(APIC ID $k, online\\): interrupts 103 \\(timer 0\\);.*ipis sent 0, received 103; calls run 101;"
done
echo "== smpcheck: a loop handed to each AP's idle loop runs there"
boot "$SMPCHECK" --machine microvm --smp 3 -- 'smp=0 -- run'
expect_rc 0
expect '^smpcheck: 2 loops handed, 2 ran$'
echo "== smpcheck: four CPUs on one spinlock at once"
boot "$SMPCHECK" --smp 4 -- 'smp=0 -- lock 20000'
expect_rc 0
expect '^smpcheck: 4 CPUs added 20000 under the lock: 80000 '
expect '^kernel: locks: .*smpcheck 80000 \(contended [0-9]+, pauses [0-9]+, broken 0\)'
echo "== smpcheck: the descriptor table touched from AP 1 (a debug build's check)"
boot "$SMPCHECK" --smp 2 -- 'smp=0 -- fd-from-ap'
expect_rc 70
expect '^panic: assertion failed: acting_for_app\(\) at kernel/fd\.c:[0-9]+$'
expect '^  on CPU 1 \(APIC ID 1\)$'

echo "== a bad smp= refuses the boot"
boot "$HELLO" -- 'smp=65 -- -s 0'
expect_rc 64
expect '^kernel: option smp=65: not in 0\.\.64'
echo "all good"
