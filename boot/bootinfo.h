/*
 * bootinfo.h: the record the loader hands to the kernel image.
 *
 * The loader fills one `struct bootinfo` in its own memory and jumps to the
 * image's entry point with its address in %rdi. Booted by PVH instead, with
 * no loader, the image fills one itself from the VMM's record (kernel/pvh.S,
 * boot/pvh.c) and enters the same way. Everything in it is plain data
 * (no pointers into multiboot structures), so the kernel can use it after it has
 * replaced the loader's page tables. Included by loader/ and kernel/ (boot/
 * holds what both sides of the hand-over share); this is the ABI between
 * them, so bump BOOTINFO_VERSION on any change.
 */
#ifndef BOOTINFO_H
#define BOOTINFO_H

#include <stdint.h>

#define BOOTINFO_MAGIC   0x554b424f4f54ULL /* "UKBOOT" */
#define BOOTINFO_VERSION 3
#define BOOTINFO_MAX_MEM 64   /* memory-map entries kept */
#define BOOTINFO_CMDLINE 4096 /* bytes of command line kept, NUL included */

/* Memory-map entry types (the multiboot / e820 numbering). */
enum {
	MEM_USABLE = 1,   /* RAM the kernel may use */
	MEM_RESERVED = 2, /* firmware, MMIO holes: never touch */
	MEM_ACPI = 3,     /* ACPI tables, reclaimable after reading them */
	MEM_NVS = 4,      /* ACPI non-volatile storage */
	MEM_BAD = 5,      /* defective RAM */
};

/* How the image was started (bootinfo.protocol). */
enum {
	BOOT_MULTIBOOT = 0, /* by the loader: the command line begins with the image's path */
	BOOT_PVH = 1,       /* by the VMM, PVH entry: the command line is only -append's */
};

struct mem_range {
	uint64_t base; /* physical start address */
	uint64_t len;  /* length in bytes */
	uint32_t type; /* MEM_* */
	uint32_t pad;  /* keeps the entry 24 bytes on both sides */
};

struct bootinfo {
	uint64_t magic;        /* BOOTINFO_MAGIC */
	uint32_t version;      /* BOOTINFO_VERSION */
	uint32_t nmem;         /* valid entries in mem[] */
	struct mem_range mem[BOOTINFO_MAX_MEM]; /* the firmware's map, as given */
	uint64_t image_base;   /* where the ELF file of the image lies (for symbols); 0 under PVH */
	uint64_t image_size;   /* its length in bytes */
	uint64_t load_start;   /* lowest address the image's segments occupy */
	uint64_t load_end;     /* end of the highest segment (after .bss) */
	uint64_t loader_start; /* the loader's own memory, bootinfo included (0 under PVH) */
	uint64_t loader_end;
	uint64_t tsc_at_entry; /* TSC when the loader started, for boot timing */
	uint64_t ram_limit;    /* the hand-over map covers usable RAM below this, none above */
	uint64_t tables_start; /* the loader's page tables for RAM above 4 GiB, */
	uint64_t tables_end;   /* in use until the kernel loads its own */
	uint32_t mem_dropped;  /* map entries past BOOTINFO_MAX_MEM, not kept */
	uint32_t cpu_phys_bits; /* the CPU's physical address width (ram_limit's reason) */
	uint64_t mem_dropped_usable; /* bytes of usable RAM those entries listed */
	char cmdline[BOOTINFO_CMDLINE]; /* QEMU -append, NUL-terminated */
	uint32_t protocol;     /* BOOT_* */
	uint32_t pad2;         /* keeps acpi_rsdp aligned */
	uint64_t acpi_rsdp;    /* the ACPI RSDP's address the VMM gave (PVH), 0 when none did */
};

#endif
