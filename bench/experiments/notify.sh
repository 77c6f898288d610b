#!/usr/bin/env bash
# notify-experiment: issue 12's experiment. Boots httpd images under QEMU
# configurations that do and do not emit host barriers for the guest's
# fences, loads each boot with ab on the tap back-end, and prints, per boot,
# the driver's notification counters (tx watchdog kicks, lost and late; lost
# kicks repaired per ring; rx lost interrupts) next to what ab completed.
# NOT for a loaded host: the counters of a late device depend on how the
# host schedules QEMU's threads, and the figures on nothing else running.
#
#   bench/experiments/notify.sh [NAME=VALUE...]
#     CONFIGS    among q72-smp1 (QEMU 7.2, -smp 1: no host barrier for a guest
#                fence), q72-max2 (7.2, -smp 1,maxcpus=2: barriers emitted,
#                one CPU still), q10 (QEMU 10.0, which has the fix)
#                                                   default: all three
#     GUESTS     NAME=IMAGE[:KERNEL-OPTIONS] ...    default: baseline (the
#                busy-polling build, make VARIANT=baseline) and all
#                (build/apps/httpd.elf); e.g. norepair=build/apps/httpd.elf:vnet_repair=0
#     LOADS      among k1 k8 k64 c1 c16 c64 (k: ab -k)   default: k1 k8 k64 c16
#     LOAD_SECS  seconds of each ab run                   default: 4
#     BOOTS      boots of each guest in each configuration default: 2
#                                                   default: deps/qemu10/root
#     OUT        results folder     default: build/notify-experiment/<timestamp>
# Guests alternate within a repetition and rotate between repetitions; each
# boot is a fresh namespace (tools/lib/netns.sh) with the guest at 192.0.2.2.
# OUT gets runs.csv (one row per ab run), boots.csv (one row per boot: the
# counters at exit) and each boot's console; the tables are printed at the
# end. Needs root, /dev/net/tun, ab and curl.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
for arg in "$@"; do
	case "$arg" in
	*=*) export "${arg%%=*}=${arg#*=}" ;;
	*) sed -n '2,/^set /p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2 ;;
	esac
done
CONFIGS=${CONFIGS:-q72-smp1 q72-max2 q10}
GUESTS=${GUESTS:-baseline=build/apps/httpd-baseline.elf all=build/apps/httpd.elf}
LOADS=${LOADS:-k1 k8 k64 c16}
LOAD_SECS=${LOAD_SECS:-4}
BOOTS=${BOOTS:-2}
OUT=${OUT:-$ROOT/build/notify-experiment/$(date +%Y%m%d-%H%M%S)}
LOADER=$ROOT/build/loader/loader.elf

. "$ROOT/tools/lib/netns.sh"
. "$ROOT/tools/lib/guest.sh"
die() { echo "notify-experiment: $*" >&2; exit 1; }
netns_usable || die "needs root, ip and /dev/net/tun"
command -v ab >/dev/null && command -v curl >/dev/null || die "needs ab and curl"
[ -f "$LOADER" ] || die "no $LOADER (make)"
names=() images=() opts=()
for g in $GUESTS; do
	name=${g%%=*} rest=${g#*=}
	image=${rest%%:*} opt=""
	[ "$image" != "$rest" ] && opt=${rest#*:}
	[ "${image:0:1}" = / ] || image=$ROOT/$image
	[ -f "$image" ] || die "no $image (make, or make VARIANT=baseline)"
	names+=("$name") images+=("$image") opts+=("$opt")
done
for c in $CONFIGS; do
	case "$c" in
	q72-smp1 | q72-max2) ;;
	q10) QEMU=10 "$ROOT/tools/qemu-run" --version >/dev/null 2>&1 || die "no QEMU 10 (mk/deps.sh qemu10)" ;;
	*) die "unknown configuration $c" ;;
	esac
done
case "$LOAD_SECS$BOOTS" in *[!0-9]*) die "LOAD_SECS and BOOTS are whole numbers" ;; esac
mkdir -p "$OUT/raw" || die "cannot make $OUT"

NS="" NET_EXEC=()
trap 'guest_kill; netns_destroy "$NS"' EXIT

