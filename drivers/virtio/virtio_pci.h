/*
 * virtio_pci.h: the virtio 1.x PCI transport (spec section 4.1): the vendor
 * capabilities that locate the common configuration, notification, ISR and
 * device configuration structures; the status handshake; feature
 * negotiation; queue set-up with MSI-X vectors; and notifications.
 */
#ifndef VIRTIO_PCI_H
#define VIRTIO_PCI_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/kernel.h"
#include "virtqueue.h"

#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER      2
#define VIRTIO_STATUS_DRIVER_OK   4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_NEEDS_RESET 64
#define VIRTIO_STATUS_FAILED      128

#define VIRTIO_F_RING_EVENT_IDX 29
#define VIRTIO_F_VERSION_1      32
#define VIRTIO_MSI_NO_VECTOR    0xffff

struct virtio_pci {
	struct pci_dev *pci;             /* the PCI function */
	volatile uint8_t *common;        /* common configuration structure */
	volatile uint8_t *notify_base;   /* notification structure */
	uint32_t notify_len;             /* length of the notification structure */
	uint32_t notify_multiplier;      /* bytes between queues' notify addresses */
	volatile uint8_t *isr;           /* ISR status (INTx only) */
	volatile uint8_t *device_cfg;    /* device-specific configuration */
	uint32_t device_cfg_len;         /* its length */
	uint64_t offered;                /* feature bits the device offered */
	uint64_t features;               /* negotiated feature bits */
};

/* Map the structures of a virtio PCI function. 0, or -1 with a message. */
int virtio_pci_probe(struct virtio_pci *vp, struct pci_dev *pci);
/* Reset, ACKNOWLEDGE, DRIVER, negotiate (what choose() picks of the offered
 * features, so one can depend on another; `required` must all be offered),
 * FEATURES_OK and its re-read. 0, or -1 after marking the device FAILED with
 * a message. */
int virtio_pci_negotiate(struct virtio_pci *vp, uint64_t (*choose)(uint64_t offered), uint64_t required);
/* Queue size the device offers for queue q (0: no such queue). */
uint16_t virtio_pci_queue_size(struct virtio_pci *vp, uint16_t q);
/* Tell the device about a set-up virtqueue, bound to MSI-X entry `msix`
 * (VIRTIO_MSI_NO_VECTOR for none), and enable it. 0 or -1. */
int virtio_pci_queue_enable(struct virtio_pci *vp, struct virtqueue *vq, uint16_t msix);
/* Configuration-change interrupts on MSI-X entry `msix`. 0 or -1. */
int virtio_pci_config_vector(struct virtio_pci *vp, uint16_t msix);
void virtio_pci_driver_ok(struct virtio_pci *vp);
void virtio_pci_fail(struct virtio_pci *vp, const char *why);
void virtio_pci_notify(struct virtqueue *vq);
/* Read a device register for its side effect on ordering: the exit to the
 * hypervisor (under QEMU's TCG, its global lock) makes our earlier stores
 * visible before our later loads even where a guest fence is not. */
void virtio_pci_barrier(struct virtio_pci *vp);
uint8_t virtio_pci_status(struct virtio_pci *vp);

#endif
