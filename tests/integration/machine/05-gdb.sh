#!/usr/bin/env bash
# `make debug`'s recipe works: QEMU waits on a gdb stub, gdb attaches with the
# image's symbols, stops at kernel_main and shows a backtrace.
. "$(dirname "$0")/../lib/boot.sh"
command -v gdb >/dev/null || { echo "gdb not installed"; exit 77; }
port=$((20000 + RANDOM % 20000))
log=$(mktemp)
trap 'kill "$qemu" 2>/dev/null; rm -f "$log"' EXIT

"$QEMU_RUN" --timeout 60 --accel tcg --gdb "$port" --append "quiet -- -s 1" "$LOADER" "$HELLO" >"$log" 2>&1 &
qemu=$!
for _ in $(seq 50); do
	ss -ltn 2>/dev/null | contains ":$port " && break
	sleep 0.1
done
OUT=$(timeout 60 gdb -nx -batch -ex "target remote 127.0.0.1:$port" -ex 'hbreak kernel_main' \
	-ex continue -ex bt -ex 'print/x bi->magic' -ex kill "$HELLO" 2>&1)
RC=$?
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect 'Breakpoint 1, kernel_main \(bi=0x[0-9a-f]+' "(stopped in kernel_main with its argument)"
expect '^#0  kernel_main'
expect '^\$1 = 0x554b424f4f54$' "(bootinfo magic read through symbols)"
