#!/usr/bin/env bash
# RAM above 4 GiB is mapped and used, up to 64 GiB here (and beyond), without
# the boot touching it: the loader maps every usable range of the firmware's
# map (its tables sized by the map), the kernel hands all of it to the heap
# and page_alloc. memcheck mallocs everything it can, writes a word that
# depends on its address along every block and reads them all back, and says
# how much lay above 4 GiB; httpd serves with its virtio rings and buffers
# from the top of RAM, above 4 GiB, so the device's DMA goes there too. RAM
# the CPU cannot address (phys-bits=32) is reported in one line, not a crash.
. "$(dirname "$0")/../lib/boot.sh"
. "$(dirname "$0")/../lib/machine.sh"
MEMCHECK=$ROOT/$BUILD/apps/memcheck.elf
MiB() { printf '%s\n' "$OUT" | sed -nE "s/$1/\\1/p" | head -n1; }
at_least() { # WHAT VALUE MIN
	[ -n "$2" ] && [ "$2" -ge "$3" ] || fail "$1 is ${2:-missing}, expected at least $3"
}

# -m 6G (QEMU's pc: 3 GiB below the PCI hole, 3 GiB from 4 GiB).
boot "$MEMCHECK" --mem 6G -- 'verbose quiet'
expect_rc 0
expect '^loader: RAM mapped below 0x0000010000000000 \(40-bit physical addresses\), 3 page tables for RAM above 4 GiB'
expect '^kernel: RAM 6143 MiB in 3 ranges up to 0x1c0000000; .* pages down from 0x1c0000000$'
expect_not 'not usable'
at_least "memory malloc gave" "$(MiB '^memcheck: malloc gave ([0-9]+) MiB.*')" 5800
at_least "memory above 4 GiB" "$(MiB '^memcheck: .* ([0-9]+) MiB of it above 4 GiB.*')" 3000
expect '^memcheck: [0-9]+ words written, 0 read back wrong$'
expect '^memcheck: page_alloc page at 0x[0-9a-f]+, intact$'

# q35 splits RAM at 2 GiB: 4 GiB of it above 4 GiB.
QEMU_EXTRA="-machine q35" boot "$MEMCHECK" --mem 6G -- 'quiet'
expect_rc 0
at_least "memory above 4 GiB (q35)" "$(MiB '^memcheck: .* ([0-9]+) MiB of it above 4 GiB.*')" 4000
expect '^memcheck: [0-9]+ words written, 0 read back wrong$'

# httpd serves at -m 6G, its rings (page_alloc) at the top of RAM, right
# below the network's heap, which the kernel sets aside first at the very
# top (8 MiB and a page: 0x1c0000000 - 0x801000).
serve "$HTTPD" --mem 6G -- verbose
expect_rc 0
expect '^kernel: 6143 MiB RAM, heap up to [0-9]+ MiB'
expect 'pages down from 0x1bf7ff000$'

# 64 GiB, then 1000 GiB (40-bit physical addresses allow 1 TiB), the guest's
# RAM reserved lazily (reserve=off), as the host has far less. A word every
# GiB keeps memcheck's footprint on the host small.
big() { echo "-object memory-backend-ram,id=ram0,size=$1,reserve=off -machine memory-backend=ram0"; }
QEMU_EXTRA=$(big 64G) boot "$MEMCHECK" --mem 64G -- 'quiet -- 1024 1024'
if boots_large_memory; then
	expect_rc 0
	at_least "memory above 4 GiB (64 GiB guest)" "$(MiB '^memcheck: .* ([0-9]+) MiB of it above 4 GiB.*')" 60000
	expect '^memcheck: [0-9]+ words written, 0 read back wrong$'
	expect '^memcheck: page_alloc page at 0x[0-9a-f]+, intact$'
fi
QEMU_EXTRA=$(big 1000G) boot "$HELLO" --mem 1000G -- 'verbose quiet -- -s 0'
if boots_large_memory; then
	expect_rc 0
	expect '^kernel: 1023999 MiB RAM, heap up to [0-9]+ MiB'
	expect '^loader: .* 998 page tables for RAM above 4 GiB'
fi

# A CPU that says it has 32-bit physical addresses cannot reach RAM above
# 4 GiB: one line says so, and the rest is used.
QEMU_EXTRA="-cpu qemu64,phys-bits=32" boot "$MEMCHECK" --mem 6G -- 'quiet'
expect_rc 0
expect '^kernel: 3072 MiB of RAM not usable: 3072 MiB above 0x100000000 \(the CPU.s physical address width\)$'
[ "$(printf '%s\n' "$OUT" | grep -c 'not usable')" = 1 ] || fail "not one line about unusable RAM"
expect '^memcheck: malloc gave [0-9]+ MiB in [0-9]+ blocks, 0 MiB of it above 4 GiB'
expect '^memcheck: [0-9]+ words written, 0 read back wrong$'

# And the smallest machine still boots with the same code.
boot "$MEMCHECK" --mem 16M -- 'quiet'
expect_rc 0
expect '^memcheck: [0-9]+ words written, 0 read back wrong$'
echo "all good"
