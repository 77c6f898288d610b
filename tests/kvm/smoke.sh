#!/usr/bin/env bash
# smoke.sh: hello under KVM in L1.
set -uo pipefail
cd "$ROOT"
grep -m1 -o 'svm' /proc/cpuinfo
ACCEL=kvm bench/qemu-run --append "verbose -- -e 5 -s 0" build/loader/loader.elf build/apps/hello.elf
echo "hello: status $?"
exit 0
