#!/usr/bin/env bash
# basic.sh: our images under KVM (run in L1 by tests/integration/kvm/13-kvm-nested.sh
# through tools/nested/run-l1): what the kernel does differently there, and
# each app serving on tap, byte for byte.
#   - hello: the app's statuses (0, 5), a panic's 70, "hypervisor KVM"; with
#     -cpu host, -smp 2 and 6 GiB (RAM above 4 GiB); the TSC's calibration
#     against L1's, and a 1 s sleep lasting 1 s of L1's time;
#   - httpd: GET / and /bytes/N byte for byte, ab -k -c 1 and -c 8, ab -c 16,
#     0 failed; exit 0 and every socket closed; the spin relaxes with PAUSE
#     and its window grows and shrinks consistently,
#     parks order with a fence, interrupts end through KVM's PV EOI;
#   - iperf: 64 MiB up and down, the server's count equal to iperf3's;
#   - UDP: sockcheck echoes three datagrams; the exit drain gave up on none;
#   - microvm: hello by PVH with the TSC's rate from kvmclock; httpd over
#     virtio-mmio on tap, GET / byte for byte, ab -k -c 8 and ab -c 4; then,
#     each image booted alone by PVH, iperf (16 MiB) and the UDP echo, and
#     httpd's slow and rude peers (what tests 34, 35 and 53 check under
#     TCG): a request trickled in 5-byte writes answered byte for byte with
#     GET / served meanwhile, 20 idle clients closed at the idle timeout, a
#     head that never ends answered 408; nine malformed requests (400, 413
#     for lengths past 2^64, 431, 501) each answered byte for byte and
#     closed; resets, half-closes, clients that vanish and a segment 2^31
#     off (tools/nested/rudepeer); GET / served after each; exit 0, every
#     socket freed, and the counters show 20 idle closes, one 408 and the
#     hostile segment;
#   - the Linux guest: GET / byte for byte and ab -k, exit 0.
# Ends with "kvm: all good" and status 0.
#
# basic.sh DESIGN (an SMP design of mk/variants.mk, smp-netcore or
# smp-lock): the socket steps only, httpd, iperf, the UDP echo, slow and
# rude peers on pc and microvm, each with the design's build of its app
# (build/apps/APP-DESIGN.elf) on two vCPUs with smp=2; not hello, the
# kernel's one-CPU KVM choices or the Linux guest:
#   tools/nested/run-l1 --smp 2 --silence 120 tests/kvm/basic.sh -- smp-netcore
#
# The host's SVM here is QEMU's emulation (L0), which now and then loses an
# L2 guest mid-run, ours or Linux's alike: its vCPU stops, with L1's own
# state in its registers (docs/kvm.md, "The wedge"). So a step whose guest
# stops answering (no answer, a load that does not complete) is diagnosed
# into the log (post_mortem: registers, KVM's counters), its guest is
# killed, and the step runs once more; a second stall fails the test, and
# a wrong answer (bytes, a status, a failed request) fails it at once.
. "$ROOT/tools/nested/scenario-lib.sh"
cd "$ROOT"
HELLO=build/apps/hello.elf
DESIGN=${1:-} KOPTS=""
if [ -n "$DESIGN" ]; then
	GUEST_SMP=2 KOPTS="smp=2"
	say "the socket steps with the SMP design $DESIGN on two vCPUs"
fi
# The image of APP this run boots: the design's build of it, if any.
app() { echo "build/apps/$1${DESIGN:+-$DESIGN}.elf"; }
want_root=$(printf 'HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n\r\nHello from httpd, a poll()-based server.\n')

