# quiet-guard.sh: the quiet-host guard that every measuring batch runs
# before it starts (sourced by run-bench, run-bulk, run-kvm, run-costs).
# What a batch measures while other work shares the host's two cores is
# that work, so it refuses to start when the 1-minute load average is above
# MAX_LOAD, says what is running, and exits 3; FORCE=1 starts it anyway and
# the batch records that it was forced.
#
# Offers:
#   quiet_guard PREFIX   check (PREFIX starts its messages, e.g. "bench");
#                        sets QUIET_GUARD to the line meta.txt records after
#                        "guard: " and QUIET_LOAD to the load averages it read
#                        (1, 5, 15 min); exits 2 on a bad setting, 3 on a busy
#                        host
# Settings: MAX_LOAD (default 1.0), FORCE (0 or 1), LOADAVG_FILE (default
# /proc/loadavg).

quiet_guard() {
	local p=$1 max=${MAX_LOAD:-1.0} force=${FORCE:-0} file=${LOADAVG_FILE:-/proc/loadavg}
	local l1="" l5="" l15="" py
	[[ $max =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$p: MAX_LOAD must be a number, not '$max'" >&2; exit 2; }
	case $force in 0 | 1) ;; *) echo "$p: FORCE must be 0 or 1" >&2; exit 2 ;; esac
	[ -r "$file" ] && read -r l1 l5 l15 _ <"$file"
	[[ $l1 =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$p: no load average in $file" >&2; exit 2; }
	QUIET_LOAD="$l1 $l5 $l15"
	if ! awk -v l="$l1" -v m="$max" 'BEGIN { exit !(l > m) }'; then
		QUIET_GUARD="passed: 1-minute load average $l1 <= MAX_LOAD $max at start"
		return 0
	fi
	if [ "$force" = 1 ]; then
		QUIET_GUARD="FORCED: 1-minute load average $l1 > MAX_LOAD $max at start (FORCE=1): not a quiet-host batch"
		echo "$p: $QUIET_GUARD" >&2
		return 0
	fi
	py=$(command -v /usr/bin/python3 || command -v python3)
	{
		echo "$p: refusing to start: the 1-minute load average is $l1 (5 min $l5, 15 min $l15),"
		echo "$p: above MAX_LOAD=$max: other work shares the CPUs, and what it takes from QEMU and the load"
		echo "$p: generator would be measured as the guests' speed (a quiet host measures 2-5x higher)."
		echo "$p: what is running now (CPU over 1 s):"
		"$py" "$ROOT/bench/hostcpu.py" busiest 1 5 2>/dev/null | sed "s/^/$p:   /"
		echo "$p: wait for a quiet host, or run with FORCE=1 (the batch is then marked forced)."
	} >&2
	exit 3
}
