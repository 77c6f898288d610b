#!/usr/bin/env bash
# stress.sh: new connections against httpd under KVM until something gives,
# run in the nested-KVM host (L1) by tools/nested/run-l1; what `make
# kvm-stress` and docs/kvm.md's wedge hunt use.
#
#   stress.sh BACKEND IMAGE ROUNDS REQUESTS CONCURRENCY...
#     BACKEND      user, tap or vhost (L2's back-end in L1)
#     IMAGE        under build/, e.g. apps/httpd-all.elf; or `linux`
#     CONCURRENCY  N for ab -c N (a new connection per request), kN for
#                  ab -k -c N (keep-alive)
#
# Each round boots the guest, runs ab -n REQUESTS -c C for each CONCURRENCY
# (a new connection per request), and stops it with GET /__shutdown: a
# round passes when every ab completed all requests with none failed and
# the guest exited 0. A round that fails prints ab's report, where L2's vCPU
# is (QEMU's monitor: its status, registers, instructions, local APIC), L1's
# KVM counters and our kernel's counters (Ctrl-T), and the scenario stops
# with status 1; a triple fault or a reset pauses the guest for that. One
# line per ab: "stress: round R c C: N requests, F failed, X req/s".
. "$ROOT/tools/nested/scenario-lib.sh"
cd "$ROOT"
backend=$1 image=$2 rounds=$3 requests=$4
shift 4

for round in $(seq 1 "$rounds"); do
	# A triple fault or a reset pauses the guest (exits through
	# isa-debug-exit do not pass there), so the post-mortem sees where.
	qargs=(-monitor "tcp:$GUEST_MON,server,nowait" -action shutdown=pause)
	if [ "$image" = linux ]; then
		guest_start "$backend" build/linux/vmlinuz build/linux/initrd.img \
			"console=ttyS0 quiet panic=-1 $(guest_append "$backend") -- -p 80 -s" -- "${qargs[@]}"
	else
		guest_start "$backend" "$LOADER" "build/$image" "$(guest_append "$backend") -- -p 80 -s" -- "${qargs[@]}"
	fi
	url=http://$GUEST_IP/
	guest_wait_http "$url" 120
	for c in "$@"; do
		k="" && [ "${c#k}" != "$c" ] && k=-k
		ab -q $k -n "$requests" -c "${c#k}" -s 20 "$url" >"$KTMP/ab" 2>&1
		done_n=$(sed -n 's/^Complete requests: *\([0-9]*\)/\1/p' "$KTMP/ab")
		failed=$(sed -n 's/^Failed requests: *\([0-9]*\)/\1/p' "$KTMP/ab")
		rps=$(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$KTMP/ab")
		say "stress: round $round c $c: ${done_n:-0} requests, ${failed:-?} failed, ${rps:-?} req/s"
		if [ "${done_n:-0}" != "$requests" ] || [ "${failed:-1}" != 0 ]; then
			grep -Ev '^(This is|Copyright|Licensed|$)' "$KTMP/ab"
			post_mortem "round $round, ab -c $c did not complete"
			# Our kernel's counters, where it still answers Ctrl-T.
			[ "$image" = linux ] || guest_status_dump
			exit 1
		fi
	done
	curl -s -m 10 -o /dev/null "${url}__shutdown"
	for i in $(seq 1 100); do kill -0 "$GUEST_PID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$GUEST_PID" 2>/dev/null; then
		post_mortem "round $round: no exit 10 s after the shutdown request"
		exit 1
	fi
	guest_wait
	[ "$GUEST_RC" = 0 ] || { post_mortem "round $round: exit status $GUEST_RC"; exit 1; }
done
say "stress: $rounds rounds passed"
