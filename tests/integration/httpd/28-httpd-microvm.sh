#!/usr/bin/env bash
# The unikernel's httpd on QEMU's microvm machine (no PCI): its NIC is a
# virtio-net-device on the virtio-mmio transport, found from the
# virtio_mmio.device= entry on the command line (QEMU's own for a PVH boot,
# qemu-run's for the loader), its interrupt a level-triggered I/O APIC line.
# User networking by PVH (DHCP, a fetch, a keep-alive load, the line's
# interrupts counted, none unexpected, a clean exit) and by the loader (a
# fetch); tap in a namespace by PVH, with the offloads (keep-alive and new
# connections, a 1 MB body); then the refusals: a malformed entry stops the
# boot with status 64, a legacy (version 1) device is named and not driven.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
uk_test httpd curl ab

# The console's counters after a clean exit: the NIC's interrupts came
# through the line (rx irqs > 0) and none landed on an unbound vector.
check_line_interrupts() {
	tr -d '\r' <"$1" | contains -E '^virtio-net: rx [0-9]+ frames .* irqs rx [1-9][0-9]* tx 0 config 0;' ||
		{ cat "$1"; fail "no receive interrupt through the virtio-mmio line"; }
	tr -d '\r' <"$1" | contains -E '^kernel: uptime [0-9]+ ms; interrupts [0-9]+ \(unexpected 0,' ||
		{ cat "$1"; fail "unexpected interrupts"; }
}

echo "== user networking, PVH boot"
port=$(free_port)
url=http://127.0.0.1:$port
guest_start "$tmp/console" "$tmp/qemu.pid" "$QEMU_RUN" --machine microvm --net user --hostfwd "$port:80" \
	--timeout 120 "${DESIGN_QEMU[@]}" --append "$DESIGN_KOPTS -- -p 80 -s" "$IMAGE"
guest_wait_http "$url/" 60 || { cat "$tmp/console"; fail "no HTTP answer"; }
tr -d '\r' <"$tmp/console" | contains -E '^net: 52:54:00:12:34:56 ip 10\.0\.2\.15/24 gw 10\.0\.2\.2 \(dhcp\)$' ||
	{ cat "$tmp/console"; fail "no DHCP address line"; }
expect_get "$url/" "$tmp/got" "$HTTPD_HELLO"
ab_load "$url/" 1000 8 -k || { cat "$tmp/console"; fail "ab -k: incomplete, failed or non-2xx requests"; }
curl -s -m 5 "$url/__shutdown" >/dev/null
guest_wait_exit 130
[ "$GUEST_RC" = 0 ] || { cat "$tmp/console"; fail "exit status $GUEST_RC after the shutdown request"; }
check_line_interrupts "$tmp/console"

echo "== user networking, loader boot"
port=$(free_port)
url=http://127.0.0.1:$port
guest_start "$tmp/console" "$tmp/qemu.pid" "$QEMU_RUN" --machine microvm --boot loader --net user \
	--hostfwd "$port:80" --timeout 120 "${DESIGN_QEMU[@]}" --append "$DESIGN_KOPTS -- -p 80 -s" "$LOADER" "$IMAGE"
guest_wait_http "$url/" 60 || { cat "$tmp/console"; fail "no HTTP answer"; }
expect_get "$url/" "$tmp/got" "$HTTPD_HELLO"
curl -s -m 5 "$url/__shutdown" >/dev/null
guest_wait_exit 130
[ "$GUEST_RC" = 0 ] || { cat "$tmp/console"; fail "exit status $GUEST_RC after the shutdown request"; }
tr -d '\r' <"$tmp/console" | contains '^loader: ' || fail "the loader did not run"

echo "== tap, PVH boot"
tap_netns mmio
url=http://$NETNS_GUEST_IP
guest_start "$tmp/console" "$tmp/qemu.pid" "${NET_EXEC[@]}" "$QEMU_RUN" --machine microvm --net tap \
	--tap "$NETNS_TAP" --timeout 120 "${DESIGN_QEMU[@]}" --append "$NETNS_GUEST_NET $DESIGN_KOPTS -- -p 80 -s" "$IMAGE"
guest_wait_http "$url/" 60 || { cat "$tmp/console"; fail "no HTTP answer"; }
expect_get "$url/" "$tmp/got" "$HTTPD_HELLO"
ab_load "$url/" 2000 8 -k || { cat "$tmp/console"; fail "ab -k: incomplete, failed or non-2xx requests"; }
ab_load "$url/" 300 4 || { cat "$tmp/console"; fail "ab: incomplete, failed or non-2xx requests"; }
size=$("${NET_EXEC[@]}" curl -s -m 20 -o /dev/null -w '%{size_download}' "$url/bytes/1000000")
[ "$size" = 1000000 ] || fail "GET /bytes/1000000 brought $size bytes"
"${NET_EXEC[@]}" curl -s -m 5 "$url/__shutdown" >/dev/null
guest_wait_exit 130
[ "$GUEST_RC" = 0 ] || { cat "$tmp/console"; fail "exit status $GUEST_RC after the shutdown request"; }
check_line_interrupts "$tmp/console"
tr -d '\r' <"$tmp/console" | contains -E '^virtio-net: offloads tx-csum on rx-csum on tx-tso4 on rx-tso4 on;' ||
	{ cat "$tmp/console"; fail "tap's offloads not negotiated"; }
netns_destroy "$NET_NS"
NET_NS="" NET_EXEC=()

echo "== a malformed entry"
"$QEMU_RUN" --machine microvm --timeout 60 --append 'virtio_mmio.device=512@0xfeb00e00 -- -s 0' \
	"$ROOT/$BUILD/apps/hello.elf" >"$tmp/console" 2>&1
rc=$?
[ $rc = 64 ] || { cat "$tmp/console"; fail "a malformed entry: status $rc, not 64"; }
tr -d '\r' <"$tmp/console" | contains -F "kernel: virtio_mmio.device=512@0xfeb00e00: no ':' after the address" ||
	{ cat "$tmp/console"; fail "no reason for the malformed entry"; }

echo "== a legacy device"
# A later -global wins: the NIC becomes a virtio-mmio version 1 device.
"$QEMU_RUN" --machine microvm --net user --timeout 60 "${DESIGN_QEMU[@]}" --append "$DESIGN_KOPTS -- -p 80" "$IMAGE" \
	-- -global virtio-mmio.force-legacy=true >"$tmp/console" 2>&1
tr -d '\r' <"$tmp/console" | contains -E '^virtio-mmio@0xfeb00e00: a legacy device \(version 1\).*force-legacy=false' ||
	{ cat "$tmp/console"; fail "the legacy device was not refused by name"; }
tr -d '\r' <"$tmp/console" | contains '^virtio-net: no modern virtio-net device' ||
	{ cat "$tmp/console"; fail "no word that the NIC is missing"; }
echo "all good"
