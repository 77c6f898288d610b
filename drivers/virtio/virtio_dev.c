/*
 * virtio_dev.c: one virtio device over either transport (see virtio_dev.h):
 * finding it, the status handshake and feature negotiation written once
 * over each transport's registers, queues, interrupts, the device
 * configuration, and the two per-packet operations, notify and the ordering
 * read.
 *
 * Interrupts. On PCI every source has its own MSI-X vector and handler. A
 * virtio-mmio window has one interrupt line, level-triggered, on an I/O APIC
 * input (microvm wires them so, and describes them so in its ACPI tables):
 * its one handler reads the interrupt status, acknowledges it (the device
 * lowers the line), and calls the handler bound to each source the status
 * shows, before the trap's EOI re-arms the input. The status does not say
 * which queue: a used-buffer interrupt goes to queue 0's handler, which is
 * the only one a driver that keeps its other queues' interrupts off (vnet:
 * transmit) ever needs.
 */
#include "kernel/mem.h"
#include "kernel/mmio_windows.h"
#include "virtio_dev.h"

#define VIRTIO_PCI_VENDOR 0x1af4
#define VIRTIO_PCI_MODERN 0x1040 /* + device type: a modern-only function */
/* Re-reads of a device configuration whose generation keeps moving before we
 * give up on it: an honest device updates it rarely. */
#define CONFIG_TRIES 64
/* Polls of the status register for a reset to finish. */
#define RESET_POLLS 1000000

/* ---- finding the device ---------------------------------------------------- */

/* No byte of the window is RAM we own: a window over RAM would have us
 * write device registers into memory the kernel hands out. */
static bool window_is_not_ram(const struct mmio_window *w)
{
	uint64_t first = w->base & ~(PAGE_SIZE - 1);
	for (uint64_t page = first; page < w->base + w->size; page += PAGE_SIZE)
		if (mem_is_mapped_ram(page, 1))
			return false;
	return true;
}

static int find_mmio(struct virtio_dev *vd, uint32_t type)
{
	for (int i = 0; i < mmio_window_count(); i++) {
		const struct mmio_window *w = mmio_window_get(i);
		if (!window_is_not_ram(w)) {
			kprintf("virtio-mmio@0x%lx: the window lies in RAM; not mapped\n", w->base);
			continue;
		}
		volatile uint8_t *regs = mmio_map(w->base, w->size);
		if (virtio_mmio_probe(&vd->mmio, regs, w->base, (uint32_t)w->size, w->irq) < 0)
			continue;
		if (vd->mmio.device_id == type) {
			vd->transport = VIRTIO_TRANSPORT_MMIO;
			return 0;
		}
	}
	return -1;
}

int virtio_find(struct virtio_dev *vd, uint32_t type)
{
	*vd = (struct virtio_dev){ .transport = VIRTIO_TRANSPORT_PCI };
	struct pci_dev *pci = pci_find(VIRTIO_PCI_VENDOR, (uint16_t)(VIRTIO_PCI_MODERN + type), 0);
	if (pci)
		return virtio_pci_probe(&vd->pci, pci);
	return find_mmio(vd, type);
}

const char *virtio_name(const struct virtio_dev *vd)
{
	return vd->transport == VIRTIO_TRANSPORT_PCI ? vd->pci.name : vd->mmio.name;
}

/* ---- the registers the handshake uses, per transport ----------------------- */

static uint8_t get_status(struct virtio_dev *vd)
{
	return vd->transport == VIRTIO_TRANSPORT_PCI ? virtio_pci_status(&vd->pci) : virtio_mmio_status(&vd->mmio);
}

static void set_status(struct virtio_dev *vd, uint8_t status)
{
	if (vd->transport == VIRTIO_TRANSPORT_PCI)
		virtio_pci_set_status(&vd->pci, status);
	else
		virtio_mmio_set_status(&vd->mmio, status);
}

static uint32_t device_features(struct virtio_dev *vd, uint32_t sel)
{
	return vd->transport == VIRTIO_TRANSPORT_PCI ? virtio_pci_device_features(&vd->pci, sel)
						     : virtio_mmio_device_features(&vd->mmio, sel);
}

