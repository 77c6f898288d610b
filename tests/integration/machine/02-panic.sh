#!/usr/bin/env bash
# A page fault prints a readable panic (vector, error code, RIP, CR2,
# registers, a symbolized backtrace through the app into the kernel) and ends
# QEMU with the panic status, 70.
. "$(dirname "$0")/../lib/boot.sh"

boot "$HELLO" -- 'quiet -- --fault'
expect_rc 70
expect '^reading address 0x8$'
expect '^panic: page fault \(vector 14\), error code 0x0$'
expect '^  rip 0x[0-9a-f]{16} fault_deliberately\+0x[0-9a-f]+  cr2 0x0000000000000008$'
expect '^  rax 0x[0-9a-f]{16} rbx'
expect '^  r12 0x[0-9a-f]{16} r13'
expect '^backtrace:$'
expect '^  #0  0x[0-9a-f]+ fault_deliberately\+'
expect '^  #1  0x[0-9a-f]+ main\+'
expect '^  #2  0x[0-9a-f]+ kernel_main\+'
expect_not '^read '

# abort() raises SIGABRT: reported, and the same failure status.
boot "$HELLO" -- 'quiet -- --abort'
expect_rc 70
expect '^kernel: killed by signal 6$'

# Hardening: the stack protector catches an overrun local array when the
# function returns (a panic whose backtrace names the function; the frames
# above it are garbage by then); _FORTIFY_SOURCE's checked memset catches one
# before it happens.
boot "$HELLO" -- 'quiet -- --smash'
expect_rc 70
expect '^panic: stack smashing detected$'
expect '^  #[0-9]+ +0x[0-9a-f]+ smash_stack\+' "(the backtrace names the smashed function)"
expect '^smashed 64 bytes into 8$' "(the overrun itself goes unnoticed until the return)"

boot "$HELLO" -- 'quiet -- --overflow'
expect_rc 70
expect 'buffer overflow detected'
expect_not '^overflowed'

# W^X: code is not writable (a write is a protection fault, error 0x3), data
# is not executable (an instruction fetch fault, error 0x11).
boot "$HELLO" -- 'quiet -- --write-text'
expect_rc 70
expect '^panic: page fault \(vector 14\), error code 0x3$'
expect '^  rip 0x[0-9a-f]{16} write_text\+0x[0-9a-f]+  cr2 0x[0-9a-f]{16}$'
expect_not '^wrote to code'

boot "$HELLO" -- 'quiet -- --exec-data'
expect_rc 70
expect '^panic: page fault \(vector 14\), error code 0x11$'
expect_not '^ran data'

# The boot stack's guard page: unbounded recursion faults there, and the
# handler (on its own stack) still reports it.
boot "$HELLO" -- 'quiet -- --recurse'
expect_rc 70
expect '^panic: page fault \(vector 14\), error code 0x2$'
expect '^  rip 0x[0-9a-f]{16} recurse\+'
