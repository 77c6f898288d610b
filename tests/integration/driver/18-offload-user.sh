#!/usr/bin/env bash
# User networking (issue 14): QEMU's slirp offers no checksum or
# segmentation offload, so everything falls back: the same transfers as test
# 16, through forwarded ports, arrive byte for byte with every offload off
# and lwIP computing and checking every checksum.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
LOADER=${LOADER:-$ROOT/$BUILD/loader/loader.elf}
. "$ROOT/tests/integration/lib/bulk.sh"
bulk_boot user "" $((2 << 20)) 2
expect_no_offloads "an offload was negotiated on user networking"
echo "all good"
