/*
 * paging.c: the page tables the loader hands to the image, with W^X.
 *
 * entry.S's boot map (the first 4 GiB in 2 MiB pages, all writable and
 * executable) serves while the loader copies the image, but the image must not
 * start on it: until the kernel installs its own tables, its code would be
 * writable and all of memory executable. So just before the jump the loader
 * switches to a second map, built here:
 *
 *   - the first 4 GiB one-to-one, writable and never executable, in 2 MiB
 *     pages: RAM (the kernel's first page tables and its heap come from it),
 *     low memory, the multiboot records, the image file (symbols), the
 *     bootinfo record, the loader's stack and data, MMIO (LAPIC, I/O APIC);
 *   - the loader's own text read-only and executable, as it still runs the
 *     jump, and its read-only data read-only (loader.ld page-aligns them);
 *   - each image segment by its ELF flags: PF_X read-only and executable,
 *     neither PF_W nor PF_X read-only; PF_W segments keep the default.
 *
 * Only the 2 MiB pages holding something other than the default are split into
 * 4 KiB pages, from a fixed pool (PAGING_MAX_PT). image_plan() has refused any
 * segment both writable and executable and any page shared by segments of
 * different permissions, so setting pages segment by segment is exact.
 */
#include <stddef.h>
#include <stdint.h>
#include "elf64.h"
#include "paging.h"

#define PTE_P    0x001ULL
#define PTE_W    0x002ULL
#define PTE_PS   0x080ULL
#define PTE_NX   (1ULL << 63)
#define PTE_ADDR 0x000ffffffffff000ULL
#define PAGE     4096ULL
#define MB2      (2ULL << 20)
#define NPD      4 /* page directories: 4 GiB */

#define EFER_MSR 0xC0000080
#define EFER_NXE (1u << 11)
#define CR0_WP   (1ULL << 16)

#define STR(x)  #x
#define XSTR(x) STR(x)

extern char __loader_start[], __loader_text_end[], __loader_rodata_end[], __loader_end[];
#define L(sym) ((uint64_t)(sym))

static uint64_t pml4[512] __attribute__((aligned(4096)));
static uint64_t pdpt[512] __attribute__((aligned(4096)));
static uint64_t pd[NPD * 512] __attribute__((aligned(4096))); /* pd[va >> 21] */
static uint64_t pt[PAGING_MAX_PT][512] __attribute__((aligned(4096)));
static int npt;

static void cpuid(uint32_t leaf, uint32_t *eax, uint32_t *edx)
{
	uint32_t ebx, ecx;
	__asm__ volatile("cpuid" : "=a"(*eax), "=b"(ebx), "=c"(ecx), "=d"(*edx) : "a"(leaf), "c"(0));
}

int paging_cpu_has_nx(void)
{
	uint32_t max, edx;
	cpuid(0x80000000, &max, &edx);
	if (max < 0x80000001)
		return 0;
	cpuid(0x80000001, &max, &edx);
	return (edx >> 20) & 1;
}

/* The 4 KiB entry for va. Its 2 MiB page is split first if it has not been
 * (same frames, the default permissions); NULL when the pool is used up. */
static uint64_t *pte(uint64_t va)
{
	uint64_t *pde = &pd[va >> 21];
	if (*pde & PTE_PS) {
		if (npt == PAGING_MAX_PT)
			return NULL;
		uint64_t *t = pt[npt++];
		for (uint64_t i = 0; i < 512; i++)
			t[i] = ((va & ~(MB2 - 1)) + i * PAGE) | PTE_P | PTE_W | PTE_NX;
		*pde = (uint64_t)t | PTE_P | PTE_W; /* the leaves alone set W and NX */
	}
	return (uint64_t *)(*pde & PTE_ADDR) + ((va >> 12) & 511);
}

/* Map [start, end) read-only, executable or not: 0, or -1 when out of tables. */
static int map_readonly(uint64_t start, uint64_t end, int exec)
{
	for (uint64_t a = start & ~(PAGE - 1); a < end; a += PAGE) {
		uint64_t *e = pte(a);
		if (!e)
			return -1;
		*e = a | PTE_P | (exec ? 0 : PTE_NX);
	}
	return 0;
}

/* The leaf entry mapping va (below 4 GiB): a 2 MiB or a 4 KiB one. The upper
 * levels are all present, writable and executable, so it alone decides. */
static uint64_t leaf(uint64_t va)
{
	uint64_t pde = pd[va >> 21];
	return pde & PTE_PS ? pde : ((uint64_t *)(pde & PTE_ADDR))[(va >> 12) & 511];
}

