/*
 * test_vnet_offload_none.c: test_vnet_offload.c against a device that offers
 * no offload (as QEMU's user networking): every flag or gso_type in a
 * received header is a bad header, every offload asked of vnet_tx is
 * refused, and plain frames go through as before.
 */
#define OFFER 0
#include "test_vnet_offload.c"
