/*
 * virtio_mmio.h: the virtio 1.x MMIO transport (spec section 4.2), version 2
 * (modern) only: the register window's identity checks, status, features
 * through their select registers, queue set-up, the device configuration at
 * 0x100 under its generation counter, and the interrupt status of the
 * window's one interrupt line. Drivers use virtio_dev.h, not this.
 *
 * Every value read from the window is the device's (the VMM's) and is
 * checked before it is used: identity, queue sizes, status, generation.
 */
#ifndef VIRTIO_MMIO_H
#define VIRTIO_MMIO_H

#include <stdbool.h>
#include <stdint.h>
#include "virtqueue.h"

#define VIRTIO_MMIO_MAGIC   0x74726976 /* "virt", little-endian */
#define VIRTIO_MMIO_CONFIG  0x100      /* the device configuration starts here */
#define VIRTIO_MMIO_STATUS  0x070      /* the device status register */
/* Interrupt status bits. */
#define VIRTIO_MMIO_INT_VRING  1 /* used buffers on some queue */
#define VIRTIO_MMIO_INT_CONFIG 2 /* the device configuration changed */

struct virtio_mmio {
	volatile uint8_t *regs;   /* the window, mapped uncached */
	uint64_t base;            /* its physical address (for messages) */
	uint32_t size;            /* its length: registers and device configuration */
	unsigned irq;             /* its interrupt line's I/O APIC input */
	uint32_t device_id;       /* the device type behind it (VIRTIO_ID_*) */
	char name[32];            /* "virtio-mmio@0x...", for messages */
};

/* Check the window at `regs` (already mapped, `size` bytes, at least
 * VIRTIO_MMIO_CONFIG): magic, version 2 (a legacy version 1 is refused with
 * what to tell QEMU), a device behind it. 0 with vm filled, or -1 with a
 * message. */
int virtio_mmio_probe(struct virtio_mmio *vm, volatile uint8_t *regs, uint64_t base, uint32_t size,
		      unsigned irq);
uint8_t virtio_mmio_status(struct virtio_mmio *vm);
void virtio_mmio_set_status(struct virtio_mmio *vm, uint8_t status);
/* 32 feature bits from bit 32 * sel: the device's offer, and our choice. */
uint32_t virtio_mmio_device_features(struct virtio_mmio *vm, uint32_t sel);
void virtio_mmio_driver_features(struct virtio_mmio *vm, uint32_t sel, uint32_t bits);
/* The largest size queue q may have (QueueNumMax; 0: no such queue). */
uint16_t virtio_mmio_queue_size(struct virtio_mmio *vm, uint16_t q);
/* Give the device a set-up virtqueue (its size, the three ring addresses)
 * and make it ready. 0, or -1 with the reason in *why. */
int virtio_mmio_queue_enable(struct virtio_mmio *vm, struct virtqueue *vq, const char **why);
uint32_t virtio_mmio_config_generation(struct virtio_mmio *vm);
/* Bytes of device configuration the window holds. */
uint32_t virtio_mmio_config_len(const struct virtio_mmio *vm);
/* Read the interrupt status and acknowledge what it shows (the line drops
 * once nothing is left unacknowledged); returns what it showed. */
uint32_t virtio_mmio_irq_take(struct virtio_mmio *vm);

#endif
