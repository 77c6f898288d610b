/*
 * vnet_host.h: what tests/unit/vnet_host.c offers the virtio-net driver
 * tests besides the kernel's stand-ins.
 */
#ifndef TESTS_UNIT_VNET_HOST_H
#define TESTS_UNIT_VNET_HOST_H

#include <stdint.h>

/* The driver brought up over the simulated device offering `offloads`
 * (dev_offer's bits), its receive interrupt off: once per test binary, so
 * a cmocka setup may call it before every test. */
void vnet_host_start(uint64_t offloads);

#endif
