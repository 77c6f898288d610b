/*
 * pci.c: PCI configuration space through the legacy 0xcf8/0xcfc ports, device
 * enumeration (bus 0 and every bus behind a bridge), capability walks, BARs,
 * and MSI-X set-up for drivers.
 */
#include "arch.h"
#include "kernel.h"

#define MAX_DEVICES  64
#define CFG_ADDR     0xcf8
#define CFG_DATA     0xcfc
#define CAP_MSIX     0x11
#define MSIX_ENABLE  (1u << 15)
#define MSIX_FMASK   (1u << 14)
#define MSIX_ENTRY_CTRL_MASK 1u

static struct pci_dev devices[MAX_DEVICES];
static int ndevices;

static uint32_t cfg_addr(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
	return 0x80000000u | ((uint32_t)bus << 16) | ((uint32_t)dev << 11) | ((uint32_t)fn << 8) | (off & 0xfc);
}

static uint32_t cfg_read(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
	outl(CFG_ADDR, cfg_addr(bus, dev, fn, off));
	return inl(CFG_DATA);
}

uint32_t pci_read32(const struct pci_dev *d, uint8_t off) { return cfg_read(d->bus, d->dev, d->fn, off); }
uint16_t pci_read16(const struct pci_dev *d, uint8_t off) { return (uint16_t)(pci_read32(d, off) >> ((off & 2) * 8)); }
uint8_t pci_read8(const struct pci_dev *d, uint8_t off) { return (uint8_t)(pci_read32(d, off) >> ((off & 3) * 8)); }

void pci_write32(const struct pci_dev *d, uint8_t off, uint32_t v)
{
	outl(CFG_ADDR, cfg_addr(d->bus, d->dev, d->fn, off));
	outl(CFG_DATA, v);
}

void pci_write16(const struct pci_dev *d, uint8_t off, uint16_t v)
{
	outl(CFG_ADDR, cfg_addr(d->bus, d->dev, d->fn, off));
	outw(CFG_DATA + (off & 2), v);
}

uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id, uint8_t after)
{
	if (!(pci_read16(d, 0x06) & 0x10)) /* status: capability list present */
		return 0;
	uint8_t off = after ? pci_read8(d, after + 1) : pci_read8(d, 0x34);
	/* At most 48 capabilities fit in 256 bytes: a loop in the list ends here. */
	for (int n = 0; off >= 0x40 && n < 48; n++) {
		off &= 0xfc;
		if (pci_read8(d, off) == id)
			return off;
		off = pci_read8(d, off + 1);
	}
	return 0;
}

uint64_t pci_bar(const struct pci_dev *d, int n, uint64_t *size)
{
	uint8_t off = (uint8_t)(0x10 + 4 * n);
	uint32_t lo = pci_read32(d, off);
	if (n < 0 || n > 5 || (lo & 1)) /* I/O BAR */
		return 0;
	int is64 = ((lo >> 1) & 3) == 2;
	uint64_t base = lo & ~0xfULL, mask;
	uint16_t cmd = pci_read16(d, 0x04);
	pci_write16(d, 0x04, cmd & ~0x3); /* decode off while sizing */
	pci_write32(d, off, 0xffffffff);
	mask = pci_read32(d, off) & ~0xfULL;
	pci_write32(d, off, lo);
	if (is64 && n < 5) {
		uint32_t hi = pci_read32(d, off + 4);
		base |= (uint64_t)hi << 32;
		pci_write32(d, off + 4, 0xffffffff);
		mask |= (uint64_t)pci_read32(d, off + 4) << 32;
		pci_write32(d, off + 4, hi);
	} else {
		mask |= 0xffffffff00000000ULL;
	}
	pci_write16(d, 0x04, cmd);
	if (size)
		*size = mask ? ~mask + 1 : 0;
	return base;
}

void pci_enable_bus_master(const struct pci_dev *d)
{
	pci_write16(d, 0x04, pci_read16(d, 0x04) | 0x6); /* memory space, bus master */
}

int pci_msix_enable(struct pci_dev *d)
{
	if (!d->msix_cap)
		return -1;
	uint32_t table = pci_read32(d, d->msix_cap + 4);
	uint64_t size, bar = pci_bar(d, table & 7, &size);
	uint64_t table_bytes = (uint64_t)d->msix_size * 16;
	if (!bar || (table & ~7u) + table_bytes > size)
		return -1;
	d->msix_table = mmio_map(bar + (table & ~7u), table_bytes);
	for (int i = 0; i < d->msix_size; i++)
		d->msix_table[i * 4 + 3] |= MSIX_ENTRY_CTRL_MASK;
	uint16_t ctrl = pci_read16(d, d->msix_cap + 2);
	pci_write16(d, d->msix_cap + 2, (uint16_t)((ctrl | MSIX_ENABLE) & ~MSIX_FMASK));
	pci_write16(d, 0x04, pci_read16(d, 0x04) | 0x400); /* INTx off */
	return 0;
}