static void driver_features(struct virtio_dev *vd, uint32_t sel, uint32_t bits)
{
	if (vd->transport == VIRTIO_TRANSPORT_PCI)
		virtio_pci_driver_features(&vd->pci, sel, bits);
	else
		virtio_mmio_driver_features(&vd->mmio, sel, bits);
}

/* ---- the handshake ----------------------------------------------------------- */

void virtio_fail(struct virtio_dev *vd, const char *why)
{
	kprintf("%s failed: %s\n", virtio_name(vd), why);
	set_status(vd, (uint8_t)(get_status(vd) | VIRTIO_STATUS_FAILED));
}

int virtio_negotiate(struct virtio_dev *vd, uint64_t (*choose)(uint64_t offered), uint64_t required)
{
	set_status(vd, 0); /* reset; the device reads back 0 when done */
	for (int i = 0; get_status(vd) != 0; i++) {
		if (i == RESET_POLLS) {
			virtio_fail(vd, "reset did not complete");
			return -1;
		}
		__asm__ volatile("pause");
	}
	set_status(vd, VIRTIO_STATUS_ACKNOWLEDGE);
	set_status(vd, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);

	uint64_t offered = device_features(vd, 0);
	offered |= (uint64_t)device_features(vd, 1) << 32;
	if ((offered & required) != required) {
		char why[96];
		ksnprintf(why, sizeof why, "required features 0x%lx not offered (device offers 0x%lx)",
			  required & ~offered, offered);
		virtio_fail(vd, why);
		return -1;
	}
	vd->offered = offered;
	vd->features = offered & (choose(offered) | required);
	driver_features(vd, 0, (uint32_t)vd->features);
	driver_features(vd, 1, (uint32_t)(vd->features >> 32));
	set_status(vd, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
	uint8_t status = get_status(vd);
	if (!(status & VIRTIO_STATUS_FEATURES_OK) || (status & VIRTIO_STATUS_NEEDS_RESET)) {
		virtio_fail(vd, "device refused the negotiated features");
		return -1;
	}
	return 0;
}

int virtio_driver_ok(struct virtio_dev *vd)
{
	set_status(vd, (uint8_t)(get_status(vd) | VIRTIO_STATUS_DRIVER_OK));
	uint8_t status = get_status(vd);
	if (status & (VIRTIO_STATUS_NEEDS_RESET | VIRTIO_STATUS_FAILED)) {
		virtio_fail(vd, "device needs a reset right after start");
		return -1;
	}
	return 0;
}

int virtio_config_read(struct virtio_dev *vd, uint32_t off, void *buf, uint32_t len)
{
	bool pci = vd->transport == VIRTIO_TRANSPORT_PCI;
	uint32_t cfg_len = pci ? vd->pci.device_cfg_len : virtio_mmio_config_len(&vd->mmio);
	volatile uint8_t *cfg = pci ? vd->pci.device_cfg : vd->mmio.regs + VIRTIO_MMIO_CONFIG;
	if (off > cfg_len || len > cfg_len - off) {
		kprintf("%s: configuration bytes %u..%u asked for, it has %u\n", virtio_name(vd), off, off + len,
			cfg_len);
		return -1;
	}
	for (int try = 0; try < CONFIG_TRIES; try++) {
		uint32_t before = pci ? virtio_pci_config_generation(&vd->pci)
				      : virtio_mmio_config_generation(&vd->mmio);
		for (uint32_t i = 0; i < len; i++)
			((uint8_t *)buf)[i] = cfg[off + i];
		uint32_t after = pci ? virtio_pci_config_generation(&vd->pci)
				     : virtio_mmio_config_generation(&vd->mmio);
		if (before == after)
			return 0;
	}
	kprintf("%s: configuration generation never settles\n", virtio_name(vd));
	return -1;
}

/* ---- queues ------------------------------------------------------------------ */

uint16_t virtio_queue_size(struct virtio_dev *vd, uint16_t q)
{
	return vd->transport == VIRTIO_TRANSPORT_PCI ? virtio_pci_queue_size(&vd->pci, q)
						     : virtio_mmio_queue_size(&vd->mmio, q);
}

int virtio_queue_enable(struct virtio_dev *vd, struct virtqueue *vq)
{
	const char *why = NULL;
	int rc = vd->transport == VIRTIO_TRANSPORT_PCI
			 ? virtio_pci_queue_enable(&vd->pci, vq, (uint16_t)(VIRTIO_IRQ_QUEUE0 + vq->index), &why)
			 : virtio_mmio_queue_enable(&vd->mmio, vq, &why);
	if (rc < 0)
		virtio_fail(vd, why);
	return rc;
}

/* ---- interrupts -------------------------------------------------------------- */

int virtio_irqs_prepare(struct virtio_dev *vd, int nirqs)
{
	KCHECK(nirqs > 0 && nirqs <= VIRTIO_IRQ_MAX);
	vd->nirqs = nirqs;
	if (vd->transport == VIRTIO_TRANSPORT_MMIO)
		return 0; /* one line, routed when the handlers are bound */
	if (vd->pci.pci->msix_size < nirqs || pci_msix_enable(vd->pci.pci) < 0) {
		char why[48];
		ksnprintf(why, sizeof why, "needs MSI-X with %d vectors", nirqs);
		virtio_fail(vd, why);
		return -1;
	}
	return 0;
}

/* The window's line: acknowledge, then tell each source's handler. */
static void mmio_interrupt(void *arg)
{
	struct virtio_dev *vd = arg;
	uint32_t status = virtio_mmio_irq_take(&vd->mmio);
	if ((status & VIRTIO_MMIO_INT_VRING) && vd->irq_fn[VIRTIO_IRQ_QUEUE0])
		vd->irq_fn[VIRTIO_IRQ_QUEUE0](NULL);
	if ((status & VIRTIO_MMIO_INT_CONFIG) && vd->irq_fn[VIRTIO_IRQ_CONFIG])
		vd->irq_fn[VIRTIO_IRQ_CONFIG](NULL);
}

static int bind_mmio(struct virtio_dev *vd)
{
	int vector = irq_alloc(mmio_interrupt, vd);
	if (vector < 0 || ioapic_route_level((int)vd->mmio.irq, vector) < 0) {
		char why[80];
		ksnprintf(why, sizeof why, "cannot route its interrupt line (I/O APIC input %u)", vd->mmio.irq);
		virtio_fail(vd, why);
		return -1;
	}
	return 0;
}

static int bind_msix(struct virtio_dev *vd, const irq_handler_t *fn, int n)
{
	struct pci_dev *pci = vd->pci.pci;
	if (virtio_pci_config_vector(&vd->pci, VIRTIO_IRQ_CONFIG) < 0) {
		virtio_fail(vd, "device refused the configuration's MSI-X vector");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int vector = irq_alloc(fn[i], NULL);
		if (vector < 0) {
			virtio_fail(vd, "cannot bind MSI-X vectors");
			return -1;
		}
		pci_msix_route(pci, i, vector);
		pci_msix_mask(pci, i, false);
	}
	return 0;
}

int virtio_bind_irqs(struct virtio_dev *vd, const irq_handler_t *fn, int n)
{
	KCHECK(n > 0 && n <= vd->nirqs);
	for (int i = 0; i < n; i++)
		vd->irq_fn[i] = fn[i];
	return vd->transport == VIRTIO_TRANSPORT_PCI ? bind_msix(vd, fn, n) : bind_mmio(vd);
}

int virtio_route_irqs_here(struct virtio_dev *vd)
{
	if (vd->transport == VIRTIO_TRANSPORT_MMIO)
		return ioapic_route_here((int)vd->mmio.irq);
	for (int i = 0; i < vd->nirqs; i++)
		pci_msix_route_here(vd->pci.pci, i);
	return 0;
}

/* ---- the per-packet path ------------------------------------------------------ */

void virtio_notify(struct virtqueue *vq)
{
	if (vq->notify_32)
		*(volatile uint32_t *)vq->notify = vq->index;
	else
		*(volatile uint16_t *)vq->notify = vq->index;
}

void virtio_barrier(struct virtio_dev *vd)
{
	/* The status register: reading it has no side effect on the device. */
	if (vd->transport == VIRTIO_TRANSPORT_PCI)
		(void)*(volatile uint8_t *)(vd->pci.common + VIRTIO_PCI_COMMON_STATUS);
	else
		(void)*(volatile uint32_t *)(vd->mmio.regs + VIRTIO_MMIO_STATUS);
}
