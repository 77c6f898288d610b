/*
 * pvh.h: the start-of-day record of the PVH boot protocol (Xen's x86/HVM
 * direct boot ABI, which QEMU's pc and microvm machines and Firecracker also
 * speak), and its translation into the kernel's bootinfo record.
 *
 * A VMM that finds the image's XEN_ELFNOTE_PHYS32_ENTRY note loads the ELF
 * segments itself and enters that address in 32-bit protected mode, paging
 * off, with %ebx = the physical address of a `struct pvh_start_info`
 * (kernel/pvh.S). Everything in it is the VMM's word, so the translation
 * (pvh.c) reads guest memory only through a caller's check of each address
 * and length, and refuses a record it cannot trust with a one-line reason.
 * Pure: the kernel and the host unit tests build the same pvh.c.
 */
#ifndef PVH_H
#define PVH_H

#include <stdint.h>
#include "bootinfo.h"

#define PVH_START_MAGIC   0x336ec578u /* pvh_start_info.magic */
#define PVH_NOTE_ENTRY    18          /* XEN_ELFNOTE_PHYS32_ENTRY: the note's type */
#define PVH_MAX_MEMMAP    4096        /* map entries read at most (a sane VMM gives tens) */

/* The record %ebx points to (the ABI's version 1 layout; version 0 ends
 * before memmap_paddr). */
struct pvh_start_info {
	uint32_t magic;          /* PVH_START_MAGIC */
	uint32_t version;        /* 0 or 1; 1 adds the memory map */
	uint32_t flags;          /* SIF_* flags (none concern us) */
	uint32_t nr_modules;     /* entries at modlist_paddr (unused: the image is the kernel) */
	uint64_t modlist_paddr;  /* physical address of the module list */
	uint64_t cmdline_paddr;  /* physical address of the NUL-terminated command line, or 0 */
	uint64_t rsdp_paddr;     /* physical address of the ACPI RSDP, or 0 */
	uint64_t memmap_paddr;   /* version 1: physical address of the memory map */
	uint32_t memmap_entries; /* version 1: its entries */
	uint32_t reserved;       /* must be zero; not checked */
};

#define PVH_START_INFO_V0_SIZE 40 /* bytes of a version 0 record: up to rsdp_paddr */

/* One memory-map entry (E820 types: 1 RAM, 2 reserved, 3 ACPI, 4 NVS, 5 bad). */
struct pvh_memmap_entry {
	uint64_t addr;     /* physical start */
	uint64_t size;     /* length in bytes */
	uint32_t type;     /* E820 type */
	uint32_t reserved; /* padding */
};

/*
 * The bytes of guest-physical memory [addr, addr + len), or NULL when they
 * may not be read (not mapped, wrapping, past a limit). ctx is the caller's.
 */
typedef const void *(*pvh_read_fn)(uint64_t addr, uint64_t len, void *ctx);

/*
 * Fill from the start-info record at start_info: bi's magic and version, the
 * RSDP's address (as given: whoever reads there checks it), its memory map (entries past BOOTINFO_MAX_MEM counted in mem_dropped and
 * mem_dropped_usable; types outside 1-5 become MEM_RESERVED) and command line
 * (empty when the record has none). The other fields are left as they are.
 * NULL on success, else why the record was refused (bi then holds nothing
 * usable): bad magic, version 0 (no memory map), an empty or oversized map,
 * a record, map or command line that read() refuses, a command line with
 * no NUL in its first BOOTINFO_CMDLINE bytes.
 */
const char *pvh_to_bootinfo(uint64_t start_info, pvh_read_fn read, void *ctx, struct bootinfo *bi);

#endif
