#!/usr/bin/env bash
# A 100 ms sleep lasts at least 100 ms of guest time (and not absurdly more),
# parks the CPU on the LAPIC timer instead of spinning, and reprograms it once.
. "$(dirname "$0")/lib.sh"

boot "$HELLO" -- '-- -s 100'
expect_rc 0
line=$(printf '%s\n' "$OUT" | grep -E '^slept 100 ms: [0-9]+ ms passed$') || fail "no sleep line"
ms=$(echo "$line" | sed -E 's/.*: ([0-9]+) ms passed/\1/')
[ "$ms" -ge 100 ] || fail "slept only $ms ms"
[ "$ms" -lt 2000 ] || fail "slept $ms ms for 100"
parks=$(printf '%s\n' "$OUT" | sed -nE 's/.*; parks ([0-9]+);.*/\1/p')
[ -n "$parks" ] && [ "$parks" -ge 1 ] || fail "the sleep never parked the CPU"
timer=$(printf '%s\n' "$OUT" | sed -nE 's/.*timer ([0-9]+)\);.*/\1/p')
[ -n "$timer" ] && [ "$timer" -ge 1 ] || fail "no LAPIC timer interrupt woke the sleep"
