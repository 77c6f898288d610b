/*
 * virtio_pci.h: the virtio 1.x PCI transport (spec section 4.1): the vendor
 * capabilities that locate the common configuration, notification, ISR and
 * device configuration structures, and the registers of the common
 * configuration that virtio_dev.c drives (status, features, queues, MSI-X
 * vectors). Drivers use virtio_dev.h, not this.
 */
#ifndef VIRTIO_PCI_H
#define VIRTIO_PCI_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/kernel.h"
#include "virtqueue.h"

#define VIRTIO_MSI_NO_VECTOR 0xffff
#define VIRTIO_PCI_COMMON_STATUS 0x14 /* device status, in the common configuration */

struct virtio_pci {
	struct pci_dev *pci;             /* the PCI function */
	volatile uint8_t *common;        /* common configuration structure */
	volatile uint8_t *notify_base;   /* notification structure */
	uint32_t notify_len;             /* length of the notification structure */
	uint32_t notify_multiplier;      /* bytes between queues' notify addresses */
	volatile uint8_t *isr;           /* ISR status (INTx only) */
	volatile uint8_t *device_cfg;    /* device-specific configuration */
	uint32_t device_cfg_len;         /* its length */
	char name[24];                   /* "virtio 00:03.0", for messages */
};

/* Map the structures of a virtio PCI function. 0, or -1 with a message. */
int virtio_pci_probe(struct virtio_pci *vp, struct pci_dev *pci);
uint8_t virtio_pci_status(struct virtio_pci *vp);
void virtio_pci_set_status(struct virtio_pci *vp, uint8_t status);
/* 32 feature bits from bit 32 * sel: the device's offer, and our choice. */
uint32_t virtio_pci_device_features(struct virtio_pci *vp, uint32_t sel);
void virtio_pci_driver_features(struct virtio_pci *vp, uint32_t sel, uint32_t bits);
/* Queue size the device offers for queue q (0: no such queue). */
uint16_t virtio_pci_queue_size(struct virtio_pci *vp, uint16_t q);
/* Tell the device about a set-up virtqueue, bound to MSI-X entry `msix`
 * (VIRTIO_MSI_NO_VECTOR for none), and enable it. 0, or -1 with the reason
 * in *why. */
int virtio_pci_queue_enable(struct virtio_pci *vp, struct virtqueue *vq, uint16_t msix, const char **why);
/* Configuration-change interrupts on MSI-X entry `msix`. 0 or -1. */
int virtio_pci_config_vector(struct virtio_pci *vp, uint16_t msix);
/* The device configuration's generation (changes with each update). */
uint8_t virtio_pci_config_generation(struct virtio_pci *vp);

#endif
