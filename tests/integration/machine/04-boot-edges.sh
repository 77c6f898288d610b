#!/usr/bin/env bash
# Boot edge cases: a bad command line is a clear usage error (64), and so
# is a kernel option the table does not have or a value it refuses; heap
# exhaustion is ENOMEM from malloc, not a crash; an image larger than the gap
# below its load address is moved by the loader and still finds its symbols;
# PCI enumeration sees a virtio-net device with MSI-X.
. "$(dirname "$0")/../lib/boot.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

boot "$HELLO" -- 'quiet name="unterminated -- x'
expect_rc 64
expect '^kernel: bad command line: unterminated quote in command line$'

# A mistyped option would otherwise boot with the default: the boot stops
# before the app runs, naming it, and qemu-run confirms the status.
boot "$HELLO" -- 'quiet vnet_tx_hold_uss=0 -- -e 3'
expect_rc 64
expect '^kernel: unknown option "vnet_tx_hold_uss" \(docs/kernel-options\.md lists them\)$'
expect_not '^argv\[' "(the app did not run)"
boot "$HELLO" -- 'quiet spin_us=25O -- -e 3'
expect_rc 64
expect '^kernel: option spin_us=25O: not a decimal number \(docs/kernel-options\.md\)$'
boot "$HELLO" -- 'quiet vnet_tx_batch=4 -- -e 3'
expect_rc 64
expect '^kernel: option vnet_tx_batch=4: not in 0\.\.3 \(docs/kernel-options\.md\)$'

boot "$HELLO" --mem 64M -- 'quiet -- --oom -s 1'
expect_rc 0
expect '^malloc failed after [0-9]+ MiB$'
mib=$(printf '%s\n' "$OUT" | sed -nE 's/^malloc failed after ([0-9]+) MiB$/\1/p')
[ "$mib" -ge 40 ] && [ "$mib" -le 64 ] || fail "heap reached $mib MiB of 64"

# 8 MiB of padding after the ELF data: QEMU places the module from ~1 MiB,
# across the image's load address (4 MiB).
cp "$HELLO" "$tmp/big"
head -c $((8 << 20)) /dev/zero >>"$tmp/big"
boot "$tmp/big" -- 'quiet -- --fault'
expect_rc 70
expect '^  #1  0x[0-9a-f]+ main\+' "(symbols read from the moved image)"

boot "$HELLO" --net user -- 'verbose quiet -- -s 1'
expect_rc 0
expect '^pci: 00:[0-9a-f]{2}\.0 1af4:1041 class 02\.00 msix$' "(virtio-net, modern, with MSI-X)"
expect '^kernel: [0-9]+ MiB RAM, heap up to [0-9]+ MiB, TSC [0-9]+ MHz from lapic, booted in [0-9]+ us$'
