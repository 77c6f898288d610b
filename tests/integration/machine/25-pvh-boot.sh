#!/usr/bin/env bash
# The PVH entry (kernel/pvh.S, boot/pvh.c): QEMU loads hello.elf by itself
# (-kernel IMAGE, no loader) and enters it by its Xen note with the start
# info in %ebx, on the PC machine and on microvm (no PCI, no PC firmware
# tables; PVH is its default boot). On both: the command line arrives whole
# (no image path to skip), a panic and a bad command line get their
# statuses, W^X holds once the kernel has its tables. On pc: a CPU without
# a feature gets its status, RAM above 4 GiB is mapped where the CPU has
# 1 GiB pages and reported as not usable where it does not. No ELF file
# lies in memory under PVH, so backtraces have addresses but no names.
. "$(dirname "$0")/../lib/boot.sh"
MEMCHECK=$ROOT/$BUILD/apps/memcheck.elf
CPU=qemu64,apic,fsgsbase,fxsr,rdrand,rdtscp,xsave,xsaveopt # qemu-run's

for machine in pc microvm; do
	echo "== $machine"
	boot "$HELLO" --machine "$machine" --boot pvh -- 'quiet -- -e 42 "two words" plain'
	expect_rc 42
	expect_not '^loader:' "(no loader ran)"
	expect '^argv\[0\] = "hello"$'
	expect '^argv\[1\] = "-e"$'
	expect '^argv\[3\] = "two words"$'
	expect_not '^argv\[5\]'
	expect_not '^kernel: uptime' "(quiet, the first word, is read as an option)"
	expect '^exit 42$'

	# A panic: status 70, a backtrace of bare addresses.
	boot "$HELLO" --machine "$machine" --boot pvh -- 'quiet -- --fault'
	expect_rc 70
	expect '^panic: page fault \(vector 14\), error code 0x0$'
	expect '^backtrace:$'
	expect '^  #1  0x[0-9a-f]+ \?'

	# W^X from the kernel's own tables.
	boot "$HELLO" --machine "$machine" --boot pvh -- 'quiet -- --write-text'
	expect_rc 70
	expect '^panic: page fault \(vector 14\), error code 0x3$'
	boot "$HELLO" --machine "$machine" --boot pvh -- 'quiet -- --exec-data'
	expect_rc 70
	expect '^panic: page fault \(vector 14\), error code 0x11$'

	# A bad command line: an unknown option, an unclosed quote.
	boot "$HELLO" --machine "$machine" --boot pvh -- 'no_such_option=1 -- -s 0'
	expect_rc 64
	expect '^kernel: .*no_such_option'
	boot "$HELLO" --machine "$machine" --boot pvh -- 'quiet -- "unclosed'
	expect_rc 64
	expect '^kernel: bad command line'
done

# The first word is an option, not an image path to skip.
boot "$HELLO" --boot pvh -- 'verbose -- -s 0'
expect_rc 0
expect '^kernel: [0-9]+ MiB RAM, heap up to [0-9]+ MiB, TSC [0-9]+ MHz( from [a-z0-9]+)?, booted in [0-9]+ us$'
expect '^kernel: RAM 255 MiB in 2 ranges'
boot "$HELLO" --boot pvh -- ''
expect_rc 0
expect '^argv\[0\] = "hello"$'
expect_not '^argv\[1\]'

# A CPU the kernel cannot run on: the loader's words and status, from the
# 32-bit entry (long mode, TSC) and from its C (SSE, NX).
for cpu in "qemu64,-lm:long mode" "qemu64,-tsc:TSC" "qemu64,-sse2:SSE2" "qemu64,-nx:NX"; do
	QEMU_EXTRA="-cpu ${cpu%%:*}" boot "$HELLO" --boot pvh -- 'quiet -- -s 0'
	expect_rc 69
	expect "^kernel: error: the CPU has no ${cpu#*:}"
	expect '^kernel: exit status 69$'
done

# RAM above 4 GiB: mapped with 1 GiB pages where the CPU has them ...
QEMU_EXTRA="-cpu $CPU,pdpe1gb" boot "$MEMCHECK" --boot pvh --mem 6G -- 'verbose quiet'
expect_rc 0
expect '^kernel: RAM 6143 MiB in 3 ranges up to 0x1c0000000'
expect_not 'not usable'
expect '^memcheck: [0-9]+ words written, 0 read back wrong$'
# ... and left out, in one line, where it does not (qemu64 has none).
boot "$MEMCHECK" --boot pvh --mem 6G -- 'verbose quiet'
expect_rc 0
expect '^kernel: 3072 MiB of RAM not usable: 3072 MiB above 0x100000000'
expect '^memcheck: [0-9]+ words written, 0 read back wrong$'
echo "all good"
