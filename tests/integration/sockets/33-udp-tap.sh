#!/usr/bin/env bash
# UDP sockets in the guest, from a peer: sockcheck echoes datagrams arriving on
# port 7 (recvfrom, then sendto the sender); a client in a private network
# namespace sends three of different sizes and must get each back unchanged,
# the last of them sent right before sockcheck exits.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
IMAGE=$ROOT/$BUILD/apps/sockcheck.elf LOADER=$ROOT/$BUILD/loader/loader.elf
design_image "$IMAGE" # under make test-smp, the design's build on its CPUs
IMAGE=$DESIGN_IMAGE
netns_usable || skip "tap back-end needs root, ip and /dev/net/tun"
command -v python3 >/dev/null || skip "python3 missing"
NS=udptest-$$
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; netns_destroy "$NS"; rm -rf "$tmp"' EXIT
netns_create "$NS" || skip "cannot create a network namespace here"

ip netns exec "$NS" "$QEMU_RUN" --net tap --tap "$NETNS_TAP" --timeout 60 "${DESIGN_QEMU[@]}" \
	--append "ip=$NETNS_GUEST_IP gw=$NETNS_HOST_IP mask=$NETNS_MASK $DESIGN_KOPTS -- --refuse $NETNS_HOST_IP --udp-echo 3" \
	"$LOADER" "$IMAGE" </dev/null >"$tmp/console" 2>&1 &
pid=$!
guest_wait_console "$tmp/console" 'udp echo: listening' 30 "$pid" || { cat "$tmp/console"; fail "the echo server did not start"; }

ip netns exec "$NS" python3 - "$NETNS_GUEST_IP" <<'PY' || { cat "$tmp/console"; fail "UDP echo failed"; }
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
for size in (1, 512, 1400):
    msg = bytes((i * 7 + size) % 256 for i in range(size))
    s.sendto(msg, (sys.argv[1], 7))
    data, peer = s.recvfrom(4096)
    assert data == msg, f"{size}-byte datagram came back different"
    assert peer == (sys.argv[1], 7), f"answer from {peer}"
    print(f"{size}-byte datagram echoed")
PY
wait "$pid"
rc=$?
pid=""
tr -d '\r' <"$tmp/console" | tee "$tmp/console.txt"
[ $rc = 0 ] || fail "sockcheck exit status $rc"
grep -q '^udp echo: done' "$tmp/console.txt" || fail "no end of echo"
# The last echo left before the exit: the exit waits for the device to take
# every frame (executor_drain) and gave up on none.
grep -Eq '^kernel: waits .*exit drain polls [0-9]+ \(gave up 0\)$' "$tmp/console.txt" ||
	fail "the exit left with frames the device had not taken"
echo "all good"
