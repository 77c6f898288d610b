#!/usr/bin/env bash
# 56-linux-guest-tap: boot the Linux guest (Debian kernel + our init and httpd)
# on the `tap` back-end and fetch through it: GET / byte for byte, a short ab -k
# and ab run, then GET /__shutdown, which must end QEMU with the app's status 0
# (init -> isa-debug-exit -> qemu-run).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
linux_guest_check tap
