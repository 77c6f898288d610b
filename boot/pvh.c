/*
 * pvh.c: the PVH start-of-day record to the kernel's bootinfo record (see
 * pvh.h). The record, its memory map and its command line come from the VMM:
 * each is read once, through read(), which checks its address and length,
 * and copied before any field of it is used, so a record that changes under
 * us or lies about its sizes cannot steer a read.
 */
#include <stddef.h>
#include "pvh.h"

/* Byte copy: the record may sit at any alignment, and this file runs before
 * the kernel's library is known to be usable. */
static void copy_bytes(void *dst, const void *src, uint64_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--)
		*d++ = *s++;
}

static uint32_t mem_type(uint32_t e820_type)
{
	return e820_type >= MEM_USABLE && e820_type <= MEM_BAD ? e820_type : MEM_RESERVED;
}

static const char *copy_memmap(const struct pvh_start_info *si, pvh_read_fn read, void *ctx,
			       struct bootinfo *bi)
{
	if (si->memmap_entries == 0 || si->memmap_paddr == 0)
		return "the VMM's start info has no memory map";
	if (si->memmap_entries > PVH_MAX_MEMMAP)
		return "the VMM's memory map has more than 4096 entries";
	uint64_t bytes = (uint64_t)si->memmap_entries * sizeof(struct pvh_memmap_entry);
	const unsigned char *map = read(si->memmap_paddr, bytes, ctx);
	if (!map)
		return "the VMM's memory map lies outside readable memory";
	for (uint32_t i = 0; i < si->memmap_entries; i++) {
		struct pvh_memmap_entry e;
		copy_bytes(&e, map + (uint64_t)i * sizeof e, sizeof e);
		if (bi->nmem < BOOTINFO_MAX_MEM) {
			bi->mem[bi->nmem++] = (struct mem_range){
				.base = e.addr, .len = e.size, .type = mem_type(e.type),
			};
		} else { /* counted, so the kernel can say what it cannot use */
			bi->mem_dropped++;
			if (e.type == MEM_USABLE)
				bi->mem_dropped_usable += e.size;
		}
	}
	return NULL;
}

/* Byte by byte: the line's length is unknown until its NUL, and read()
 * decides for each byte whether it may be read. */
static const char *copy_cmdline(uint64_t addr, pvh_read_fn read, void *ctx, struct bootinfo *bi)
{
	bi->cmdline[0] = 0;
	if (addr == 0)
		return NULL;
	for (uint64_t i = 0; i < BOOTINFO_CMDLINE; i++) {
		if (addr + i < addr)
			return "the VMM's command line runs past the end of memory";
		const char *c = read(addr + i, 1, ctx);
		if (!c)
			return "the VMM's command line lies outside readable memory";
		bi->cmdline[i] = *c;
		if (*c == 0)
			return NULL;
	}
	bi->cmdline[0] = 0;
	return "kernel command line longer than 4095 bytes";
}

const char *pvh_to_bootinfo(uint64_t start_info, pvh_read_fn read, void *ctx, struct bootinfo *bi)
{
	struct pvh_start_info si = { 0 };
	bi->nmem = 0;
	bi->mem_dropped = 0;
	bi->mem_dropped_usable = 0;
	bi->cmdline[0] = 0;
	bi->acpi_rsdp = 0;

	const void *head = read(start_info, PVH_START_INFO_V0_SIZE, ctx);
	if (!head)
		return "the VMM's start info lies outside readable memory";
	copy_bytes(&si, head, PVH_START_INFO_V0_SIZE);
	if (si.magic != PVH_START_MAGIC)
		return "not started by a PVH loader (bad start info magic)";
	if (si.version == 0)
		return "the VMM's start info is version 0, which has no memory map";
	/* Version 1 and later: the map's fields follow; only the copy is
	 * used from here on. */
	const void *whole = read(start_info, sizeof si, ctx);
	if (!whole)
		return "the VMM's start info lies outside readable memory";
	copy_bytes(&si, whole, sizeof si);

	const char *why = copy_memmap(&si, read, ctx, bi);
	if (!why)
		why = copy_cmdline(si.cmdline_paddr, read, ctx, bi);
	if (why) {
		bi->nmem = 0;
		return why;
	}
	bi->acpi_rsdp = si.rsdp_paddr; /* an address for the ACPI code to check, not read here */
	bi->magic = BOOTINFO_MAGIC;
	bi->version = BOOTINFO_VERSION;
	return NULL;
}