# ---- hello: statuses, what the kernel saw, machine shapes -----------------
if [ -z "$DESIGN" ]; then
hello() { # STATUS-WANTED LINE-WANTED APPEND [QEMU-ARGS...]
	local want=$1 line=$2 append=$3 out rc
	shift 3
	out=$(ACCEL=kvm tools/qemu-run --timeout 120 --append "$append" "$LOADER" "$HELLO" -- "$@" 2>&1 </dev/null)
	rc=$?
	out=$(tr -d '\r' <<<"$out")
	# Still running after 120 s: a stall. Reset without an exit status
	# where none was wanted: a triple fault, ours or the L0 emulator's
	# (KVM on AMD resets the vCPU at a shutdown, so no registers tell);
	# a second one in a row fails.
	if [ $rc = 204 ] || { [ $rc = 202 ] && [ "$want" != 202 ]; }; then
		echo "$out" | tail -n 10 | sed 's/^/kvm: | /'
		return 1
	fi
	if [ $rc != "$want" ] || ! grep -Eq -- "$line" <<<"$out"; then
		echo "$out" | tail -n 30
		fail "hello $append $*: status $rc (want $want), or no line /$line/"
	fi
	say "hello $append $*: status $rc"
}
twice hello hello 0 '^kernel: CPU .*; hypervisor KVM;.* x2APIC yes \(used\)$' 'verbose quiet -- -s 0'
twice hello hello 0 '^kernel: CPU .*; hypervisor KVM;.* x2APIC yes \(unused\)$' 'verbose quiet x2apic=0 -- -s 10'
twice hello hello 5 '^kernel: exit status 5$' 'quiet -- -e 5 -s 0'
twice hello hello 70 '^panic: page fault \(vector 14\)' 'quiet -- --fault'
twice hello hello 0 '^kernel: exit status 0$' 'quiet -- -s 20' -cpu host
twice hello hello 0 '^kernel: exit status 0$' 'quiet -- -s 0' -smp 2
twice hello hello 0 '^kernel: RAM .* up to 0x1[0-9a-f]{8}' 'verbose quiet -- -s 0' -m 6G

# The TSC, calibrated against the PIT, against what L1's kernel measured;
# and a 1 s sleep lasts at least 1 s of L1's time (a TSC read too fast
# shortens every guest timer).
out=$(ACCEL=kvm tools/qemu-run --timeout 120 --append "verbose -- -s 1000" "$LOADER" "$HELLO" </dev/null 2>&1 | tr -d '\r')
mhz=$(sed -n 's/^kernel: .*TSC \([0-9]*\) MHz.*/\1/p' <<<"$out")
l1mhz=$(awk -F: '/^cpu MHz/ { printf "%d", $2; exit }' /proc/cpuinfo)
awk -v a="${mhz:-0}" -v b="${l1mhz:-1}" 'BEGIN { d = a / b - 1; exit !(d < 0.05 && d > -0.05) }' ||
	fail "the guest's TSC is $mhz MHz, L1's $l1mhz MHz"
t0=$(cut -d' ' -f1 /proc/uptime)
ACCEL=kvm tools/qemu-run --timeout 120 --append "quiet -- -s 1000" "$LOADER" "$HELLO" </dev/null >/dev/null 2>&1
t1=$(cut -d' ' -f1 /proc/uptime)
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 1.0) }' || fail "a 1 s sleep took $t0 -> $t1 of L1's time"
say "TSC $mhz MHz (L1: $l1mhz MHz); a 1 s sleep took at least 1 s"
fi

# ---- httpd on tap -----------------------------------------------------------
MON=(-monitor "tcp:$GUEST_MON,server,nowait")
# A stall: its post-mortem, then the guest is stopped. Returns 1.
stalled() {
	post_mortem "$@"
	guest_kill
	return 1
}
# A step's name on MACHINE (pc or microvm): WHAT itself on pc.
named() { # MACHINE WHAT
	if [ "$1" = pc ]; then echo "$2"; else echo "$1 $2"; fi
}
# IMAGE on tap with the app's ARGS, on pc by the loader, on microvm alone by
# its PVH note (QEMU writes the virtio-mmio window's entry on the command
# line). Sets what guest_start sets.
image_start() { # MACHINE IMAGE ARGS
	if [ "$1" = pc ]; then
		guest_start tap "$LOADER" "$2" "$(guest_append tap) $KOPTS -- $3" -- "${MON[@]}"
	else
		QEMU_MACHINE=$1 guest_start tap "$2" "" "$(guest_append tap) $KOPTS -- $3" -- "${MON[@]}"
	fi
}
# The first N bytes of httpd's /bytes/N body.
bytes_pattern() { # N
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i += 16) printf "%015x\n", i }' | head -c "$1"
}

