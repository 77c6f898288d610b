#!/usr/bin/env bash
# TCP recovers from loss with the offloads on (issue 14). This host's kernel
# has no netem, so the driver drops frames itself (fault injection: kernel
# options vnet_drop_rx=50 and vnet_drop_tx=50, one in 50 frames each way;
# a dropped frame the host was to cut into segments loses them all). A
# stream of 1 MiB each of sink, source and echo still arrives byte for byte,
# with frames dropped both ways and segment runs sent throughout.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
LOADER=${LOADER:-$ROOT/$BUILD/loader/loader.elf}
. "$ROOT/tests/integration/lib/bulk.sh"
bulk_boot tap "vnet_drop_rx=50 vnet_drop_tx=50" $((1 << 20)) 1
expect_counter "virtio-net: rx" "injected rx" -gt 5
grep -Eq 'injected rx [0-9]+ tx [1-9][0-9]*;' "$BULK_TMP/console" || fail "no transmitted frame was dropped"
expect_counter "net: offloads" "tx gso frames" -gt 10
expect_counter "net: offloads" "rx gso" -gt 10
echo "all good"
