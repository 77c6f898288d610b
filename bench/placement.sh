# placement.sh: which CPU the guest and the load generator run on (sourced).
#
# A placement is one of
#   none    nothing pinned: the host's scheduler decides
#   vcpu0   QEMU's vCPU thread on core A; every other QEMU thread (the main
#           loop, which also runs the network back-end: slirp or the tap,
#           and QEMU's helpers) and the load generator on core B
#   vcpu1   the reverse: the vCPU thread on B, the rest and the load
#           generator on A
# A and B are the two cores of PIN_CORES (default "0 1"). For the native
# guest the server process takes the vCPU's core.
#
# Offers
#   placement_check NAME        1 with a message when NAME is unknown, or
#                               pinned and the cores are not there
#   placement_cores NAME        sets PL_VCPU and PL_IO (the cores; empty for none)
#   placement_prefix CORE       the words that run a command on CORE (taskset
#                               -c CORE), none for an empty CORE
#   placement_pin_vcpu PID      after placement_cores: waits (5 s at most) for
#                               QEMU PID's vCPU thread (named "CPU 0/TCG" or
#                               "CPU 0/KVM": qemu-run turns on debug-threads)
#                               and pins it to PL_VCPU; prints what each thread
#                               is allowed, or fails with a message
# QEMU itself is started under placement_prefix "$PL_IO", so every thread it
# makes inherits core B; the vCPU thread alone is then moved. It exists
# before the guest's first instruction, and the pin lands within
# milliseconds of QEMU's start: the boot's first moments may run on B.

PIN_CORES=${PIN_CORES:-0 1}

placement_check() {
	local name=$1 a b
	case "$name" in
	none) return 0 ;;
	vcpu0 | vcpu1) ;;
	*) echo "bench: unknown placement '$name' (none, vcpu0, vcpu1)" >&2; return 1 ;;
	esac
	read -r a b _ <<<"$PIN_CORES"
	case "$a$b" in "" | *[!0-9]*) echo "bench: PIN_CORES must be two core numbers, not '$PIN_CORES'" >&2; return 1 ;; esac
	[ "$a" != "$b" ] || { echo "bench: PIN_CORES names one core twice" >&2; return 1; }
	command -v taskset >/dev/null || { echo "bench: placement $name needs taskset (util-linux)" >&2; return 1; }
	taskset -c "$a" true 2>/dev/null && taskset -c "$b" true 2>/dev/null ||
		{ echo "bench: placement $name: cores $a and $b are not both usable here ($(nproc) online)" >&2; return 1; }
}

placement_cores() {
	local a b
	read -r a b _ <<<"$PIN_CORES"
	case "$1" in
	vcpu0) PL_VCPU=$a PL_IO=$b ;;
	vcpu1) PL_VCPU=$b PL_IO=$a ;;
	*) PL_VCPU="" PL_IO="" ;;
	esac
}

placement_prefix() {
	[ -n "$1" ] && echo "taskset -c $1"
	return 0
}

# The thread id of QEMU's vCPU thread, empty until it exists.
placement_vcpu_tid() {
	local t
	for t in /proc/"$1"/task/*; do
		case "$(cat "$t/comm" 2>/dev/null)" in "CPU 0/"*) echo "${t##*/}"; return ;; esac
	done
}

placement_pin_vcpu() {
	local pid=$1 tid="" i t
	for i in $(seq 1 500); do
		tid=$(placement_vcpu_tid "$pid")
		[ -n "$tid" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	[ -n "$tid" ] || { echo "no vCPU thread ('CPU 0/...') in QEMU $pid"; return 1; }
	taskset -p -c "$PL_VCPU" "$tid" >/dev/null || { echo "taskset of thread $tid failed"; return 1; }
	for t in /proc/"$pid"/task/*; do
		printf '%s=%s ' "$(tr ' ' _ <"$t/comm" 2>/dev/null)" \
			"$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status" 2>/dev/null)"
	done
	echo
}