httpd_serves() {
	guest_start tap "$LOADER" "$(app httpd)" "verbose $(guest_append tap) $KOPTS -- -p 80 -s" -- "${MON[@]}"
	url=http://$GUEST_IP
	guest_answers "$url/" 60 || { stalled "httpd: no answer"; return; }
	[ "$(curl -s -m 30 -i "$url/")" = "$want_root" ] || fail "GET / differs"
	local n=1048576
	curl -s -m 60 "$url/bytes/$n" >"$KTMP/got" || { stalled "httpd: GET /bytes/$n did not complete"; return; }
	bytes_pattern $n | cmp -s - "$KTMP/got" || fail "GET /bytes/$n differs"
	ab_ok "$url/" 2000 1 -k || { stalled "httpd: ab -k -c 1 did not complete"; return; }
	say "httpd ab -k -c 1: $AB_RPS req/s, 0 failed"
	ab_ok "$url/" 4000 8 -k || { stalled "httpd: ab -k -c 8 did not complete"; return; }
	say "httpd ab -k -c 8: $AB_RPS req/s, 0 failed"
	ab_ok "$url/" 2000 16 || { stalled "httpd: ab -c 16 did not complete"; return; }
	say "httpd ab -c 16: $AB_RPS req/s, 0 failed"
	guest_stop_http "$url"
	[ "$GUEST_RC" = 0 ] || fail "httpd: status $GUEST_RC"
}
twice httpd httpd_serves
tr -d '\r' <"$GUEST_CONSOLE" | contains -E '^sockets: open 0, accepted [0-9]+, backlog overflows 0, resets 0;' ||
	fail "httpd: sockets left open, overflows or resets"
# What the kernel chose for KVM: PAUSE in a spin that may grow, the fence
# (not a device read) before a park, KVM's paravirtual EOI; and it did park
# and wake (the one-CPU kernel's choices: a design's run skips them).
c=$(tr -d '\r' <"$GUEST_CONSOLE")
if [ -z "$DESIGN" ]; then
contains -x 'executor: spin 250 us (at most 2000), relax pause (hypervisor KVM)' <<<"$c" ||
	fail "httpd: not the spin KVM wants"
contains -E 'barrier fence \(reads 0\)$' <<<"$c" || fail "httpd: a device read before parks under KVM"
contains -E '^kernel: .*eoi writes [0-9]+ \(paravirtual [1-9][0-9]*\); parks [1-9]' <<<"$c" ||
	fail "httpd: no paravirtual EOI, or no park"
