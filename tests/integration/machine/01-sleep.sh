#!/usr/bin/env bash
# A 100 ms sleep lasts at least 100 ms of guest time (and not absurdly more),
# parks the CPU on the LAPIC timer instead of spinning, and programs that
# one-shot timer for the sleep's deadline: at least once, at most once per
# park (a timer that fires a little early makes the sleep park and program it
# again), and a few times in all, not once per tick (a 1 kHz tick would be
# 100). Read from the counters the kernel prints at exit: "parks N; timer
# reloads N (skipped N)" (kernel/stats.c, kernel/timer.c's arm()) and the
# timer interrupts.
. "$(dirname "$0")/../lib/boot.sh"

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
reloads=$(printf '%s\n' "$OUT" | sed -nE 's/.*; timer reloads ([0-9]+) \(skipped [0-9]+\);.*/\1/p')
[ -n "$reloads" ] || fail "no timer reload counter at exit"
[ "$reloads" -ge 1 ] || fail "the LAPIC timer was never programmed for the sleep"
[ "$reloads" -le "$parks" ] || fail "the timer was programmed $reloads times for $parks parks"
[ "$reloads" -le 5 ] || fail "the timer was programmed $reloads times for one 100 ms sleep"
[ "$timer" -le "$reloads" ] || fail "$timer timer interrupts from $reloads one-shot programmings"