echo "config,guest,boot,load,requests,failed,rps" >"$OUT/runs.csv"
echo "config,guest,boot,qemu,requests,tx_watchdog_kicks,tx_watchdog_lost,tx_watchdog_late,rx_kicks_repaired,tx_kicks_repaired,rx_lost_interrupts,kicks_dropped,kicks_rx,kicks_tx,kicks_suppressed,repair" >"$OUT/boots.csv"
{
	echo "started $(date -Is); git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
	echo "configs: $CONFIGS; guests: $GUESTS; loads: $LOADS, ${LOAD_SECS}s each; boots: $BOOTS"
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/meta.txt"

# One boot: config $1, guest index $2, boot number $3.
run_boot() {
	local config=$1 gi=$2 boot=$3 name=${names[$2]} raw extra=() emu=7.2 total=0 qemu limit
	raw=$OUT/raw/$config-$name-$boot
	case "$config" in
	q72-max2) extra=(-- -smp 1,maxcpus=2) ;;
	q10) emu=10 ;;
	esac
	qemu=$(QEMU=$emu "$ROOT/tools/qemu-run" --version | sed -n '1s/.*version \([0-9.]*\).*/\1/p')
	NS=notify-$$-$config-$name-$boot
	netns_create "$NS" || die "cannot create namespace $NS"
	NET_EXEC=(ip netns exec "$NS")
	local url=http://$NETNS_GUEST_IP
	limit=$((60 + 8 * (LOAD_SECS + 60)))
	guest_console_in "$raw.in" || die "no fifo for the console"
	guest_start "$raw.console" "" env QEMU="$emu" "${NET_EXEC[@]}" "$ROOT/tools/qemu-run" --net tap \
		--tap "$NETNS_TAP" --accel tcg --timeout "$limit" \
		--append "ip=$NETNS_GUEST_IP gw=$NETNS_HOST_IP mask=$NETNS_MASK ${opts[$gi]} -- -p 80 -s" \
		"$LOADER" "${images[$gi]}" "${extra[@]}"
	if guest_wait_http "$url/" 60; then
		local load conc k req failed rps
		for load in $LOADS; do
			conc=${load#?} k=()
			[ "${load:0:1}" = k ] && k=(-k)
			ip netns exec "$NS" timeout -k 5 $((LOAD_SECS + 45)) ab -q -r -s 10 "${k[@]}" -c "$conc" \
				-t "$LOAD_SECS" -n 2000000 "$url/" >"$raw.$load.ab" 2>&1
			req=$(sed -n 's/^Complete requests: *//p' "$raw.$load.ab")
			failed=$(sed -n 's/^Failed requests: *//p' "$raw.$load.ab")
			rps=$(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$raw.$load.ab")
			echo "$config,$name,$boot,$load,${req:-0},${failed:-},${rps:-}" >>"$OUT/runs.csv"
			total=$((total + ${req:-0}))
		done
		ip netns exec "$NS" curl -s -m 5 "$url/__shutdown" >/dev/null
	else
		echo "  $config $name boot $boot: no HTTP answer" >&2
	fi
	guest_wait_exit $((limit + 10)) || guest_kill # qemu-run's --timeout ends it first
	netns_destroy "$NS"
	NS=""
	tr -d '\r' <"$raw.console" >"$raw.c" && mv "$raw.c" "$raw.console"
	awk -v pre="$config,$name,$boot,$qemu,$total" '
		/^virtio-net: rx [0-9]+ frames/ {
			for (i = 1; i < NF; i++) {
				if ($i == "kicks" && $(i + 1) == "rx") { krx = $(i + 2); ktx = $(i + 4) }
				if ($i == "(suppressed") { sup = $(i + 1) + 0 }
			}
		}
		/^virtio-net: rx lost kicks repaired/ {
			gsub(/[;,()]/, " ")
			for (i = 1; i < NF; i++) {
				if ($i == "rx" && $(i + 1) == "lost" && $(i + 2) == "kicks") rrx = $(i + 4)
				if ($i == "tx" && $(i + 1) == "lost" && $(i + 2) == "kicks") rtx = $(i + 4)
				if ($i == "watchdog" && $(i + 1) == "kicks") { wd = $(i + 2); wlost = $(i + 4); wlate = $(i + 6) }
				if ($i == "interrupts") lint = $(i + 1)
				if ($i == "dropped") kdrop = $(i + 1)
				if ($i == "repair") rep = $(i + 1)
			}
			found = 1
		}
		END {
			if (!found) { print pre ",,,,,,,,,,," ; exit }
			printf "%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s\n", pre, wd, wlost, wlate, rrx, rtx, lint, kdrop, krx, ktx, sup, rep
		}' "$raw.console" >>"$OUT/boots.csv"
	tail -1 "$OUT/boots.csv" | awk -F, '{ printf "  %-9s %-10s boot %s (QEMU %s): %d requests; tx watchdog kicks %s (lost %s, late %s); lost kicks repaired rx %s tx %s; rx lost interrupts %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }'
}

for boot in $(seq "$BOOTS"); do
	for config in $CONFIGS; do
		n=${#names[@]}
		for j in $(seq 0 $((n - 1))); do
			run_boot "$config" $(((j + boot - 1) % n)) "$boot"
		done
	done
done

echo
echo "== per boot (counters at exit; requests: all loads together)"
column -s, -t "$OUT/boots.csv"
echo
echo "== requests/s, median over boots (failed requests summed)"
{
	echo "config,guest,load,rps_median,failed"
	tail -n +2 "$OUT/runs.csv" | sort -t, -k1,1 -k2,2 -k4,4 -k7,7g | awk -F, '
		function out() { if (n) printf "%s,%s,%s,%s,%d\n", c, g, l, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, f }
		$1 != c || $2 != g || $4 != l { out(); c = $1; g = $2; l = $4; n = 0; f = 0 }
		{ v[++n] = $7; f += $6 }
		END { out() }'
} | column -s, -t
echo
echo "results in $OUT"
