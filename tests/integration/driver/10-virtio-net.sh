#!/usr/bin/env bash
# The virtio-net driver alone: negotiate with QEMU's modern virtio-net-pci
# (or, with MACHINE=microvm, virtio-net-device on virtio-mmio), send ARP
# requests as two-piece descriptor chains and receive the replies, parked on
# the receive interrupt (MSI-X, or the I/O APIC line) in between.
. "$(dirname "$0")/../lib/boot.sh"
IMAGE=$ROOT/$BUILD/apps/vnet_arp.elf

boot "$IMAGE" --net user -- 'quiet -- 5'
expect_rc 0
expect '^vnet: mac 52:54:00:12:34:56 link up$'
[ "$(printf '%s\n' "$OUT" | grep -c '^arp reply: 10.0.2.2 is at 52:55:0a:00:02:02$')" = 5 ] || fail "not 5 replies"
expect '^replies 5 of 5, tx done 5$' "(every transmitted chain reclaimed)"
expect '^virtio-net: rx 5 frames [0-9]+ bytes, tx 5 frames 210 bytes; drops: bad used 0/0, runt 0, merged 0,'
irqs=$(printf '%s\n' "$OUT" | sed -nE 's/.*irqs rx ([0-9]+) .*/\1/p')
[ -n "$irqs" ] && [ "$irqs" -ge 1 ] || fail "no receive interrupt woke the waiter"
features=$(printf '%s\n' "$OUT" | sed -nE 's/.*features 0x([0-9a-f]+)$/\1/p')
(( (16#$features >> 32) & 1 )) || fail "VERSION_1 not negotiated"
(( (16#$features >> 29) & 1 )) || fail "EVENT_IDX not negotiated"

# Without the device: a clear message, not a hang.
boot "$IMAGE" -- 'quiet'
expect_rc 2
expect '^virtio-net: no modern virtio-net device'

# A legacy-only device (no modern capabilities): refused with the reason.
# On PCI here; on microvm test 28 gives a version-1 virtio-mmio device.
if [ "${MACHINE:-pc}" = pc ]; then
	QEMU_EXTRA="-netdev user,id=x -device virtio-net-pci,disable-modern=on,netdev=x" boot "$IMAGE" -- 'verbose quiet'
	expect_rc 2
	expect '^pci: 00:[0-9a-f]{2}\.0 1af4:1000 ' "(the legacy device is there)"
	expect '^virtio-net: no modern virtio-net device'
fi
