/*
 * multiboot.h: the parts of the Multiboot (version 1) specification the loader
 * reads: the header QEMU looks for and the information record it passes in %ebx.
 */
#ifndef MULTIBOOT_H
#define MULTIBOOT_H

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

#define MULTIBOOT_HEADER_MAGIC     0x1BADB002
#define MULTIBOOT_BOOTLOADER_MAGIC 0x2BADB002 /* in %eax at entry */

#define MULTIBOOT_PAGE_ALIGN  (1u << 0) /* modules page aligned */
#define MULTIBOOT_MEMORY_INFO (1u << 1) /* we want mem_* and mmap_* */

/* flags bits of struct multiboot_info: which fields are valid */
#define MBI_MEM     (1u << 0)
#define MBI_CMDLINE (1u << 2)
#define MBI_MODS    (1u << 3)
#define MBI_MMAP    (1u << 6)

#ifndef __ASSEMBLER__
struct multiboot_info {
	uint32_t flags;       /* MBI_* validity bits */
	uint32_t mem_lower;   /* KiB below 1 MiB */
	uint32_t mem_upper;   /* KiB above 1 MiB */
	uint32_t boot_device;
	uint32_t cmdline;     /* physical address of a C string */
	uint32_t mods_count;  /* number of modules (QEMU: one per -initrd file) */
	uint32_t mods_addr;   /* physical address of struct multiboot_module[] */
	uint32_t syms[4];
	uint32_t mmap_length; /* bytes of memory map */
	uint32_t mmap_addr;   /* physical address of the first multiboot_mmap */
} __attribute__((packed));

struct multiboot_module {
	uint32_t mod_start; /* first byte */
	uint32_t mod_end;   /* one past the last byte */
	uint32_t string;    /* module command line */
	uint32_t reserved;
} __attribute__((packed));

/* A memory-map entry; `size` excludes itself, entries are size + 4 apart. */
struct multiboot_mmap {
	uint32_t size;
	uint64_t addr;
	uint64_t len;
	uint32_t type;
} __attribute__((packed));
#endif /* __ASSEMBLER__ */

#endif
