#!/usr/bin/env bash
# boot.sh: boots under nested KVM, each from QEMU's start to the guest's
# first listen, with the VM exits it took by reason, measured inside the
# nested-KVM host (L1): the scenario `make bench-boot ACCELS=nested` runs
# through tools/nested/run-l1 (bench/runner/workloads/boot.py collects what
# it prints).
#
#   boot.sh BOOTS GUESTS MACHINES [MEM]
#     GUESTS    comma list of NAME:uk:LOADER:IMAGE[:WORDS] or
#               NAME:linux:KERNEL:INITRD[:WORDS] (files under the repository;
#               WORDS: command-line words before the network options, joined
#               by '+', e.g. console=ttyS0+quiet+panic=-1)
#     MACHINES  comma list of pc, microvm
#     MEM       each guest's -m (default 256M)
#
# Boots go in turn: boot 1 of every guest on every machine, then boot 2...
# Each boots under -accel kvm with user networking (127.0.0.1:8080 to the
# guest's 8080) and the boot_time option, which makes the guest print a line
# at its first listen (our kernel: its TSC from its first instruction; the
# Linux guest's init: CLOCK_BOOTTIME). The unikernel boots through the loader
# on pc and alone by its PVH note on microvm; the Linux guest's kernel (a
# bzImage or a vmlinux) is loaded by QEMU on pc and by microvm's firmware
# (qboot) or its PVH note on microvm, with ACPI on (qemu-run's choice for
# a kernel and its initramfs there).
#
# L1's KVM counters (debugfs) and a histogram of kvm_exit by exit reason
# (tracefs) are read just before QEMU starts, and again as soon as the
# listening line comes out of the guest's console (a reader on QEMU's
# output, no polling of a file); then the first answered GET / is timed
# from QEMU's start (its pidfile's mtime), and GET /__shutdown stops the
# guest. Per boot it prints
#   boot N GUEST MACHINE kind K status S listen_ns G listen_ms L answer_ms A exits E
#       K: uk or linux, S: qemu-run's status (the guest's exit status),
#       G: the guest's own line (ns), L: L1's wall time from QEMU's start to
#       the line, A: to the first 200, E: the exits counter's delta
#       (- where not seen)
#   delta N GUEST MACHINE NAME VALUE       (each counter that moved)
#   hist N GUEST MACHINE kvm_exit REASON COUNT   (SVM exit code, decimal)
# and the console of a boot that failed. Wall times are L1's (L1 runs under
# TCG): indicative only; the exit counts are what carries to a KVM host.
. "$ROOT/tools/nested/scenario-lib.sh"
cd "$ROOT" || exit 1
boots=$1
IFS=, read -ra guests <<<"$2"
IFS=, read -ra machines <<<"$3"
mem=${4:-256M}
TR=/sys/kernel/tracing
KVM_DIR=/sys/kernel/debug/kvm
PORT=8080
USER_NET="ip=10.0.2.15 gw=10.0.2.2 mask=255.255.255.0"
mount -t tracefs tracefs $TR 2>/dev/null
[ -d "$KVM_DIR" ] || fail "no $KVM_DIR (debugfs)"

hist_reset() {
	echo '!hist:keys=exit_reason' >"$TR/events/kvm/kvm_exit/trigger" 2>/dev/null
	echo 'hist:keys=exit_reason' >"$TR/events/kvm/kvm_exit/trigger" || fail "no kvm_exit histogram (tracefs)"
}
# "REASON COUNT" per bucket.
hist_read() {
	sed -n 's/^{ exit_reason: *\([0-9]*\) *} hitcount: *\([0-9]*\)$/\1 \2/p' "$TR/events/kvm/kvm_exit/hist"
}
# kvm_stats without a process per counter (read is a builtin): taken right
# at the listening line, where every millisecond of L1 is idle guest time.
stats_now() {
	local f v
	for f in "$KVM_DIR"/*; do
		[ -f "$f" ] && read -r v <"$f" && echo "${f##*/} $v"
	done
}
# The pidfile's mtime as seconds.nanoseconds (busybox stat: %Y whole
# seconds, %y with the fraction).
mtime() {
	local y frac
	y=$(stat -c %y "$1") || return 1
	frac=${y#*.} frac=${frac%% *}
	echo "$(stat -c %Y "$1").$frac"
}
ms_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }

