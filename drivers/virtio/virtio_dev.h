/*
 * virtio_dev.h: one virtio 1.x device, whatever carries it: the PCI
 * transport (virtio_pci.c, the PC machine) or the MMIO transport
 * (virtio_mmio.c, QEMU's microvm and Firecracker). A device driver
 * (virtio_net.c) uses only this interface and knows neither.
 *
 * Set-up goes through the transport's registers on both (virtio_dev.c
 * switches on the transport); the per-packet path does not: a virtqueue
 * keeps the address of its doorbell and the width of the store it takes,
 * found at set-up, so virtio_notify() is one store for either transport.
 */
#ifndef VIRTIO_DEV_H
#define VIRTIO_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/kernel.h"
#include "virtio_mmio.h"
#include "virtio_pci.h"
#include "virtqueue.h"

#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER      2
#define VIRTIO_STATUS_DRIVER_OK   4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_NEEDS_RESET 64
#define VIRTIO_STATUS_FAILED      128

#define VIRTIO_F_RING_EVENT_IDX 29
#define VIRTIO_F_VERSION_1      32

/* Device types (virtio spec 5). */
#define VIRTIO_ID_NET 1

enum virtio_transport { VIRTIO_TRANSPORT_PCI, VIRTIO_TRANSPORT_MMIO };

/* Interrupt sources a driver binds handlers to (virtio_bind_irqs). On PCI
 * each is an MSI-X table entry; on MMIO all share the window's one line, and
 * its interrupt status register says which fired. */
#define VIRTIO_IRQ_CONFIG 0 /* the device configuration changed */
#define VIRTIO_IRQ_QUEUE0 1 /* queue q's used buffers: VIRTIO_IRQ_QUEUE0 + q */
#define VIRTIO_IRQ_MAX    3 /* sources a driver may bind: config and two queues */

struct virtio_dev {
	enum virtio_transport transport; /* which of the two below is live */
	struct virtio_pci pci;           /* the PCI transport's state */
	struct virtio_mmio mmio;         /* the MMIO transport's state */
	uint64_t offered;                /* feature bits the device offered */
	uint64_t features;               /* negotiated feature bits */
	irq_handler_t irq_fn[VIRTIO_IRQ_MAX]; /* per source, as bound (MMIO dispatches to them) */
	int nirqs;                       /* sources bound */
};

/* Find the first device of `type` (VIRTIO_ID_*): a modern PCI function
 * first, then the virtio-mmio windows the command line announced (kernel/
 * mmio_windows.h), each probed in turn. 0, or -1 when there is none (each
 * window refused says why). */
int virtio_find(struct virtio_dev *vd, uint32_t type);
/* What a message calls the device ("virtio 00:03.0", "virtio-mmio@0xfeb00e00"). */
const char *virtio_name(const struct virtio_dev *vd);

/* Interrupts for `nirqs` sources (VIRTIO_IRQ_*), before negotiation (PCI:
 * MSI-X must be on before a queue names a vector). 0, or -1 after marking
 * the device FAILED with a message. */
int virtio_irqs_prepare(struct virtio_dev *vd, int nirqs);
/* Reset, ACKNOWLEDGE, DRIVER, negotiate (what choose() picks of the offered
 * features, so one can depend on another; `required` must all be offered),
 * FEATURES_OK and its re-read. 0, or -1 after marking the device FAILED with
 * a message. */
int virtio_negotiate(struct virtio_dev *vd, uint64_t (*choose)(uint64_t offered), uint64_t required);
/* Queue size the device offers for queue q (0: no such queue). */
uint16_t virtio_queue_size(struct virtio_dev *vd, uint16_t q);
/* Tell the device about a set-up virtqueue, its interrupts on source
 * VIRTIO_IRQ_QUEUE0 + vq->index, and enable it. 0, or -1 after marking the
 * device FAILED with a message. */
int virtio_queue_enable(struct virtio_dev *vd, struct virtqueue *vq);
/* Bind handler fn[i] to source i (VIRTIO_IRQ_*) for the `n` sources
 * prepared; they run in interrupt context and must be short. 0, or -1 after
 * marking the device FAILED with a message. */
int virtio_bind_irqs(struct virtio_dev *vd, const irq_handler_t *fn, int n);
/* The bound interrupts to the calling CPU from now on (the network's CPU of
 * the global-lock design); -1 when the line could not be moved. */
int virtio_route_irqs_here(struct virtio_dev *vd);
/* DRIVER_OK, then the status read back: 0, or -1 when the device says it
 * needs a reset or failed. */
int virtio_driver_ok(struct virtio_dev *vd);
void virtio_fail(struct virtio_dev *vd, const char *why);
/* Copy len bytes of the device configuration from offset off, consistent
 * (the configuration generation unchanged across the copy). 0, or -1 when
 * the range lies outside it or the generation never settles. */
int virtio_config_read(struct virtio_dev *vd, uint32_t off, void *buf, uint32_t len);

/* Notify the device of new buffers on vq: one store of the queue index to
 * the doorbell virtio_queue_enable found. */
void virtio_notify(struct virtqueue *vq);
/* Read a device register for its side effect on ordering: the exit to the
 * hypervisor (under QEMU's TCG, its global lock) makes our earlier stores
 * visible before our later loads even where a guest fence is not. */
void virtio_barrier(struct virtio_dev *vd);

#endif
