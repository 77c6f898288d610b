#!/usr/bin/env bash
# hello prints its argv (quoting and `--` applied by the kernel's command
# line), the wall-clock time, and exits with the status it was asked for.
. "$(dirname "$0")/../lib/boot.sh"

boot "$HELLO" -- 'quiet -- -e 42 "two words" plain'
expect_rc 42
expect '^argv\[0\] = "hello"$'
expect '^argv\[1\] = "-e"$'
expect '^argv\[3\] = "two words"$'
expect '^argv\[4\] = "plain"$'
expect_not '^argv\[5\]'
expect_not '^kernel: uptime' "(quiet suppresses the shutdown counters)"
# The RTC-derived date is today's, give or take a day at midnight.
today=$(date -u +%Y-%m-%d)
yesterday=$(date -u -d yesterday +%Y-%m-%d)
expect "^time: ($today|$yesterday) [0-9]{2}:[0-9]{2}:[0-9]{2} UTC$"
expect '^exit 42$'

boot "$HELLO" -- '-- -s 1'
expect_rc 0
expect '^kernel: uptime [0-9]+ ms; interrupts' "(counters at shutdown)"