# The window starts at 250 us and doubles up to 2 ms: however the gaps fell,
# it grew at most three times more often than it shrank.
w=$(sed -nE 's/.*spin window grew ([0-9]+) \(shrank ([0-9]+)\).*/\1 \2/p' <<<"$c" | tail -n 1)
[ -n "$w" ] && (( ${w% *} - ${w#* } >= 0 && ${w% *} - ${w#* } <= 3 )) ||
	fail "httpd: the spin window's counts do not add up: '$w'"
# Replies wait for the next poll's in a timed hold there: every hold ended
# joined, at its deadline or before a park, and the loads above saw some.
h=$(sed -nE 's/^virtio-net: tx timed holds ([0-9]+) \(joined ([0-9]+), expired ([0-9]+)\); hold spin window$/\1 \2 \3/p' <<<"$c" |
	tail -n 1)
read -r held joined expired <<<"$h"
[ -n "$h" ] && ((held > 0 && joined + expired <= held)) ||
	fail "httpd: no timed holds under KVM, or their counts do not add up: '$h'"
fi
say "httpd on tap: bytes, loads and exit good"

# ---- iperf on tap: byte counts both ways -----------------------------------
iperf_bytes() { # JSON SUM: what the sender (sum_sent) or the receiver (sum_received) counted
	awk -v sum="\"$2\"" '$0 ~ sum { on = 1 } on && /"bytes"/ { gsub(/[^0-9]/, ""); print; exit }' "$1"
}
# The guest's console has a line matching RE within SECS seconds.
console_says() {
	local i
	for i in $(seq 1 $(($2 * 10))); do
		tr -d '\r' <"$GUEST_CONSOLE" | contains "$1" && return 0
		kill -0 "$GUEST_PID" 2>/dev/null || break
		sleep 0.1
	done
	tr -d '\r' <"$GUEST_CONSOLE" | contains "$1"
}
# iperf3 sends N bytes up, then N down: each way the sender's count and the
# receiver's agree, and the server's own lines say the same.
iperf_serves() { # MACHINE N
	local name dir r rc sent got
	name=$(named "$1" iperf)
	image_start "$1" "$(app iperf)" -s
	console_says '^iperf: listening' 60 || { stalled "$name: not listening within 60 s"; return; }
	for dir in up down; do
		r="" && [ $dir = down ] && r=-R
		timeout 120 iperf3 -c "$GUEST_IP" -n "$2" $r --json >"$KTMP/iperf.json" 2>&1
		rc=$?
		[ $rc = 124 ] && { stalled "$name $dir: iperf3 not done within 120 s"; return; }
		[ $rc = 0 ] || { cat "$KTMP/iperf.json"; fail "$name $dir: iperf3 exit $rc"; }
		sent=$(iperf_bytes "$KTMP/iperf.json" sum_sent) got=$(iperf_bytes "$KTMP/iperf.json" sum_received)
		[ -n "$sent" ] && [ "$got" = "$sent" ] ||
			fail "$name $dir: sent ${sent:-?} bytes, the receiver counted ${got:-nothing}"
		# Our server sends exactly -n; iperf3's client stops at the first
		# write that reaches it, so up to one block (128 KiB) beyond.
		if [ $dir = down ]; then
			[ "$sent" = "$2" ] || fail "$name down: the server sent $sent bytes, not $2"
		else
			[ "$sent" -ge "$2" ] && [ "$sent" -le $(($2 + 131072)) ] || fail "$name up: $sent bytes sent for -n $2"
		fi
		IPERF_BYTES[$dir]=$got
		say "$name $dir: $got bytes, byte counts agree"
	done
	timeout 10 bash -c "printf '%s\\0' ----------shutdown-iperf------------ >/dev/tcp/$GUEST_IP/5201" 2>/dev/null
	guest_wait
	[ "$GUEST_RC" = 0 ] || fail "$name: status $GUEST_RC"
}
declare -A IPERF_BYTES
iperf_on() { # MACHINE N
	local name
	name=$(named "$1" iperf)
	twice "$name" iperf_serves "$@"
	tr -d '\r' <"$GUEST_CONSOLE" | contains -E "^iperf: test 1 done: received ${IPERF_BYTES[up]} bytes" ||
		fail "$name: the server did not count test 1's ${IPERF_BYTES[up]} bytes"
	tr -d '\r' <"$GUEST_CONSOLE" | contains -E "^iperf: test 2 done: sent ${IPERF_BYTES[down]} bytes" ||
		fail "$name: the server did not count test 2's ${IPERF_BYTES[down]} bytes"
}
iperf_on pc $((64 * 1024 * 1024))

# ---- UDP --------------------------------------------------------------------
# sockcheck's socket checks, then it echoes three datagrams and exits; the
# exit waited for the device to take the last echo.
udp_echoes() { # MACHINE
	local name
	name=$(named "$1" sockcheck)
	image_start "$1" "$(app sockcheck)" "--refuse $HOST_IP --udp-echo 3"
	console_says 'udp echo: listening' 60 || { stalled "$name: no UDP echo within 60 s"; return; }
	build/nested/bin/udpcheck "$GUEST_IP" 7 1 512 1400 || fail "$name: UDP echo"
	guest_wait
	[ "$GUEST_RC" = 0 ] || fail "$name: status $GUEST_RC"
}
udp_on() { # MACHINE
	twice "$(named "$1" "UDP echo")" udp_echoes "$1"
	tr -d '\r' <"$GUEST_CONSOLE" | contains -E '^kernel: waits .*exit drain polls [0-9]+ \(gave up 0\)$' ||
		fail "$(named "$1" sockcheck): the exit left frames behind"
	say "$(named "$1" "UDP echo") good"
}
udp_on pc

# ---- microvm: the PVH entry, kvmclock, virtio-mmio ---------------------------
# hello booted alone by its PVH note takes the TSC's rate from kvmclock (no
# calibration), then httpd on tap through the virtio-mmio transport and its
# I/O APIC line (the loader boots it: qemu-run writes the window's entry);
# then iperf, sockcheck and httpd's slow and rude peers, each image booted
# alone by PVH (QEMU writes the entry).
mvm_hello() { # STATUS-WANTED LINE-WANTED APPEND
	local out rc
	out=$(ACCEL=kvm tools/qemu-run --machine microvm --timeout 120 --append "$3" "$HELLO" 2>&1 </dev/null)
	rc=$?
	out=$(tr -d '\r' <<<"$out")
	if [ $rc = 204 ] || [ $rc = 202 ]; then
		echo "$out" | tail -n 10 | sed 's/^/kvm: | /'
		return 1
	fi
	[ $rc = "$1" ] && grep -Eq -- "$2" <<<"$out" ||
		{ echo "$out" | tail -n 30; fail "microvm hello $3: status $rc (want $1), or no line /$2/"; }
	say "microvm hello $3: status $rc"
}
[ -n "$DESIGN" ] || twice "microvm hello" mvm_hello 5 '^kernel: clock: TSC [0-9]+\.[0-9]+ MHz from kvmclock' 'quiet -- -e 5 -s 10'
mvm_httpd_serves() {
	QEMU_MACHINE=microvm guest_start tap "$LOADER" "$(app httpd)" "$(guest_append tap) $KOPTS -- -p 80 -s" -- "${MON[@]}"
	url=http://$GUEST_IP
	guest_answers "$url/" 60 || { stalled "microvm httpd: no answer"; return; }
	[ "$(curl -s -m 30 -i "$url/")" = "$want_root" ] || fail "microvm httpd: GET / differs"
	ab_ok "$url/" 2000 8 -k || { stalled "microvm httpd: ab -k -c 8 did not complete"; return; }
	say "microvm httpd ab -k -c 8: $AB_RPS req/s, 0 failed"
	ab_ok "$url/" 1000 4 || { stalled "microvm httpd: ab -c 4 did not complete"; return; }
	guest_stop_http "$url"
	[ "$GUEST_RC" = 0 ] || fail "microvm httpd: status $GUEST_RC"
}
twice "microvm httpd" mvm_httpd_serves
tr -d '\r' <"$GUEST_CONSOLE" | contains -E '^virtio-net: rx [0-9]+ frames .* irqs rx [1-9]' ||
	fail "microvm httpd: no receive interrupt through the I/O APIC line"
if [ -n "$DESIGN" ]; then
	say "microvm: httpd over virtio-mmio good"
else
	say "microvm: PVH hello, kvmclock, httpd over virtio-mmio good"
fi
# 16 MiB each way on microvm (64 on pc): over 11,000 full frames, dozens of
# trips around each ring, for seconds less of L1's budget (test 13).
t0=$SECONDS
iperf_on microvm $((16 * 1024 * 1024))
udp_on microvm
say "microvm: iperf and UDP over virtio-mmio good ($((SECONDS - t0)) s)"

# ---- slow and rude peers ------------------------------------------------------
# What tests 34 (slow clients), 35 (rude peers) and 53 (smuggling) check on
# pc under TCG, here from bash and rudepeer (L1 has no Python), every answer
# byte for byte.

# httpd's answer with STATUS and BODY, which closes the connection, to FILE.
error_answer() { # FILE STATUS REASON BODY
	printf 'HTTP/1.1 %s %s\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
		"$2" "$3" ${#4} "$4" >"$1"
}
# GET / answered byte for byte: 1 (a stall) when nothing came back, a
# failure when something else did.
root_served() { # WHEN
	curl -s -m 20 -i "$url/" >"$KTMP/root" || { say "$1: no answer to GET /"; return 1; }
	[ "$(cat "$KTMP/root")" = "$want_root" ] || fail "$1: GET / differs"
}

# Closes the descriptors FD... (a step's connections; closed ones too).
close_fds() { # FD...
	local fd
	for fd in "$@"; do exec {fd}>&-; done
}

# A head trickled a header line every 0.5 s, never ending: it should be
# answered 408 at the head deadline (-r), then closed. Run in the
# background: what came back goes to FILE, the reader's status to FILE.rc.
slow_head() { # FILE
	local fd i reader
	exec 3>&- # the guest's console input, the caller's to close
	exec {fd}<>"/dev/tcp/$GUEST_IP/80" || { echo 2 >"$1.rc"; return; }
	timeout 20 cat <&$fd >"$1" &
	reader=$!
	printf 'GET / HTTP/1.1\r\nHost: t\r\n' >&$fd
	for ((i = 0; i < 40; i++)); do
		sleep 0.5
		[ -s "$1" ] && break
		kill -0 $reader 2>/dev/null || break
		printf 'X-Slow-%d: 1\r\n' $i >&$fd 2>/dev/null || break
	done
	wait $reader
	echo $? >"$1.rc"
}

# httpd with an idle timeout of 3 s and a head deadline of 6 s, and at once
# a head that never ends (slow_head) and 20 clients that send half a
# request and stop; meanwhile a request trickled 5 bytes every 0.2 s, GET /
# served half-way through it, its answer byte for byte. Then each of the 20
# has been closed at the idle timeout without an answer, and the endless
# head answered 408. The counters at the exit say 20 idle closes and one
# 408.
slow_clients() { # MACHINE
	local name fd i rc fds=() head_pid head_file
	local req=$'GET /bytes/4096 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
	name=$(named "$1" "slow clients")
	image_start "$1" "$(app httpd)" "-p 80 -s -t 3 -r 6"
	url=http://$GUEST_IP
	guest_answers "$url/" 60 || { stalled "$name: no answer"; return; }
	head_file=$KTMP/slowhead.$GUEST_SEQ
	slow_head "$head_file" &
	head_pid=$!
	for ((i = 0; i < 20; i++)); do
		exec {fd}<>"/dev/tcp/$GUEST_IP/80" || { close_fds "${fds[@]}"; stalled "$name: no connection"; return; }
		printf 'GET / HT' >&$fd
		fds+=($fd)
	done

	exec {fd}<>"/dev/tcp/$GUEST_IP/80" || { close_fds "${fds[@]}"; stalled "$name: no connection"; return; }
	for ((i = 0; i < ${#req}; i += 5)); do
		printf '%s' "${req:i:5}" >&$fd || fail "$name: the connection broke while the request trickled in"
		if ((i == 25)); then
			root_served "$name: beside a request half-sent and 20 idle clients" ||
				{ close_fds "${fds[@]}" $fd; stalled "$name: no answer"; return; }
		fi
		sleep 0.2
	done
	timeout 10 cat <&$fd >"$KTMP/slow"
	rc=$?
	close_fds $fd
	{ printf 'HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 4096\r\nConnection: close\r\n\r\n'
		bytes_pattern 4096; } >"$KTMP/want"
	[ $rc = 124 ] && [ ! -s "$KTMP/slow" ] &&
		{ close_fds "${fds[@]}"; stalled "$name: no answer to the trickled request"; return; }
	cmp -s "$KTMP/want" "$KTMP/slow" || fail "$name: the trickled request's answer differs ($(stat -c %s "$KTMP/slow") bytes)"
	[ $rc = 0 ] || fail "$name: the trickled request's connection did not close cleanly (status $rc)"
	say "$name: a request trickled over $((${#req} / 5 + 1)) writes answered byte for byte, GET / served meanwhile"

	for fd in "${fds[@]}"; do
		timeout 10 cat <&$fd >"$KTMP/idle"
		rc=$?
		close_fds $fd
		[ $rc = 124 ] && { close_fds "${fds[@]}"; stalled "$name: an idle client not closed within 10 s"; return; }
		[ $rc = 0 ] && [ ! -s "$KTMP/idle" ] ||
			fail "$name: an idle client got $(stat -c %s "$KTMP/idle") bytes and status $rc, not a close"
	done
	say "$name: 20 idle clients each closed at the idle timeout, unanswered"

	wait $head_pid
	rc=$(cat "$head_file.rc")
	error_answer "$KTMP/want" 408 "Request Timeout" $'request timeout\n'
	[ "$rc" = 124 ] && [ ! -s "$head_file" ] && { stalled "$name: no 408 for a head that never ends"; return; }
	cmp -s "$KTMP/want" "$head_file" || fail "$name: a head that never ends got $(stat -c %s "$head_file") bytes, not the 408"
	[ "$rc" = 0 ] || fail "$name: no clean close after the 408 (status $rc)"
	say "$name: a head that never ends answered 408, then closed"
	guest_stop_http "$url"
	[ "$GUEST_RC" = 0 ] || fail "$name: status $GUEST_RC"
}
t0=$SECONDS
twice "microvm slow clients" slow_clients microvm
c=$(tr -d '\r' <"$GUEST_CONSOLE")
contains -x 'httpd: 20 idle connections closed' <<<"$c" || fail "microvm slow clients: not 20 idle closes counted"
contains -E '^httpd: accepted .* head deadline 1 \(1 answered 408\),' <<<"$c" ||
	fail "microvm slow clients: not one 408 counted at the head deadline"
contains -E '^sockets: open 0,' <<<"$c" || fail "microvm slow clients: sockets left open"
say "microvm slow clients good ($((SECONDS - t0)) s)"

# Malformed requests, each on a connection of its own: the answer
# (status and body) byte for byte, then the server's close; what a request
# hides behind a bad length (GET /bytes/7) is never answered.
hidden='GET /bytes/7 HTTP/1.1\r\nHost: t\r\n\r\n'
printf -v long '%9000s' '' && long=${long// /a}
bad_requests=( # STATUS WHAT REQUEST (printf %b), in threes
	400 "a header line without a colon" 'GET / HTTP/1.1\r\nHost: t\r\nNo-colon-here\r\n\r\n'
	400 "a bare CR inside a line" 'GET / HTTP/1.1\r\nHost: t\rX: y\r\n\r\n'
	400 "a TLS hello at the HTTP port" '\x16\x03\x01\x02\x05 hello\r\n\r\n'
	400 "Content-Length beside chunked" "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$hidden"
	413 "Content-Length 2^64+4" "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 18446744073709551620\r\n\r\nABCD$hidden"
	413 "chunk size 2^66" "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n40000000000000000\r\n\r\n$hidden"
	413 "chunk size 2^64+5" "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n$hidden"
	431 "a 9000-byte header line" "GET / HTTP/1.1\r\nHost: t\r\nX-Long: $long\r\n\r\n"
	501 "Transfer-Encoding gzip" 'POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n'
)
declare -A REASON=([400]="Bad Request" [413]="Content Too Large" [431]="Request Header Fields Too Large"
	[501]="Not Implemented")
declare -A ERROR_BODY=([400]=$'bad request\n' [413]=$'request body too large\n' [431]=$'request header too large\n'
	[501]=$'transfer coding not implemented\n')
# REQUEST sent in one write; what comes back until the server closes (10 s
# at most) in $KTMP/got. Status 0: closed; 124: still open then; 2: no
# connection.
exchange() { # REQUEST
	timeout 10 bash -c 'exec 3<>"/dev/tcp/$0/80" || exit 2; printf "%b" "$1" >&3; cat <&3' \
		"$GUEST_IP" "$1" >"$KTMP/got" 2>/dev/null
}
# rudepeer MODE ARG, its lines said; 1 when it found the server quiet.
rude() { # NAME MODE ARG
	local out rc
	out=$(build/nested/bin/rudepeer "$GUEST_IP" "$2" "$3")
	rc=$?
	sed 's/^rudepeer: /kvm: '"$1"': /' <<<"$out"
	[ $rc = 3 ] && { stalled "$1: rudepeer $2 $3 found the server quiet"; return 1; }
	[ $rc = 0 ] || fail "$1: rudepeer $2 $3: status $rc"
}

# httpd with an idle timeout of 2 s: the malformed requests, then test 35's
# rude peers (resets, half-closes, clients that vanish, a segment 2^31 off);
# GET / served after each; past the idle timeout, it exits 0 with every
# socket freed and the hostile segment counted.
rude_peers() { # MACHINE
	local name i rc
	name=$(named "$1" "rude peers")
	image_start "$1" "$(app httpd)" "-p 80 -s -t 2"
	url=http://$GUEST_IP
	guest_answers "$url/" 60 || { stalled "$name: no answer"; return; }
	for ((i = 0; i < ${#bad_requests[@]}; i += 3)); do
		local status=${bad_requests[i]} what=${bad_requests[i + 1]}
		exchange "${bad_requests[i + 2]}"
		rc=$?
		error_answer "$KTMP/want" "$status" "${REASON[$status]}" "${ERROR_BODY[$status]}"
		[ $rc != 0 ] && [ ! -s "$KTMP/got" ] && { stalled "$name: $what: no answer (status $rc)"; return; }
		cmp -s "$KTMP/want" "$KTMP/got" ||
			fail "$name: $what: not the $status answer: $(head -c 120 "$KTMP/got" | tr -d '\r' | head -n 1)"
		[ $rc = 0 ] || fail "$name: $what: the connection stayed open after the $status"
	done
	root_served "$name: after the malformed requests" || { stalled "$name: no answer"; return; }
	say "$name: $((${#bad_requests[@]} / 3)) malformed requests each answered (400, 413, 431, 501) and closed; GET / served"
	rude "$name" reset 50 && rude "$name" halfclose 20 && rude "$name" vanish 20 && rude "$name" insane tap0 ||
		return 1
	sleep 3 # past the idle timeout: whatever is left is closed by now
	guest_stop_http "$url"
	[ "$GUEST_RC" = 0 ] || fail "$name: status $GUEST_RC"
}
t0=$SECONDS
twice "microvm rude peers" rude_peers microvm
c=$(tr -d '\r' <"$GUEST_CONSOLE")
contains -E '^sockets: open 0,' <<<"$c" || fail "microvm rude peers: sockets left open"
contains -E 'insane offsets 1$' <<<"$c" || fail "microvm rude peers: the hostile segment was not counted"
say "microvm rude peers good ($((SECONDS - t0)) s)"

# ---- the Linux guest --------------------------------------------------------
# The comparison's guest, not ours, under the same rule: a stall is
# diagnosed and the guest booted once more.
linux_serves() {
	guest_start tap build/linux/vmlinuz build/linux/initrd.img \
		"console=ttyS0 quiet panic=-1 $(guest_append tap) -- -p 80 -s" -- "${MON[@]}"
	guest_answers "$url/" 120 || { stalled "Linux guest: no answer"; return; }
	[ "$(curl -s -m 30 -i "$url/")" = "$want_root" ] || fail "Linux guest: GET / differs"
	ab_ok "$url/" 1000 4 -k || { stalled "Linux guest: ab -k -c 4 did not complete"; return; }
	say "Linux guest ab -k -c 4: $AB_RPS req/s, 0 failed"
	guest_stop_http "$url"
	[ "$GUEST_RC" = 0 ] || fail "Linux guest: status $GUEST_RC"
}
[ -n "$DESIGN" ] || twice "the Linux guest" linux_serves
say "all good"
