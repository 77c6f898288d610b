/*
 * acpi.c: finding an ACPI table in memory. The RSDP is where the firmware
 * leaves it on a PC (SeaBIOS on QEMU's pc machine, qboot on microvm): on a
 * 16-byte boundary in the first KiB of the EBDA or in the BIOS area
 * 0xe0000-0xfffff. Every table on the way (the RSDT or XSDT, then the one
 * asked for) is mapped by its header first, its claimed length bounded,
 * then mapped whole and checked (length, checksum, signature: acpi_tables.c)
 * before a field of it is read. The pages stay mapped, read as uncached
 * device memory: few reads, at boot only.
 */
#include <string.h>
#include "acpi.h"
#include "kernel.h"

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
	static bool looked;            /* the RSDP has been looked for */
	static struct acpi_root root;  /* what it gave; address 0: none found */
	if (!looked) {
		looked = true;
		if (!(ebda >= EBDA_LOWEST && ebda + EBDA_SCAN <= BIOS_AREA_START &&
		      scan_rsdp(ebda & ~15ULL, ebda + EBDA_SCAN, &root)) &&
		    !scan_rsdp(BIOS_AREA_START, BIOS_AREA_END, &root))
			root.address = 0;
	}
	if (root.address == 0) {
		*why = "no ACPI RSDP in the EBDA or the BIOS area";
		return NULL;
	}
	const char *root_why;
	const uint8_t *rt = map_table(root.address, root.entry_size == 8 ? "XSDT" : "RSDT", &root_why);
	if (!rt) {
		*why = root.entry_size == 8 ? "the XSDT fails its checks" : "the RSDT fails its checks";
		return NULL;
	}
	size_t n = acpi_root_count(rt, root.entry_size);
	for (size_t i = 0; i < n; i++) {
		uint64_t phys = acpi_root_entry(rt, root.entry_size, i);
		const uint8_t *header = map_phys(phys, ACPI_HEADER_LEN);
		if (!header || memcmp(header, sig, 4))
			continue;
		return map_table(phys, sig, why);
	}
	*why = "no such ACPI table";
	return NULL;
}
