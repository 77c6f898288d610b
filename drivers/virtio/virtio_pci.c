/*
 * virtio_pci.c: the virtio 1.x PCI transport (see virtio_pci.h). Only the
 * modern interface: the device must be started with disable-legacy=on or
 * offer VERSION_1 through its vendor capabilities.
 */
#include "virtio_pci.h"

#define PCI_CAP_VENDOR 0x09
enum { CFG_COMMON = 1, CFG_NOTIFY = 2, CFG_ISR = 3, CFG_DEVICE = 4 };

/* Offsets in the common configuration structure (spec 4.1.4.3). */
#define COMMON_DFSELECT   0x00
#define COMMON_DF         0x04
#define COMMON_GFSELECT   0x08
#define COMMON_GF         0x0c
#define COMMON_MSIX       0x10
#define COMMON_NUMQ       0x12
#define COMMON_STATUS     0x14
#define COMMON_Q_SELECT   0x16
#define COMMON_Q_SIZE     0x18
#define COMMON_Q_MSIX     0x1a
#define COMMON_Q_ENABLE   0x1c
#define COMMON_Q_NOFF     0x1e
#define COMMON_Q_DESC     0x20
#define COMMON_Q_DRIVER   0x28
#define COMMON_Q_DEVICE   0x30

static inline uint8_t rd8(struct virtio_pci *vp, int off) { return *(volatile uint8_t *)(vp->common + off); }
static inline uint16_t rd16(struct virtio_pci *vp, int off) { return *(volatile uint16_t *)(vp->common + off); }
static inline uint32_t rd32(struct virtio_pci *vp, int off) { return *(volatile uint32_t *)(vp->common + off); }
static inline void wr8(struct virtio_pci *vp, int off, uint8_t v) { *(volatile uint8_t *)(vp->common + off) = v; }
static inline void wr16(struct virtio_pci *vp, int off, uint16_t v) { *(volatile uint16_t *)(vp->common + off) = v; }
static inline void wr32(struct virtio_pci *vp, int off, uint32_t v) { *(volatile uint32_t *)(vp->common + off) = v; }
static inline void wr64(struct virtio_pci *vp, int off, uint64_t v)
{
	wr32(vp, off, (uint32_t)v);
	wr32(vp, off + 4, (uint32_t)(v >> 32));
}

/* Map the region a vendor capability describes; NULL if it does not fit its BAR. */
static volatile uint8_t *map_cap(struct pci_dev *pci, uint8_t cap, uint32_t *len)
{
	uint8_t bar = pci_read8(pci, cap + 4);
	uint32_t offset = pci_read32(pci, cap + 8), length = pci_read32(pci, cap + 12);
	uint64_t size, base = bar < 6 ? pci_bar(pci, bar, &size) : 0;
	if (!base || offset > size || length > size - offset)
		return NULL;
	if (len)
		*len = length;
	return mmio_map(base + offset, length ? length : 1);
}

int virtio_pci_probe(struct virtio_pci *vp, struct pci_dev *pci)
{
	*vp = (struct virtio_pci){ .pci = pci };
	for (uint8_t cap = pci_find_cap(pci, PCI_CAP_VENDOR, 0); cap;
	     cap = pci_find_cap(pci, PCI_CAP_VENDOR, cap)) {
		switch (pci_read8(pci, cap + 3)) {
		case CFG_COMMON:
			if (!vp->common)
				vp->common = map_cap(pci, cap, NULL);
			break;
		case CFG_NOTIFY:
			if (!vp->notify_base) {
				vp->notify_base = map_cap(pci, cap, &vp->notify_len);
				vp->notify_multiplier = pci_read32(pci, cap + 16);
			}
			break;
		case CFG_ISR:
			if (!vp->isr)
				vp->isr = map_cap(pci, cap, NULL);
			break;
		case CFG_DEVICE:
			if (!vp->device_cfg)
				vp->device_cfg = map_cap(pci, cap, &vp->device_cfg_len);
			break;
		}
	}
	if (!vp->common || !vp->notify_base || !vp->device_cfg) {
		kprintf("virtio: %02x:%02x.%u has no modern capabilities (start it with disable-legacy=on)\n",
			pci->bus, pci->dev, pci->fn);
		return -1;
	}
	pci_enable_bus_master(pci);
	return 0;
}

uint8_t virtio_pci_status(struct virtio_pci *vp) { return rd8(vp, COMMON_STATUS); }

