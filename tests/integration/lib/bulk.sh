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
#   expect_offloads WORDS MSG
#       fail with MSG unless the console's "virtio-net: offloads" line
#       begins with WORDS ("tx-csum on rx-csum on tx-tso4 off rx-tso4 off")
#   expect_no_offloads MSG
#       none negotiated (expect_offloads, all off) and none used: no TCP
#       checksum left to the device or skipped on receipt, no segment run
#       sent or received whole, no checksum error in lwIP
# Traffic goes only to 127.0.0.1 or into the namespace made here.

. "${ROOT:-.}/tests/integration/lib/net.sh"

BULK_TMP=$(mktemp -d)
BULK_PID=""
trap '[ -n "$BULK_PID" ] && kill "$BULK_PID" 2>/dev/null; wait 2>/dev/null; netns_destroy "$NET_NS"; rm -rf "$BULK_TMP"' EXIT

bulk_boot() {
	local backend=$1 opts=$2 bytes=$3 streams=$4 image=$ROOT/$BUILD/apps/bulk.elf ports
	[ -f "$image" ] || fail "no $image"
	needs python3
	net_backend "$backend" bulk 9 10 11 12
	ports=$(IFS=,; echo "${NET_PORTS[*]}")
	"${NET_EXEC[@]}" "$QEMU_RUN" "${NET_QEMU[@]}" --timeout 280 --append "$NET_GUEST $opts --" \
		"$LOADER" "$image" </dev/null >"$BULK_TMP/console" 2>&1 &
	BULK_PID=$!
	guest_wait_console "$BULK_TMP/console" '^bulk: ready' 60 "$BULK_PID" || { cat "$BULK_TMP/console"; fail "bulk did not start"; }
	local rc=0
	"${NET_EXEC[@]}" python3 "$ROOT/tests/integration/lib/bulk.py" "$NET_HOST" "$ports" --bytes "$bytes" \
		--streams "$streams" --timeout 150 --quit || rc=1
	wait "$BULK_PID"
	local qrc=$?
	BULK_PID=""
	tr -d '\r' <"$BULK_TMP/console" >"$BULK_TMP/c" && mv "$BULK_TMP/c" "$BULK_TMP/console"
	cat "$BULK_TMP/console"
	[ $rc = 0 ] || fail "a transfer was not exact (kernel options: $opts)"
	[ $qrc = 0 ] || fail "the guest's exit status was $qrc"
	netns_destroy "$NET_NS"
	NET_NS="" NET_EXEC=()
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

expect_offloads() {
	grep -q "^virtio-net: offloads $1;" "$BULK_TMP/console" || fail "$2"
}

expect_no_offloads() {
	expect_offloads "tx-csum off rx-csum off tx-tso4 off rx-tso4 off" "$1"
	expect_counter "net: offloads" "tx csum" -eq 0
	expect_counter "net: offloads" "tx gso frames" -eq 0
	expect_counter "net: offloads" "rx csum skipped" -eq 0
	expect_counter "net: offloads" "rx gso" -eq 0
	expect_counter "lwip tcp" "chkerr" -eq 0
}
