/*
 * virtio_pci.c: the virtio 1.x PCI transport (see virtio_pci.h). Only the
 * modern interface: the device must be started with disable-legacy=on or
 * offer VERSION_1 through its vendor capabilities. The handshake that uses
 * these registers is virtio_dev.c's, shared with the MMIO transport.
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
#define COMMON_STATUS     VIRTIO_PCI_COMMON_STATUS
#define COMMON_CFGGEN     0x15
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
	ksnprintf(vp->name, sizeof vp->name, "virtio %02x:%02x.%u", pci->bus, pci->dev, pci->fn);
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
		kprintf("%s: no modern capabilities (start it with disable-legacy=on)\n", vp->name);
		return -1;
	}
	pci_enable_bus_master(pci);
	return 0;
}

uint8_t virtio_pci_status(struct virtio_pci *vp) { return rd8(vp, COMMON_STATUS); }
void virtio_pci_set_status(struct virtio_pci *vp, uint8_t status) { wr8(vp, COMMON_STATUS, status); }
uint8_t virtio_pci_config_generation(struct virtio_pci *vp) { return rd8(vp, COMMON_CFGGEN); }

uint32_t virtio_pci_device_features(struct virtio_pci *vp, uint32_t sel)
{
	wr32(vp, COMMON_DFSELECT, sel);
	return rd32(vp, COMMON_DF);
}

void virtio_pci_driver_features(struct virtio_pci *vp, uint32_t sel, uint32_t bits)
{
	wr32(vp, COMMON_GFSELECT, sel);
	wr32(vp, COMMON_GF, bits);
}

uint16_t virtio_pci_queue_size(struct virtio_pci *vp, uint16_t q)
{
	if (q >= rd16(vp, COMMON_NUMQ))
		return 0;
	wr16(vp, COMMON_Q_SELECT, q);
	return rd16(vp, COMMON_Q_SIZE);
}

int virtio_pci_queue_enable(struct virtio_pci *vp, struct virtqueue *vq, uint16_t msix, const char **why)
{
	wr16(vp, COMMON_Q_SELECT, vq->index);
	wr16(vp, COMMON_Q_SIZE, vq->size);
	wr16(vp, COMMON_Q_MSIX, msix);
	if (rd16(vp, COMMON_Q_MSIX) != msix) {
		*why = "device refused a queue's MSI-X vector";
		return -1;
	}
	/* Both factors are 16 and 32 bits: the product is taken in 64. */
	uint64_t doorbell = (uint64_t)rd16(vp, COMMON_Q_NOFF) * vp->notify_multiplier;
	if (doorbell + 2 > vp->notify_len) {
		*why = "queue notify offset outside the notify region";
		return -1;
	}
	vq->notify = vp->notify_base + doorbell;
	vq->notify_32 = false; /* the spec's 16-bit queue index (4.1.5.2) */
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