void virtio_pci_fail(struct virtio_pci *vp, const char *why)
{
	kprintf("virtio: %02x:%02x.%u failed: %s\n", vp->pci->bus, vp->pci->dev, vp->pci->fn, why);
	wr8(vp, COMMON_STATUS, (uint8_t)(rd8(vp, COMMON_STATUS) | VIRTIO_STATUS_FAILED));
}

int virtio_pci_negotiate(struct virtio_pci *vp, uint64_t (*choose)(uint64_t offered), uint64_t required)
{
	wr8(vp, COMMON_STATUS, 0); /* reset; the device reads back 0 when done */
	for (int i = 0; rd8(vp, COMMON_STATUS) != 0; i++) {
		if (i == 1000000) {
			virtio_pci_fail(vp, "reset did not complete");
			return -1;
		}
		__asm__ volatile("pause");
	}
	wr8(vp, COMMON_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
	wr8(vp, COMMON_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);

	wr32(vp, COMMON_DFSELECT, 0);
	uint64_t offered = rd32(vp, COMMON_DF);
	wr32(vp, COMMON_DFSELECT, 1);
	offered |= (uint64_t)rd32(vp, COMMON_DF) << 32;
	if ((offered & required) != required) {
		char why[96];
		ksnprintf(why, sizeof why, "required features 0x%lx not offered (device offers 0x%lx)",
			  required & ~offered, offered);
		virtio_pci_fail(vp, why);
		return -1;
	}
	vp->offered = offered;
	vp->features = offered & (choose(offered) | required);
	wr32(vp, COMMON_GFSELECT, 0);
	wr32(vp, COMMON_GF, (uint32_t)vp->features);
	wr32(vp, COMMON_GFSELECT, 1);
	wr32(vp, COMMON_GF, (uint32_t)(vp->features >> 32));
	wr8(vp, COMMON_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
	if (!(rd8(vp, COMMON_STATUS) & VIRTIO_STATUS_FEATURES_OK)) {
		virtio_pci_fail(vp, "device refused the negotiated features");
		return -1;
	}
	return 0;
}

uint16_t virtio_pci_queue_size(struct virtio_pci *vp, uint16_t q)
{
	if (q >= rd16(vp, COMMON_NUMQ))
		return 0;
	wr16(vp, COMMON_Q_SELECT, q);
	return rd16(vp, COMMON_Q_SIZE);
}

int virtio_pci_queue_enable(struct virtio_pci *vp, struct virtqueue *vq, uint16_t msix)
{
	wr16(vp, COMMON_Q_SELECT, vq->index);
	wr16(vp, COMMON_Q_SIZE, vq->size);
	wr16(vp, COMMON_Q_MSIX, msix);
	if (rd16(vp, COMMON_Q_MSIX) != msix) {
		virtio_pci_fail(vp, "device refused a queue's MSI-X vector");
		return -1;
	}
	uint32_t doorbell = (uint32_t)rd16(vp, COMMON_Q_NOFF) * vp->notify_multiplier;
	if (doorbell + 2 > vp->notify_len) {
		virtio_pci_fail(vp, "queue notify offset outside the notify region");
		return -1;
	}
	vq->notify = (volatile uint16_t *)(vp->notify_base + doorbell);
	wr64(vp, COMMON_Q_DESC, (uint64_t)vq->desc);
	wr64(vp, COMMON_Q_DRIVER, (uint64_t)vq->avail);
	wr64(vp, COMMON_Q_DEVICE, (uint64_t)vq->used);
	wr16(vp, COMMON_Q_ENABLE, 1);
	return 0;
}

int virtio_pci_config_vector(struct virtio_pci *vp, uint16_t msix)
{
	wr16(vp, COMMON_MSIX, msix);
	return rd16(vp, COMMON_MSIX) == msix ? 0 : -1;
}

void virtio_pci_driver_ok(struct virtio_pci *vp)
{
	wr8(vp, COMMON_STATUS, (uint8_t)(rd8(vp, COMMON_STATUS) | VIRTIO_STATUS_DRIVER_OK));
}

void virtio_pci_barrier(struct virtio_pci *vp)
{
	(void)rd8(vp, COMMON_STATUS); /* no side effect on the device */
}

void virtio_pci_notify(struct virtqueue *vq)
{
	*vq->notify = vq->index; /* one MMIO write: the doorbell found at set-up */
}
