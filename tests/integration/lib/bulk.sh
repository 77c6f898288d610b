# lib/bulk.sh: the offload tests' one boot (sourced; tests 16-19).
#
#   bulk_boot BACKEND KERNEL-OPTIONS BYTES STREAMS
#       boots tests/images/bulk on `tap` (a fresh namespace) or `user`
#       (QEMU's user networking, its ports forwarded from 127.0.0.1), runs
#       tests/integration/lib/bulk.py against it (STREAMS streams of each kind,
#       BYTES bytes each way each: every byte checked), then ends it. Fails
#       the test unless every transfer was exact and the guest stopped with
#       status 0. Leaves the console (CRs removed) in $BULK_TMP/console.
#   counter LINE-PREFIX LABEL
#       the number after LABEL on the console's line starting LINE-PREFIX
#   expect_counter LINE-PREFIX LABEL OP VALUE
#       fail unless that number OP VALUE (-eq, -gt, ...)
# Traffic goes only to 127.0.0.1 or into the namespace made here.

. "${ROOT:-.}/tests/integration/lib/net.sh"

BULK_TMP=$(mktemp -d)
BULK_NS="" BULK_PID=""
trap '[ -n "$BULK_PID" ] && kill "$BULK_PID" 2>/dev/null; wait 2>/dev/null; netns_destroy "$BULK_NS"; rm -rf "$BULK_TMP"' EXIT

bulk_boot() {
	local backend=$1 opts=$2 bytes=$3 streams=$4 image=$ROOT/$BUILD/apps/bulk.elf host ports net append
	[ -f "$image" ] || fail "no $image"
	command -v python3 >/dev/null || skip "python3 missing"
	if [ "$backend" = tap ]; then
		netns_usable || skip "tap back-end needs root, ip and /dev/net/tun"
		BULK_NS=bulk-$$
		netns_create "$BULK_NS" || skip "cannot create a network namespace here"
		NET_EXEC=(ip netns exec "$BULK_NS")
		net=(--net tap --tap "$NETNS_TAP")
		host=$NETNS_GUEST_IP ports=9,10,11,12
		append="ip=$NETNS_GUEST_IP gw=$NETNS_HOST_IP mask=$NETNS_MASK"
	else
		local p=() i
		for i in 1 2 3 4; do p+=("$(free_port)"); done
		net=(--net user --hostfwd "${p[0]}:9" --hostfwd "${p[1]}:10" --hostfwd "${p[2]}:11"
			--hostfwd "${p[3]}:12")
		host=127.0.0.1 ports=${p[0]},${p[1]},${p[2]},${p[3]}
		append="ip=10.0.2.15 gw=10.0.2.2 mask=255.255.255.0"
	fi
	"${NET_EXEC[@]}" "$QEMU_RUN" "${net[@]}" --timeout 280 --append "$append $opts --" \
		"$LOADER" "$image" </dev/null >"$BULK_TMP/console" 2>&1 &
	BULK_PID=$!
	guest_wait_console "$BULK_TMP/console" '^bulk: ready' 60 "$BULK_PID" || { cat "$BULK_TMP/console"; fail "bulk did not start"; }
	local rc=0
	"${NET_EXEC[@]}" python3 "$ROOT/tests/integration/lib/bulk.py" "$host" "$ports" --bytes "$bytes" \
		--streams "$streams" --timeout 150 --quit || rc=1
	wait "$BULK_PID"
	local qrc=$?
	BULK_PID=""
	tr -d '\r' <"$BULK_TMP/console" >"$BULK_TMP/c" && mv "$BULK_TMP/c" "$BULK_TMP/console"
	cat "$BULK_TMP/console"
	[ $rc = 0 ] || fail "a transfer was not exact (kernel options: $opts)"
	[ $qrc = 0 ] || fail "the guest's exit status was $qrc"
	netns_destroy "$BULK_NS"
	BULK_NS="" NET_EXEC=()
}

counter() {
	grep "^$1" "$BULK_TMP/console" | head -1 | sed -n "s/.*[ ;,(]$2 \([0-9][0-9]*\).*/\1/p"
}

expect_counter() {
	local v
	v=$(counter "$1" "$2")
	[ -n "$v" ] || fail "no counter '$2' on the line '$1'"
	[ "$v" "$3" "$4" ] || fail "'$1 ... $2' is $v, expected $3 $4"
	echo "ok: $2 = $v ($3 $4)"
}
