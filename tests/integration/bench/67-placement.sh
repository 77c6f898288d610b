#!/usr/bin/env bash
# 67-placement: the benchmark's pinning (bench/runner/placement.py, through
# `bench/run placement`). A placement name that does not exist, or cores that
# are not there, is refused with a message. For vcpu0 and vcpu1 a real QEMU
# (the hello app, sleeping) is started on the I/O core as the http workload
# starts it, and the pin must find its vCPU thread (named by qemu-run's
# debug-threads) and move it alone: that thread allowed only the vCPU core,
# every other thread of QEMU only the other one. Needs two cores and taskset.
set -uo pipefail
. "$(dirname "$0")/../lib/boot.sh"
command -v taskset >/dev/null || { echo "taskset missing"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "one core: nothing to place"; exit 77; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -s "$tmp/qemu.pid" ] && kill "$(cat "$tmp/qemu.pid")" 2>/dev/null
	wait 2>/dev/null; rm -rf "$tmp"' EXIT
placement() { "$ROOT/bench/run" placement "$@"; }

echo "== names and cores"
placement check none && placement check vcpu0 && placement check vcpu1 || fail "a known placement was refused"
placement check vcpu2 2>"$tmp/err" && fail "vcpu2 accepted"
grep -q "unknown placement 'vcpu2'" "$tmp/err" || fail "no message for vcpu2"
placement check vcpu0 "0 0" 2>/dev/null && fail "PIN_CORES '0 0' accepted"
placement check vcpu0 "0 4095" 2>"$tmp/err" && fail "a core that is not there was accepted"
grep -q 'not both usable' "$tmp/err" || fail "no message for a missing core"
[ -z "$(placement split none)" ] || fail "placement none pins something"
[ "$(placement split vcpu1)" = "1 0" ] || fail "vcpu1 is not vCPU on 1, the rest on 0"
[ "$(placement split vcpu0)" = "0 1" ] || fail "vcpu0 is not vCPU on 0, the rest on 1"

allowed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1/status"; }
for p in vcpu0 vcpu1; do
	echo "== $p"
	read -r vcpu_core io_core <<<"$(placement split "$p")"
	rm -f "$tmp/qemu.pid"
	taskset -c "$io_core" "$QEMU_RUN" --timeout 60 --append '-- -s 30000' "$LOADER" "$HELLO" \
		-- -pidfile "$tmp/qemu.pid" </dev/null >"$tmp/console" 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -s "$tmp/qemu.pid" ] && break; sleep 0.05; done
	qpid=$(cat "$tmp/qemu.pid" 2>/dev/null) || fail "QEMU wrote no pidfile"
	got=$(placement pin "$qpid" "$p") || fail "placement pin: $got"
	echo "threads: $got"
	vcpu=0 rest=0
	for t in /proc/"$qpid"/task/*; do
		case "$(cat "$t/comm")" in
		"CPU 0/"*) vcpu=$((vcpu + 1)); [ "$(allowed "$t")" = "$vcpu_core" ] || fail "$p: the vCPU thread may run on $(allowed "$t")" ;;
		*) rest=$((rest + 1)); [ "$(allowed "$t")" = "$io_core" ] || fail "$p: thread $(cat "$t/comm") may run on $(allowed "$t")" ;;
		esac
	done
	[ $vcpu = 1 ] && [ $rest -ge 1 ] || fail "$p: $vcpu vCPU thread(s), $rest other(s)"
	kill "$qpid"
	wait "$pid" 2>/dev/null
	pid=""
done
echo "all good"