# The reader of the guest's console: copies it to $1 and, at the first
# listening line, snapshots the counters and the histogram into $2.s1 and
# $2.h1 and the time into $2.t1, then marks it done ($2.seen).
watch_console() {
	local line seen=0
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$1"
		if [ $seen = 0 ] && [[ $line == *"listening "*" ns after "* ]]; then
			stats_now >"$2.s1"
			hist_read >"$2.h1"
			echo "$EPOCHREALTIME" >"$2.t1"
			: >"$2.seen"
			seen=1
		fi
	done
}

# One boot: NUMBER SPEC MACHINE.
boot_one() {
	local n=$1 spec=$2 machine=$3 name kind file1 file2 words rest append files
	local pre pid status t0 t1 ta listen_ns exits answer got end
	IFS=: read -r name kind file1 file2 words rest <<<"$spec"
	[ -z "$rest" ] && [ -f "$file1" ] && [ -f "$file2" ] || fail "guest $spec: not NAME:KIND:FILE:FILE[:WORDS], or a file missing"
	append="${words//+/ }${words:+ }boot_time $USER_NET -- -p $PORT -q -s"
	case $kind:$machine in
	uk:pc) files=("$file1" "$file2") ;;
	uk:microvm) files=("$file2") ;; # PVH: the image alone
	linux:*) files=("$file1" "$file2") ;; # on microvm qemu-run boots it by PVH, ACPI on
	*) fail "guest $spec on $machine: kind uk or linux, machine pc or microvm" ;;
	esac
	pre=$KTMP/b$n.$name.$machine
	GUEST_CONSOLE=$pre.console
	rm -f "$pre".* && : >"$GUEST_CONSOLE"
	stats_now >"$pre.s0"
	hist_reset
	{
		ACCEL=kvm tools/qemu-run --machine "$machine" --mem "$mem" --net user --hostfwd "$PORT:$PORT" \
			--timeout 300 --append "$append" "${files[@]}" -- -pidfile "$pre.pid" </dev/null 2>&1
		echo "qemu-run: status $?"
	} | watch_console "$GUEST_CONSOLE" "$pre" &
	pid=$!
	GUEST_PID=$pid
	# Until the listening line, or the guest's end without one.
	while [ ! -e "$pre.seen" ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.05
	done
	answer=- t0=""
	[ -f "$pre.pid" ] && t0=$(mtime "$pre.pid")
	if [ -e "$pre.seen" ]; then
		got="" end=$((SECONDS + 120))
		while [ $SECONDS -lt $end ]; do
			got=$(curl -s -o /dev/null -w '%{http_code}' --connect-timeout 1 -m 10 "http://127.0.0.1:$PORT/")
			[ "$got" = 200 ] && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		ta=$EPOCHREALTIME
		[ "$got" = 200 ] && [ -n "$t0" ] && answer=$(ms_between "$t0" "$ta")
		curl -s -m 20 -o /dev/null "http://127.0.0.1:$PORT/__shutdown"
	fi
	# Bounded: qemu-run stops QEMU at its --timeout.
	wait "$pid"
	GUEST_PID=""
	status=$(sed -n 's/^qemu-run: status \([0-9]*\)$/\1/p' "$GUEST_CONSOLE" | tail -n 1)
	listen_ns=$(tr -d '\r' <"$GUEST_CONSOLE" | sed -n 's/^.*: listening \([0-9]*\) ns after .*$/\1/p' | head -n 1)
	t1=- exits=-
	if [ -e "$pre.seen" ]; then
		[ -n "$t0" ] && t1=$(ms_between "$t0" "$(cat "$pre.t1")")
		exits=$(kvm_delta "$pre.s0" "$pre.s1" | awk '$1 == "exits" { print $2 }')
	fi
	echo "boot $n $name $machine kind $kind status ${status:-?} listen_ns ${listen_ns:--} listen_ms $t1 answer_ms $answer exits ${exits:--}"
	if [ -e "$pre.seen" ]; then
		kvm_delta "$pre.s0" "$pre.s1" | awk -v p="delta $n $name $machine" '$2 != 0 { print p, $1, $2 }'
		awk -v p="hist $n $name $machine kvm_exit" '{ print p, $1, $2 }' "$pre.h1"
	fi
	if [ "${status:-?}" != 0 ] || [ ! -e "$pre.seen" ] || [ "$answer" = - ]; then
		echo "--- console of boot $n $name $machine (last 30 lines)"
		tr -d '\r' <"$GUEST_CONSOLE" | tail -n 30
		echo "--- end"
	fi
}

for n in $(seq 1 "$boots"); do
	for spec in "${guests[@]}"; do
		for machine in "${machines[@]}"; do
			boot_one "$n" "$spec" "$machine"
		done
	done
done
say "boots done"
