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
grep -q '^virtio-net: offloads tx-csum off rx-csum off tx-tso4 off rx-tso4 off;' "$BULK_TMP/console" ||
	fail "an offload was negotiated on user networking"
expect_counter "net: offloads" "tx csum" -eq 0
expect_counter "net: offloads" "tx gso frames" -eq 0
expect_counter "net: offloads" "rx csum skipped" -eq 0
expect_counter "lwip tcp" "chkerr" -eq 0
echo "all good"
