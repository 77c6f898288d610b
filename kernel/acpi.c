/*
 * acpi.c: finding an ACPI table in memory, and the virtio-mmio windows the
 * DSDT describes (read by acpi_dsdt.c). The RSDP is where the VMM's PVH
 * start info says (qboot, microvm's firmware, gives its address), else
 * where the firmware leaves it on a PC (SeaBIOS on QEMU's pc machine, qboot
 * on microvm, Firecracker at 0xe0000): on a 16-byte boundary in the first
 * KiB of the EBDA or in the BIOS area 0xe0000-0xfffff. Every table on the
 * way (the RSDT or XSDT, then the one asked for) is mapped by its header
 * first, its claimed length bounded, then mapped whole and checked (length,
 * checksum, signature: acpi_tables.c) before a field of it is read. The
 * pages stay mapped, read as uncached device memory: few reads, at boot
 * only.
 */
#include <string.h>
#include "acpi.h"
#include "kernel.h"
#include "mmio_windows.h"

#define BIOS_AREA_START 0xe0000
#define BIOS_AREA_END   0x100000
#define EBDA_LOWEST     0x80000 /* an EBDA starts between 512 and 640 KiB */
#define EBDA_SCAN       1024    /* the RSDP lies in its first KiB */
/* What the kernel's identity map can reach (4-level paging): a table the
 * firmware puts above is refused rather than mapped. */
#define ACPI_PHYS_LIMIT (1ULL << 46)

/* [phys, phys + len) mapped, or NULL when it is not a place a table can be. */
static const uint8_t *map_phys(uint64_t phys, uint64_t len)
{
	if (phys == 0 || len == 0 || phys >= ACPI_PHYS_LIMIT || len > ACPI_PHYS_LIMIT - phys)
		return NULL;
	return mmio_map(phys, (size_t)len);
}

static const uint8_t *scan_rsdp(uint64_t start, uint64_t end, struct acpi_root *root)
{
	const uint8_t *area = map_phys(start, end - start);
	if (!area)
		return NULL;
	const char *why;
	for (uint64_t off = 0; off + ACPI_RSDP_V1_LEN <= end - start; off += 16)
		if (acpi_rsdp_parse(area + off, end - start - off, root, &why) == 0)
			return area + off;
	return NULL;
}

static uint64_t rsdp_hint; /* the VMM's word for the RSDP's address; 0: none */

void acpi_set_rsdp_hint(uint64_t phys)
{
	rsdp_hint = phys;
}

/* The RSDP at the VMM's address, checked; a bad one is said once. */
static bool rsdp_at_hint(struct acpi_root *root)
{
	const uint8_t *p = map_phys(rsdp_hint, ACPI_RSDP_V2_LEN);
	const char *why = "its address is beyond the kernel's map";
	if (p && acpi_rsdp_parse(p, ACPI_RSDP_V2_LEN, root, &why) == 0)
		return true;
	kprintf("kernel: acpi: the start info's RSDP address 0x%lx: %s; searching the BIOS area\n",
		rsdp_hint, why);
	return false;
}

/* Finds the RSDP once: the root table's address, 0 when there is none. */
static const struct acpi_root *find_root(uint64_t ebda)
{
	static bool looked;            /* the RSDP has been looked for */
	static struct acpi_root root;  /* what it gave; address 0: none found */
	if (!looked) {
		looked = true;
		if (!(rsdp_hint && rsdp_at_hint(&root)) &&
		    !(ebda >= EBDA_LOWEST && ebda + EBDA_SCAN <= BIOS_AREA_START &&
		      scan_rsdp(ebda & ~15ULL, ebda + EBDA_SCAN, &root)) &&
		    !scan_rsdp(BIOS_AREA_START, BIOS_AREA_END, &root))
			root.address = 0;
	}
	return &root;
}

