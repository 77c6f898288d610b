#!/usr/bin/env bash
# The machines users boot with: other QEMU machine types and CPU models, a
# second CPU (left parked: the kernel runs on the boot CPU only), the
# smallest and a large memory, guest RAM in a memfd. Each boots hello
# (argv, a sleep, its exit status through the exit line) and serves httpd
# over user networking (GET / byte for byte, then /__shutdown and exit
# status 0). Extra QEMU arguments go after qemu-run's own, and a later -cpu
# or -machine wins (an -smp merges into qemu-run's -smp 1). A CPU model TCG cannot fully give
# (EPYC) prints warnings on stderr; the statuses are still the app's.
. "$(dirname "$0")/../lib/boot.sh"
. "$(dirname "$0")/../lib/machine.sh"

configs=(
	"q35|-machine q35|"
	"cpu max|-cpu max|"
	"cpu qemu64 (no extra flags)|-cpu qemu64|"
	"cpu EPYC|-cpu EPYC|"
	"cpu Skylake-Client|-cpu Skylake-Client|"
	"smp 2|-smp 2|"
	"16 MiB||--mem 16M"
	"16 MiB in a memfd||--mem 16M --mem-backend memfd"
	"6 GiB||--mem 6G"
	"q35, 6 GiB, 2 CPUs|-machine q35 -smp 2|--mem 6G"
)
for c in "${configs[@]}"; do
	IFS='|' read -r name extra opts <<<"$c"
	echo "== $name"
	QEMU_EXTRA=$extra boot "$HELLO" $opts -- 'verbose -- -e 3 -s 20 matrix'
	expect_rc 3
	expect '^argv\[1\] = "-e"$'
	expect '^slept 20 ms: [0-9]+ ms passed$'
	expect '^kernel: CPU .*; hypervisor (TCG|KVM);'
	expect '^kernel: exit status 3$'
	QEMU_EXTRA=$extra serve "$HTTPD" $opts -- quiet
	expect_rc 0
done
echo "all good"