static int writable(uint64_t e)
{
	return (e & PTE_P) && (e & PTE_W);
}

static int executable(uint64_t e)
{
	return (e & PTE_P) && !(e & PTE_NX);
}

/* Whether every page of [start, end) is present with exactly these rights. */
static int mapped_as(uint64_t start, uint64_t end, int w, int x)
{
	for (uint64_t a = start & ~(PAGE - 1); a < end; a += PAGE) {
		uint64_t e = leaf(a);
		if (!(e & PTE_P) || writable(e) != !!w || executable(e) != !!x)
			return 0;
	}
	return 1;
}

/* What the image relies on at its first instruction, and what the loader needs
 * to get there (a mistake would be a triple fault with no message). Every leaf
 * once: 2048 entries and 512 per split page, so it is always checked. */
static const char *check(const struct image_plan *plan)
{
	for (int i = 0; i < NPD * 512; i++) {
		const uint64_t *e = &pd[i], *end = e + 1;
		if (!(pd[i] & PTE_PS))
			e = (const uint64_t *)(pd[i] & PTE_ADDR), end = e + 512;
		for (; e < end; e++)
			if (writable(*e) && executable(*e))
				return "internal: a page would be both writable and executable";
	}
	for (int i = 0; i < plan->nseg; i++) {
		const struct image_segment *s = &plan->seg[i];
		if (!mapped_as(s->paddr, s->paddr + s->memsz, s->flags & PF_W, s->flags & PF_X))
			return "internal: an image segment is not mapped as its flags say";
	}
	if (!mapped_as(L(__loader_start), L(__loader_text_end), 0, 1) ||
	    !mapped_as(L(__loader_text_end), L(__loader_rodata_end), 0, 0) ||
	    !mapped_as(L(__loader_rodata_end), L(__loader_end), 1, 0))
		return "internal: the loader is not mapped as it is linked";
	return NULL;
}

static void count(uint64_t start, uint64_t end, struct page_counts *n)
{
	*n = (struct page_counts){ 0 };
	for (uint64_t a = start & ~(PAGE - 1); a < end; a += PAGE) {
		uint64_t e = leaf(a);
		if (executable(e))
			n->rx++;
		else if (writable(e))
			n->rw++;
		else
			n->r++;
	}
}

const char *paging_build(const struct image_plan *plan, struct page_counts *image,
			 struct page_counts *loader)
{
	pml4[0] = (uint64_t)pdpt | PTE_P | PTE_W;
	for (int i = 0; i < NPD; i++)
		pdpt[i] = (uint64_t)&pd[i * 512] | PTE_P | PTE_W;
	for (uint64_t i = 0; i < NPD * 512; i++)
		pd[i] = (i * MB2) | PTE_P | PTE_W | PTE_PS | PTE_NX;
	npt = 0;

	/* The loader first: its text takes one table, so the image gets the rest. */
	if (map_readonly(L(__loader_start), L(__loader_text_end), 1) < 0 ||
	    map_readonly(L(__loader_text_end), L(__loader_rodata_end), 0) < 0)
		return "internal: no page table for the loader's own text";
	for (int i = 0; i < plan->nseg; i++) {
		const struct image_segment *s = &plan->seg[i];
		if (!(s->flags & PF_W) &&
		    map_readonly(s->paddr, s->paddr + s->memsz, s->flags & PF_X) < 0)
			return "image text and read-only data span more than "
			       XSTR(PAGING_IMAGE_PT) " 2 MiB pages, the most the loader's page tables split";
	}
	const char *why = check(plan);
	if (why)
		return why;
	count(plan->start, plan->end, image);
	count(L(__loader_start), L(__loader_end), loader);
	return NULL;
}

void paging_enter(void)
{
	uint32_t lo, hi;
	/* NXE before CR3: without it the NX bits would be reserved bits. */
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(EFER_MSR));
	__asm__ volatile("wrmsr" : : "a"(lo | EFER_NXE), "d"(hi), "c"(EFER_MSR));
	__asm__ volatile("mov %0, %%cr3" : : "r"((uint64_t)pml4) : "memory");
	uint64_t cr0;
	__asm__ volatile("mov %%cr0, %0" : "=r"(cr0));
	/* WP: read-only pages bind ring 0 too, or the W^X above would not hold. */
	__asm__ volatile("mov %0, %%cr0" : : "r"(cr0 | CR0_WP) : "memory");
}