/* The table at phys, mapped and checked against sig; NULL with why. */
static const uint8_t *map_table(uint64_t phys, const char *sig, const char **why)
{
	const uint8_t *header = map_phys(phys, ACPI_HEADER_LEN);
	if (!header) {
		*why = "a table's address is 0 or beyond the kernel's map";
		return NULL;
	}
	uint32_t len = acpi_table_length(header);
	if (len < ACPI_HEADER_LEN || len > ACPI_TABLE_MAX) {
		*why = "a table's length is shorter than its header or longer than 64 KiB";
		return NULL;
	}
	const uint8_t *table = map_phys(phys, len);
	if (!table) {
		*why = "a table runs beyond the kernel's map";
		return NULL;
	}
	if (acpi_table_check(table, len, sig, why) < 0)
		return NULL;
	return table;
}

const uint8_t *acpi_find_table(const char *sig, uint64_t ebda, const char **why)
{
	const struct acpi_root *root = find_root(ebda);
	if (root->address == 0) {
		*why = "no ACPI RSDP in the EBDA or the BIOS area";
		return NULL;
	}
	const char *root_why;
	const uint8_t *rt = map_table(root->address, root->entry_size == 8 ? "XSDT" : "RSDT", &root_why);
	if (!rt) {
		*why = root->entry_size == 8 ? "the XSDT fails its checks" : "the RSDT fails its checks";
		return NULL;
	}
	size_t n = acpi_root_count(rt, root->entry_size);
	for (size_t i = 0; i < n; i++) {
		uint64_t phys = acpi_root_entry(rt, root->entry_size, i);
		const uint8_t *header = map_phys(phys, ACPI_HEADER_LEN);
		if (!header || memcmp(header, sig, 4))
			continue;
		return map_table(phys, sig, why);
	}
	*why = "no such ACPI table";
	return NULL;
}

int acpi_virtio_mmio_windows(uint64_t ebda, bool verbose)
{
	/* No RSDP: a machine without ACPI (microvm with acpi=off), nothing to say. */
	if (find_root(ebda)->address == 0)
		return 0;
	const char *why;
	uint64_t phys;
	const uint8_t *fadt = acpi_find_table("FACP", ebda, &why), *dsdt = NULL;
	if (fadt && acpi_fadt_dsdt(fadt, &phys, &why) == 0)
		dsdt = map_table(phys, "DSDT", &why);
	if (!dsdt) {
		kprintf("kernel: virtio-mmio: no DSDT to read devices from: %s\n", why);
		return 0;
	}
	static struct acpi_mmio_found found; /* static: a few hundred bytes, read once */
	acpi_dsdt_virtio_mmio(dsdt, acpi_table_length(dsdt), &found);
	for (int i = 0; i < found.nrefused && i < ACPI_DSDT_REFUSED_MAX; i++)
		kprintf("kernel: virtio-mmio: ACPI device %s refused: %s\n", found.refused[i].name,
			found.refused[i].why);
	if (found.nrefused > ACPI_DSDT_REFUSED_MAX)
		kprintf("kernel: virtio-mmio: %d more ACPI devices refused\n", found.nrefused - ACPI_DSDT_REFUSED_MAX);
	if (found.beyond_max)
		kprintf("kernel: virtio-mmio: %d ACPI devices past the first %d not used\n", found.beyond_max,
			MMIO_WINDOWS_MAX);
	if (found.bad_why)
		kprintf("kernel: virtio-mmio: the DSDT's AML is malformed at offset 0x%lx (%s); "
			"the rest of its scope was not read\n", (uint64_t)found.bad_at, found.bad_why);
	if (verbose && found.unfollowed)
		kprintf("kernel: virtio-mmio: the DSDT holds AML this reader does not follow (%d places); "
			"searched past it for devices\n", found.unfollowed);
	if (found.count == 0)
		return 0;
	char reason[160];
	if (mmio_windows_use(found.windows, found.count, reason, sizeof reason) < 0) {
		kprintf("kernel: virtio-mmio: the DSDT's devices not used: %s\n", reason);
		return 0;
	}
	kprintf("kernel: virtio-mmio: %d device%s from ACPI DSDT", found.count, found.count == 1 ? "" : "s");
	for (int i = 0; verbose && i < found.count; i++)
		kprintf("%s %s 0x%lx+0x%lx IRQ %u", i ? "," : ":", found.names[i], found.windows[i].base,
			found.windows[i].size, found.windows[i].irq);
	kprintf("\n");
	return found.count;
}
