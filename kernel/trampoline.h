/*
 * trampoline.h: the page an AP starts in. A STARTUP IPI starts a CPU in real
 * mode at the page its vector names (vector V: CS = V << 8, IP = 0, the page
 * at V << 12, below 1 MiB), so the boot CPU copies trampoline.S's blob into
 * a free page of low RAM (trampoline_pick_page) and fills in its data
 * (trampoline_fill): the addresses the blob's far jumps and GDT pointer
 * need, which depend on where the page is, and what the AP is to load. The
 * AP then goes 16 -> 32 -> 64 bit on page tables of its own that map the
 * first GiB one-to-one (the page and the kernel's text), jumps to
 * smp_ap_entry in the kernel's text, which loads the kernel's page tables,
 * its stack and calls smp_ap_main(its per-CPU area).
 *
 * The blob is read-only data in the image, never executed where it lies.
 * Its data block sits at TRAMPOLINE_DATA: the offsets below are shared with
 * the assembly, and struct trampoline_data is checked against them. The
 * arithmetic (trampoline.c) is pure: tests/unit/test_trampoline.c runs it
 * over hostile memory maps and checks every relocated address.
 */
#ifndef TRAMPOLINE_H
#define TRAMPOLINE_H

#define TRAMPOLINE_PAGE      4096    /* the blob and its data fit in one page */
#define TRAMPOLINE_DATA      0x200   /* the data block's offset: the code must end before it */
#define TRAMPOLINE_LOWEST    0x1000  /* page 0 stays the real-mode IVT and BDA, unmapped */
/* The page lies below the legacy video hole (STARTUP's reach is 1 MiB). */
#define TRAMPOLINE_LIMIT     0xa0000
/* The AP's first tables map the first GiB: the kernel's text must lie in it. */
#define TRAMPOLINE_MAP_LIMIT 0x40000000

/* Offsets in the page (the assembly uses these; the struct below is checked
 * against them). */
#define TP_GDT        (TRAMPOLINE_DATA + 0x00) /* null, 32-bit code 0x08, data 0x10, 64-bit code 0x18 */
#define TP_GDTR       (TRAMPOLINE_DATA + 0x20) /* limit (2 bytes), base (4): the GDT's physical address */
#define TP_FAR32      (TRAMPOLINE_DATA + 0x28) /* far pointer to the 32-bit code: offset (4), selector (2) */
#define TP_FAR64      (TRAMPOLINE_DATA + 0x30) /* far pointer to the 64-bit code */
#define TP_CR3_EARLY  (TRAMPOLINE_DATA + 0x38) /* the AP's first page tables (below 4 GiB) */
#define TP_CR4        (TRAMPOLINE_DATA + 0x3c) /* CR4 as the boot CPU has it (PAE included) */
#define TP_CR0        (TRAMPOLINE_DATA + 0x40) /* CR0 as the boot CPU has it (PG, PE, WP ...) */
#define TP_APIC_ID    (TRAMPOLINE_DATA + 0x44) /* the one AP that may go on (1 byte) */
#define TP_STRAYS     (TRAMPOLINE_DATA + 0x48) /* CPUs that arrived with another APIC ID and halted */
#define TP_EFER       (TRAMPOLINE_DATA + 0x50) /* EFER as the boot CPU has it, LMA off (LME, NXE) */
#define TP_ENTRY      (TRAMPOLINE_DATA + 0x58) /* smp_ap_entry: where the 64-bit code jumps */
#define TP_KERNEL_CR3 (TRAMPOLINE_DATA + 0x60) /* the kernel's page tables */
#define TP_STACK      (TRAMPOLINE_DATA + 0x68) /* the AP's stack top */
#define TP_PERCPU     (TRAMPOLINE_DATA + 0x70) /* its per-CPU area: smp_ap_main's argument */
#define TP_STAGE      (TRAMPOLINE_DATA + 0x78) /* how far it got (enum trampoline_stage) */
#define TRAMPOLINE_DATA_END (TRAMPOLINE_DATA + 0x80)

/* How far an AP got (TP_STAGE), for the message when one does not answer. */
#define TRAMPOLINE_STAGE_NONE      0 /* nothing seen: the STARTUP IPI did not start it */
#define TRAMPOLINE_STAGE_REAL      1 /* in the page, real mode */
#define TRAMPOLINE_STAGE_PROTECTED 2 /* 32-bit protected mode */
#define TRAMPOLINE_STAGE_LONG      3 /* 64-bit mode on its first tables */
#define TRAMPOLINE_STAGE_KERNEL    4 /* in the kernel's text, on the kernel's tables and its stack */

#define TRAMPOLINE_SEL_CODE32 0x08
#define TRAMPOLINE_SEL_DATA   0x10
#define TRAMPOLINE_SEL_CODE64 0x18

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>
#include "boot/bootinfo.h"
#include "boot/memmap.h"

/* A far pointer as `ljmp *mem` reads it (m16:32), padded to 8 bytes. */
struct trampoline_far {
	uint32_t offset;   /* physical address of the target code */
	uint16_t selector; /* the trampoline GDT's code segment */
	uint16_t pad;
} __attribute__((packed));

