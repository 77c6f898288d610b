#!/usr/bin/env bash
# costs.sh: the cost image (bench/images/costs.c) under KVM, run in the
# nested-KVM host by the costs workload (bench/run costs): REPS boots, each printing its "cost:"
# lines between "costs-run N" and "costs-end" marks.
#
#   costs.sh REPS ROUNDS
. "$ROOT/tools/nested/scenario-lib.sh"
cd "$ROOT"
reps=$1 rounds=$2
for rep in $(seq 1 "$reps"); do
	echo "costs-run $rep"
	ACCEL=kvm tools/qemu-run --net user --timeout 300 --append "quiet -- $rounds" \
		"$LOADER" build/apps/costs.elf </dev/null 2>&1 | tr -d '\r' | grep -E '^costs?: '
	echo "costs-end"
done
