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
#   - an idle 4-vCPU guest: its APs parked a handful of times over 1 s;
#   - each SMP design's httpd (build/apps/httpd-DESIGN.elf: make
#     smp-designs) on tap, 2 vCPUs, smp=2: GET / byte for byte, ab -c 16
#     -n 2000 with 0 failed, exit 0 with no socket open, and its counters
#     (design_counters): the designs are the scenario's arguments, else
#     SMP_DESIGNS of mk/variants.mk, which run-l1 carries with --file:
#       tools/nested/run-l1 --file mk/variants.mk tests/kvm/smp.sh
#       tools/nested/run-l1 tests/kvm/smp.sh -- smp-lock
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

# ---- each SMP design's httpd at -smp 2 ----------------------------------------
want_root=$(printf 'HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n\r\nHello from httpd, a poll()-based server.\n')
MON=(-monitor "tcp:$GUEST_MON,server,nowait")
# num RE TEXT: the number RE's one group matches in TEXT (its last match).
num() { sed -nE "s/.*$1.*/\\1/p" <<<"$2" | tail -n 1; }

# design_counters DESIGN CONSOLE: the exit's counters (the checks of
# tests/integration/lib/smp_counters.py, which L1 cannot run: no Python).
# Each CPU received no more IPIs than the other sent it (a wake sent while
# the last is still pending merges with it); then the design's own line.
design_counters() {
	local c s0 r0 s1 r1 sent ended early who
	c=$(tr -d '\r' <"$2")
	s0=$(num '^kernel: cpu 0 .*ipis sent ([0-9]+),' "$c") r0=$(num '^kernel: cpu 0 .*received ([0-9]+);' "$c")
	s1=$(num '^kernel: cpu 1 .*ipis sent ([0-9]+),' "$c") r1=$(num '^kernel: cpu 1 .*received ([0-9]+);' "$c")
	[ -n "$s0" ] && [ -n "$r0" ] && [ -n "$s1" ] && [ -n "$r1" ] || fail "$1: no per-CPU IPI counters"
	((r1 <= s0 && r0 <= s1)) || fail "$1: IPIs received beyond those sent: cpu 0 sent $s0, received $r0; cpu 1 sent $s1, received $r1"
	say "$1: IPIs cpu 0 sent $s0, received $r0; cpu 1 sent $s1, received $r1"
	case $1 in
	smp-lock)
		contains -E '^net: global lock: network on cpu 1;' <<<"$c" || fail "$1: the network not on CPU 1"
		# Each wake taken once, ending a park or before the halt; at
		# exit the network CPU stands on the lock, so but for one in
		# flight each way none is outstanding.
		for who in app network; do
			sent=$(num "wakes to the $who cpu ([0-9]+) \\(" "$c")
			ended=$(num "wakes to the $who cpu [0-9]+ \\(ended a park ([0-9]+)," "$c")
			early=$(num "wakes to the $who cpu [0-9]+ \\(ended a park [0-9]+, before the halt ([0-9]+)\\)" "$c")
			[ -n "$sent" ] && [ -n "$ended" ] && [ -n "$early" ] || fail "$1: no wake counters to the $who cpu"
			((ended + early <= sent && ended + early >= sent - 1)) ||
				fail "$1: wakes to the $who cpu: $sent sent, $ended ended a park, $early before the halt"
			say "$1: wakes to the $who cpu $sent: $ended ended a park, $early before the halt"
		done
		;;
	smp-netcore)
		contains -E '^handoff: serving cpu 1 \(stopped\);' <<<"$c" ||
			fail "$1: the network not on CPU 1, or not stopped at exit"
		# No wake taken more often than sent; fewer may be (a wake sent
		# as the other side's park ends is taken by none: wasted).
		for who in app serving; do
			sent=$(num "wakes to the $who cpu ([0-9]+) \\(" "$c")
			ended=$(num "wakes to the $who cpu [0-9]+ \\(ended a park ([0-9]+)," "$c")
			early=$(num "wakes to the $who cpu [0-9]+ \\(ended a park [0-9]+, before the halt ([0-9]+)\\)" "$c")
			[ -n "$sent" ] && [ -n "$ended" ] && [ -n "$early" ] || fail "$1: no wake counters to the $who cpu"
			((ended + early <= sent)) ||
				fail "$1: wakes to the $who cpu: $sent sent, $ended ended a park, $early before the halt"
			say "$1: wakes to the $who cpu $sent: $ended ended a park, $early before the halt"
		done
		;;
	*) fail "$1: no counter checks for this design in tests/kvm/smp.sh (design_counters)" ;;
	esac
}

# A stall (the nested emulator loses a guest now and then): its
# post-mortem, then the guest is stopped. Returns 1.
stalled() {
	post_mortem "$@"
	guest_kill
	return 1
}

design_serves() { # DESIGN
	local image=build/apps/httpd-$1.elf url
	[ -f "$image" ] || fail "no $image in L1: make smp-designs, then run-l1"
	guest_start tap "$LOADER" "$image" "verbose smp=2 $(guest_append tap) -- -p 80 -s" -- -smp 2 "${MON[@]}"
	url=http://$GUEST_IP
	guest_answers "$url/" 60 || { stalled "$1: no answer"; return; }
	[ "$(curl -s -m 30 -i "$url/")" = "$want_root" ] || fail "$1: GET / differs"
	ab_ok "$url/" 2000 16 || { stalled "$1: ab -c 16 did not complete"; return; }
	say "$1 ab -c 16 -n 2000: $AB_RPS req/s, 0 failed"
	guest_stop_http "$url"
	[ "$GUEST_RC" = 0 ] || fail "$1: status $GUEST_RC"
}

designs=${*:-$(sed -n 's/^SMP_DESIGNS[ :]*= *//p' mk/variants.mk 2>/dev/null)}
[ -n "$designs" ] || fail "no SMP design: name them (run-l1 tests/kvm/smp.sh -- smp-lock) or carry mk/variants.mk (--file)"
for design in $designs; do
	twice "$design" design_serves "$design"
	c=$(tr -d '\r' <"$GUEST_CONSOLE")
	contains -E '^kernel: smp: 2 of 2 CPUs .*x2APIC' <<<"$c" || fail "$design: not two CPUs in x2APIC mode"
	contains -E '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' <<<"$c" ||
		fail "$design: sockets left open, overflows or resets"
	design_counters "$design" "$GUEST_CONSOLE"
	say "$design at -smp 2: GET /, ab -c 16 with 0 failed, exit 0, counters good"
done
say "smp: all good"