/* The data block, at TRAMPOLINE_DATA in the page. */
struct trampoline_data {
	uint64_t gdt[4];               /* the blob's own descriptors */
	uint16_t gdtr_limit;           /* sizeof gdt - 1 */
	uint32_t gdtr_base;            /* where gdt lies: the page + TP_GDT */
	uint16_t pad0;
	struct trampoline_far far32;   /* to the 32-bit code */
	struct trampoline_far far64;   /* to the 64-bit code */
	uint32_t cr3_early;            /* the AP's first page tables */
	uint32_t cr4;                  /* the boot CPU's CR4 */
	uint32_t cr0;                  /* the boot CPU's CR0 */
	uint8_t apic_id;               /* the AP expected; any other halts */
	uint8_t pad1[3];
	volatile uint32_t strays;      /* CPUs that came with another APIC ID and halted */
	uint32_t pad2;
	uint64_t efer;                 /* the boot CPU's EFER, LMA off */
	uint64_t entry;                /* smp_ap_entry */
	uint64_t kernel_cr3;           /* the kernel's PML4 */
	uint64_t stack_top;            /* the AP's stack */
	uint64_t percpu;               /* the AP's per-CPU area */
	volatile uint32_t stage;       /* TRAMPOLINE_STAGE_*, written by the AP */
	uint32_t pad3;
} __attribute__((packed));

_Static_assert(offsetof(struct trampoline_data, gdtr_limit) == TP_GDTR - TRAMPOLINE_DATA, "gdtr");
_Static_assert(offsetof(struct trampoline_data, far32) == TP_FAR32 - TRAMPOLINE_DATA, "far32");
_Static_assert(offsetof(struct trampoline_data, far64) == TP_FAR64 - TRAMPOLINE_DATA, "far64");
_Static_assert(offsetof(struct trampoline_data, cr3_early) == TP_CR3_EARLY - TRAMPOLINE_DATA, "cr3");
_Static_assert(offsetof(struct trampoline_data, cr4) == TP_CR4 - TRAMPOLINE_DATA, "cr4");
_Static_assert(offsetof(struct trampoline_data, cr0) == TP_CR0 - TRAMPOLINE_DATA, "cr0");
_Static_assert(offsetof(struct trampoline_data, apic_id) == TP_APIC_ID - TRAMPOLINE_DATA, "apic_id");
_Static_assert(offsetof(struct trampoline_data, strays) == TP_STRAYS - TRAMPOLINE_DATA, "strays");
_Static_assert(offsetof(struct trampoline_data, efer) == TP_EFER - TRAMPOLINE_DATA, "efer");
_Static_assert(offsetof(struct trampoline_data, entry) == TP_ENTRY - TRAMPOLINE_DATA, "entry");
_Static_assert(offsetof(struct trampoline_data, kernel_cr3) == TP_KERNEL_CR3 - TRAMPOLINE_DATA, "kcr3");
_Static_assert(offsetof(struct trampoline_data, stack_top) == TP_STACK - TRAMPOLINE_DATA, "stack");
_Static_assert(offsetof(struct trampoline_data, percpu) == TP_PERCPU - TRAMPOLINE_DATA, "percpu");
_Static_assert(offsetof(struct trampoline_data, stage) == TP_STAGE - TRAMPOLINE_DATA, "stage");
_Static_assert(sizeof(struct trampoline_data) == TRAMPOLINE_DATA_END - TRAMPOLINE_DATA, "size");

/* The blob (trampoline.S) and the offsets of its 32- and 64-bit code. */
extern const uint8_t trampoline_start[], trampoline_end[];
extern const uint8_t trampoline_code32[], trampoline_code64[];

/* What every AP loads (the per-AP part is trampoline_set_cpu's). */
struct trampoline_args {
	uint64_t cr3_early;  /* the AP's first page tables: below 4 GiB */
	uint64_t kernel_cr3; /* the kernel's page tables */
	uint64_t cr0, cr4, efer; /* the boot CPU's control registers */
	uint64_t entry;      /* smp_ap_entry's address: below TRAMPOLINE_MAP_LIMIT */
};

/* The page the trampoline goes in: the lowest whole page at or above
 * TRAMPOLINE_LOWEST that ends at or below TRAMPOLINE_LIMIT, lies inside one
 * usable entry of the firmware's map (nmap entries, each refused if it
 * wraps), overlaps no entry of another type and none of the avoid ranges
 * (the EBDA, the firmware tables read at boot). 0 when there is none. */
uint64_t trampoline_pick_page(const struct mem_range *map, int nmap, const struct phys_range *avoid,
			      int navoid);

/* The blob copied into page (TRAMPOLINE_PAGE bytes, which lie at physical
 * address phys) and relocated there: the GDT pointer's base, the far
 * pointers' targets, and args. 0, or -1 with the reason when phys is not a
 * page STARTUP can start (not page aligned, below TRAMPOLINE_LOWEST or past
 * TRAMPOLINE_LIMIT) or args cannot be reached from the AP's 32-bit code
 * (tables at or above 4 GiB, an entry past TRAMPOLINE_MAP_LIMIT, a CR4 with
 * a bit 32-bit code may not set) or the blob outgrew its page. */
int trampoline_fill(uint8_t *page, uint64_t phys, const struct trampoline_args *args, const char **why);

/* The next AP's part: its APIC ID (the one CPU that may go past the check),
 * stack, per-CPU area; the stage back to NONE. */
void trampoline_set_cpu(uint8_t *page, uint8_t apic_id, uint64_t stack_top, uint64_t percpu);

/* The page's data block (the stage to watch, the strays to count). */
static inline volatile struct trampoline_data *trampoline_data_of(uint8_t *page)
{
	return (volatile struct trampoline_data *)(page + TRAMPOLINE_DATA);
}

/* The STARTUP vector for a page (phys >> 12). */
static inline uint8_t trampoline_vector(uint64_t phys) { return (uint8_t)(phys >> 12); }

#endif /* __ASSEMBLER__ */
#endif
