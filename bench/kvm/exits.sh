#!/usr/bin/env bash
# exits.sh: VM exits per request, by reason, for each guest, back-end and
# load, measured inside the nested-KVM host (L1): the scenario `make
# bench-kvm` runs through tools/nested/run-l1 (bench/runner/workloads/kvm.py
# collects what it prints).
#
#   exits.sh REPS REQUESTS BACKENDS GUESTS LOADS
#     BACKENDS  comma list of vhost, vhostpoll, tap, user (L2's network
#               back-end in L1; vhostpoll: vhost-net busy-polls 2 ms)
#     GUESTS    comma list of NAME=uk:IMAGE[:OPTIONS] or NAME=linux (IMAGE
#               under build/; OPTIONS: kernel options joined by '+', e.g.
#               spin_us=2000; smp=N, N above 1, also gives QEMU N vCPUs)
#     LOADS     comma list of NAME:KEEPALIVE:CONCURRENCY (bench/runner/loads.py
#               writes them: k1:1:1 is ab -k -c 1, c16:0:16 is ab -c 16)
#
# Around each load it reads L1's KVM counters (debugfs), a histogram of
# kvm_exit by exit reason (tracefs), L1's CPU time (/proc/stat) and, for our
# kernel, its own counters (Ctrl-T), and prints one line per load:
#   run REP BACKEND GUEST LOAD requests N failed F secs S l1cpu_ms C
#   delta REP BACKEND GUEST LOAD NAME VALUE      (one per counter that moved)
#   hist REP BACKEND GUEST LOAD EVENT KEY... COUNT   (kvm_exit: SVM exit code;
#                                         kvm_apic: rw reg; kvm_fast_mmio: gpa)
# and the guest's dumps between "@ LOAD before" / "@ LOAD after" marks under
# "dump REP BACKEND GUEST". Requests/s measured here are L1-bound (L1 runs
# under TCG): the exit counts are the figures that carry to a KVM host.
. "$ROOT/tools/nested/scenario-lib.sh"
cd "$ROOT"
reps=$1 requests=$2
IFS=, read -ra backends <<<"$3"
IFS=, read -ra guests <<<"$4"
IFS=, read -ra loads <<<"$5"
TR=/sys/kernel/tracing
mount -t tracefs tracefs $TR 2>/dev/null
# Histograms of three KVM events around each load: kvm_exit by exit reason,
# kvm_apic by access (0 read, 1 write) and register (the xAPIC's MMIO page:
# TMICT 0x380, EOI 0xb0, ICR 0x300...), kvm_fast_mmio by address (the
# ioeventfd doorbells: virtio notifies handled in L1's kernel).
HISTS="kvm_exit:exit_reason kvm_apic:rw,reg kvm_fast_mmio:gpa kvm_mmio:type,gpa"
hist_reset() {
	local h ev keys
	for h in $HISTS; do
		ev=${h%%:*} keys=${h#*:}
		echo "!hist:keys=$keys" >"$TR/events/kvm/$ev/trigger" 2>/dev/null
		echo "hist:keys=$keys" >"$TR/events/kvm/$ev/trigger" || fail "no $ev histogram (tracefs)"
	done
}
# "EVENT KEY... COUNT" per bucket.
hist_read() {
	local h ev
	for h in $HISTS; do
		ev=${h%%:*}
		sed -n 's/^{ \(.*\) } hitcount: *\([0-9]*\)$/\1 \2/p' "$TR/events/kvm/$ev/hist" |
			sed 's/[a-z_]*: *//g; s/,//g' | awk -v e="$ev" '{ $1 = $1; print e, $0 }'
	done
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
cpu_ms() { awk '/^cpu / { print int(($2 + $3 + $4 + $7 + $8) * 1000 / 100) }' /proc/stat; }

image_of() { # uk:IMAGE[:OPTIONS] -> IMAGE
	local image=${1#uk:}
	echo "${image%%:*}"
}

load_args() { # NAME:KEEPALIVE:CONCURRENCY -> ab options
	local rest=${1#*:}
	case $rest in
	1:[1-9]*) echo "-k -c ${rest#1:}" ;;
	0:[1-9]*) echo "-c ${rest#0:}" ;;
	*) fail "no load $1 (NAME:KEEPALIVE:CONCURRENCY)" ;;
	esac
}

for rep in $(seq 1 "$reps"); do
	for backend in "${backends[@]}"; do
		for spec in "${guests[@]}"; do
			name=${spec%%=*} kind=${spec#*=}
			GUEST_SMP=$(grep -oE '(^|[:+])smp=[0-9]+' <<<"$kind" | tail -n 1 | sed 's/.*=//')
			[ "${GUEST_SMP:-0}" -gt 1 ] 2>/dev/null || GUEST_SMP=""
			case $kind in
			uk:*:*) opts=${kind#uk:*:}
				guest_start "$backend" "$LOADER" "build/$(image_of "$kind")" "${opts//+/ } $(guest_append "$backend") -- -p 80 -s" ;;
			uk:*) guest_start "$backend" "$LOADER" "build/${kind#uk:}" "$(guest_append "$backend") -- -p 80 -s" ;;
			linux) guest_start "$backend" build/linux/vmlinuz build/linux/initrd.img \
				"console=ttyS0 quiet panic=-1 $(guest_append "$backend") -- -p 80 -s" ;;
			*) fail "guest $spec: not NAME=uk:IMAGE or NAME=linux" ;;
			esac
			url=http://$GUEST_IP/
			guest_wait_http "$url" 120
			ab -q -k -n 200 -c 4 "$url" >/dev/null 2>&1 # warm-up
			echo "dump $rep $backend $name"
			for word in "${loads[@]}"; do
				load=${word%%:*} n=$requests
				case $word in *:0:*) n=$((requests / 2)) ;; esac
				[ "${kind%%:*}" = uk ] && { echo "@ $load ab before 0"; guest_status_dump; }
				kvm_stats >"$KTMP/s0"
				hist_reset
				c0=$(cpu_ms) t0=$(uptime_s)
				# shellcheck disable=SC2046 # the options are words
				ab -q $(load_args "$word") -n "$n" -s 20 "$url" >"$KTMP/ab" 2>&1
				t1=$(uptime_s) c1=$(cpu_ms)
				hist_read >"$KTMP/h"
				kvm_stats >"$KTMP/s1"
				[ "${kind%%:*}" = uk ] && { echo "@ $load ab after 0"; guest_status_dump; }
				done_n=$(sed -n 's/^Complete requests: *\([0-9]*\)/\1/p' "$KTMP/ab")
				failed=$(sed -n 's/^Failed requests: *\([0-9]*\)/\1/p' "$KTMP/ab")
				echo "run $rep $backend $name $load requests ${done_n:-0} failed ${failed:-?} secs" \
					"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') l1cpu_ms $((c1 - c0))"
				[ -n "$done_n" ] || { tail -n 5 "$KTMP/ab"; }
				kvm_delta "$KTMP/s0" "$KTMP/s1" | awk -v p="delta $rep $backend $name $load" '$2 != 0 { print p, $1, $2 }'
				awk -v p="$rep $backend $name $load" '{ ev = $1; $1 = ""; print "hist", p, ev $0 }' "$KTMP/h"
			done
			echo "enddump"
			guest_stop_http "http://$GUEST_IP"
			echo "stopped $rep $backend $name status $GUEST_RC"
		done
	done
done
say "exits done"
