#!/usr/bin/env bash
# Offloads on the tap back-end (issue 14): QEMU offers checksum and TCP
# segmentation offloads both ways and the driver takes them all. Two streams
# each of 4 MiB sunk, sourced and echoed through tests/images/bulk arrive
# byte for byte; and the counters show the offloads did the work: TCP
# checksums left to the device, segment runs sent as frames the host cut
# up, merged segments received in several buffers, received checksums
# vouched for and not recomputed, no bad header, no checksum error in lwIP.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
LOADER=${LOADER:-$ROOT/$BUILD/loader/loader.elf}
. "$ROOT/tests/integration/lib/bulk.sh"
bulk_boot tap "" $((4 << 20)) 2
expect_offloads "tx-csum on rx-csum on tx-tso4 on rx-tso4 on" "not every offload was negotiated"
expect_counter "net: offloads" "tx csum" -gt 100
expect_counter "net: offloads" "tx gso frames" -gt 100
expect_counter "net: offloads" "unhandled" -eq 0
expect_counter "net: offloads" "rx csum skipped" -gt 100
expect_counter "net: offloads" "rx gso" -gt 100
expect_counter "virtio-net: offloads" "rx multi-buffer" -gt 100
expect_counter "virtio-net: rx" "bad header" -eq 0
expect_counter "virtio-net: rx" "merged" -eq 0
expect_counter "virtio-net: rx" "bad offload" -eq 0
expect_counter "lwip tcp" "chkerr" -eq 0
echo "all good"