void pci_msix_route(struct pci_dev *d, int entry, int vector)
{
	KCHECK(d->msix_table && entry >= 0 && entry < d->msix_size);
	volatile uint32_t *e = &d->msix_table[entry * 4];
	e[0] = 0xfee00000u | (lapic_id() << 12); /* this CPU, fixed delivery */
	e[1] = 0;
	e[2] = (uint32_t)vector;                 /* edge triggered */
}

void pci_msix_route_here(struct pci_dev *d, int entry)
{
	KCHECK(d->msix_table && entry >= 0 && entry < d->msix_size);
	volatile uint32_t *e = &d->msix_table[entry * 4];
	uint32_t ctrl = e[3];
	e[3] = ctrl | MSIX_ENTRY_CTRL_MASK; /* no message half written */
	e[0] = 0xfee00000u | (lapic_id() << 12);
	e[1] = 0;
	e[3] = ctrl;
}

void pci_msix_mask(struct pci_dev *d, int entry, bool masked)
{
	KCHECK(d->msix_table && entry >= 0 && entry < d->msix_size);
	volatile uint32_t *ctrl = &d->msix_table[entry * 4 + 3];
	*ctrl = masked ? (*ctrl | MSIX_ENTRY_CTRL_MASK) : (*ctrl & ~MSIX_ENTRY_CTRL_MASK);
}

static void scan_bus(uint8_t bus, int depth)
{
	for (uint8_t dev = 0; dev < 32; dev++) {
		for (uint8_t fn = 0; fn < 8; fn++) {
			uint32_t id = cfg_read(bus, dev, fn, 0);
			if ((id & 0xffff) == 0xffff) {
				if (fn == 0)
					break;
				continue;
			}
			uint32_t class = cfg_read(bus, dev, fn, 0x08);
			uint8_t header = (uint8_t)(cfg_read(bus, dev, fn, 0x0c) >> 16);
			if (ndevices < MAX_DEVICES) {
				struct pci_dev *d = &devices[ndevices++];
				*d = (struct pci_dev){
					.bus = bus, .dev = dev, .fn = fn,
					.vendor = (uint16_t)id, .device = (uint16_t)(id >> 16),
					.class = (uint8_t)(class >> 24), .subclass = (uint8_t)(class >> 16),
				};
				if ((header & 0x7f) == 0)
					d->subsys_device = (uint16_t)(cfg_read(bus, dev, fn, 0x2c) >> 16);
				d->msix_cap = pci_find_cap(d, CAP_MSIX, 0);
				if (d->msix_cap)
					d->msix_size = (uint16_t)((pci_read16(d, d->msix_cap + 2) & 0x7ff) + 1);
			}
			if ((header & 0x7f) == 1 && depth < 8) { /* PCI-to-PCI bridge */
				uint8_t secondary = (uint8_t)(cfg_read(bus, dev, fn, 0x18) >> 8);
				if (secondary > bus)
					scan_bus(secondary, depth + 1);
			}
			if (fn == 0 && !(header & 0x80))
				break; /* single-function device */
		}
	}
}

/* Configuration mechanism #1 is there when its address port keeps what is
 * written to it. A machine without a PCI host bridge (microvm, Firecracker)
 * reads all ones there, and the bus-0 scan would be 64 port accesses for
 * nothing, each an exit to the VMM under KVM. */
static bool config_ports_present(void)
{
	outl(CFG_ADDR, 0x80000000u);
	return inl(CFG_ADDR) == 0x80000000u;
}

void pci_init(int verbose)
{
	if (!config_ports_present()) {
		if (verbose)
			kprintf("pci: no configuration ports (0xcf8 reads back otherwise): no PCI\n");
		return;
	}
	scan_bus(0, 0);
	for (int i = 0; verbose && i < ndevices; i++) {
		struct pci_dev *d = &devices[i];
		kprintf("pci: %02x:%02x.%u %04x:%04x class %02x.%02x%s\n", d->bus, d->dev, d->fn, d->vendor,
			d->device, d->class, d->subclass, d->msix_cap ? " msix" : "");
	}
}

int pci_count(void) { return ndevices; }
struct pci_dev *pci_get(int i) { return i >= 0 && i < ndevices ? &devices[i] : NULL; }

struct pci_dev *pci_find(uint16_t vendor, uint16_t device, int nth)
{
	for (int i = 0; i < ndevices; i++)
		if (devices[i].vendor == vendor && devices[i].device == device && nth-- == 0)
			return &devices[i];
	return NULL;
}
