#!/usr/bin/env bash
# Offloads refused on the tap back-end (issue 14), by kernel option: with
# vnet_offload=0 the driver takes none of what QEMU offers, with
# vnet_offload=csum only the checksum offloads. The same transfers as test 16
# arrive byte for byte either way, and the counters show what was not used
# was not used (lwIP then computes and checks every checksum itself).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
LOADER=${LOADER:-$ROOT/$BUILD/loader/loader.elf}
. "$ROOT/tests/integration/lib/bulk.sh"

echo "== vnet_offload=0"
bulk_boot tap vnet_offload=0 $((2 << 20)) 2
expect_no_offloads "an offload was negotiated against vnet_offload=0"

echo "== vnet_offload=csum"
bulk_boot tap vnet_offload=csum $((2 << 20)) 2
expect_offloads "tx-csum on rx-csum on tx-tso4 off rx-tso4 off" "vnet_offload=csum did not give the checksum offloads alone"
expect_counter "net: offloads" "tx csum" -gt 100
expect_counter "net: offloads" "rx csum skipped" -gt 100
expect_counter "net: offloads" "tx gso frames" -eq 0
expect_counter "net: offloads" "rx gso" -eq 0
expect_counter "lwip tcp" "chkerr" -eq 0
echo "all good"
