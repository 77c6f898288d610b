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
 *     pages: RAM below the PCI hole (the image, its file, the multiboot
 *     records, the bootinfo record, the loader's stack and data), low memory,
 *     MMIO (LAPIC, I/O APIC);
 *   - every usable RAM range above 4 GiB in the firmware's map, one-to-one,
 *     writable and never executable, in 2 MiB pages, below the CPU's physical
 *     address width (`limit`): the kernel builds its own tables and heap from
 *     any of it while this map is still in force;
 *   - the loader's own text read-only and executable, as it still runs the
 *     jump, and its read-only data read-only (loader.ld page-aligns them);
 *   - each image segment by its ELF flags: PF_X read-only and executable,
 *     neither PF_W nor PF_X read-only; PF_W segments keep the default.
 *
 * The tables for the first 4 GiB are the loader's own (static). Those for RAM
 * above it are sized by the map: the caller gives a pool of free pages below
 * 4 GiB (paging_pool_pages() says how many may be needed) and reports the
 * pages used to the kernel, which keeps them until it has its own tables.
 *
 * Only the 2 MiB pages holding something other than the default are split into
 * 4 KiB pages, from a fixed pool (PAGING_MAX_PT). image_plan() has refused any
 * segment both writable and executable and any page shared by segments of
 * different permissions, so setting pages segment by segment is exact.
 */
#include <stddef.h>
#include <stdint.h>
#include "boot/elf64.h"
#include "paging.h"

#define PTE_P    0x001ULL
#define PTE_W    0x002ULL
#define PTE_PS   0x080ULL
#define PTE_NX   (1ULL << 63)
#define PTE_ADDR 0x000ffffffffff000ULL
#define PAGE     4096ULL
#define MB2      (2ULL << 20)
#define GB1      (1ULL << 30)
#define LOW      (4 * GB1) /* the static tables' reach */
#define NPD      4         /* page directories of the first 4 GiB */

#define EFER_MSR 0xC0000080
#define EFER_NXE (1u << 11)
#define CR0_WP   (1ULL << 16)

#define STR(x)  #x
#define XSTR(x) STR(x)

extern char __loader_start[], __loader_text_end[], __loader_rodata_end[], __loader_end[];
#define L(sym) ((uint64_t)(sym))

static uint64_t pml4[512] __attribute__((aligned(4096)));
static uint64_t pdpt[512] __attribute__((aligned(4096))); /* the first 512 GiB */
static uint64_t pd[NPD * 512] __attribute__((aligned(4096))); /* pd[va >> 21], below 4 GiB */
static uint64_t pt[PAGING_MAX_PT][512] __attribute__((aligned(4096)));
static int npt;
static uint64_t *pool;       /* pages for the tables above 4 GiB */
static uint64_t pool_pages;  /* how many */
static uint64_t pool_used;   /* how many taken */

/* A zeroed page from the pool, or NULL when it is used up. */
static uint64_t *pool_take(void)
{
	if (pool_used == pool_pages)
		return NULL;
	uint64_t *t = pool + pool_used++ * 512;
	for (int i = 0; i < 512; i++)
		t[i] = 0;
	return t;
}

/* The table under entry *e, taken from the pool when absent (create) or NULL. */
static uint64_t *table_under(uint64_t *e, int create)
{
	if (!(*e & PTE_P)) {
		uint64_t *t = create ? pool_take() : NULL;
		if (!t)
			return NULL;
		*e = (uint64_t)t | PTE_P | PTE_W; /* the leaves alone set W and NX */
	}
	return (uint64_t *)(*e & PTE_ADDR);
}

/* The page-directory entry for va; its tables are made when create is set.
 * NULL when they are absent, or the pool is used up. */
static uint64_t *pde_of(uint64_t va, int create)
{
	if (va < LOW)
		return &pd[va >> 21];
	uint64_t *dirs = table_under(&pml4[(va >> 39) & 511], create);
	uint64_t *dir = dirs ? table_under(&dirs[(va >> 30) & 511], create) : NULL;
	return dir ? &dir[(va >> 21) & 511] : NULL;
}

/* The 4 KiB entry for va (below 4 GiB). Its 2 MiB page is split first if it
 * has not been (same frames, the default permissions); NULL when the pool of
 * small tables is used up. */
static uint64_t *pte(uint64_t va)
{
	uint64_t *pde = pde_of(va, 0);
	if (*pde & PTE_PS) {
		if (npt == PAGING_MAX_PT)
			return NULL;
		uint64_t *t = pt[npt++];
		for (uint64_t i = 0; i < 512; i++)
			t[i] = ((va & ~(MB2 - 1)) + i * PAGE) | PTE_P | PTE_W | PTE_NX;
		*pde = (uint64_t)t | PTE_P | PTE_W;
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

/* The leaf entry mapping va, 0 when none does; *size is what it maps (2 MiB
 * or 4 KiB; the upper levels are all writable and executable, so the leaf
 * alone decides). */
static uint64_t leaf(uint64_t va, uint64_t *size)
{
	const uint64_t *pde = pde_of(va, 0);
	*size = MB2;
	if (!pde || !(*pde & PTE_P) || (*pde & PTE_PS))
		return pde ? *pde : 0;
	*size = PAGE;
	return ((const uint64_t *)(*pde & PTE_ADDR))[(va >> 12) & 511];
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
	uint64_t size;
	for (uint64_t a = start & ~(PAGE - 1); a < end; a += PAGE) {
		uint64_t e = leaf(a, &size);
		if (!(e & PTE_P) || writable(e) != !!w || executable(e) != !!x)
			return 0;
	}
	return 1;
}

/* Whether some leaf under this table (level 3 = PDPT, 2 = PD, 1 = PT) is both
 * writable and executable. */
static int any_wx(const uint64_t *table, int level)
{
	for (int i = 0; i < 512; i++) {
		uint64_t e = table[i];
		if (!(e & PTE_P))
			continue;
		if (level == 1 || (level == 2 && (e & PTE_PS))) {
			if (writable(e) && executable(e))
				return 1;
		} else if (any_wx((const uint64_t *)(e & PTE_ADDR), level - 1)) {
			return 1;
		}
	}
	return 0;
}

/* What the image relies on at its first instruction, and what the loader needs
 * to get there (a mistake would be a triple fault with no message). Every leaf
 * once, so it is always checked; RAM in 2 MiB steps where a 2 MiB page maps it. */
static const char *check(const struct image_plan *plan, const struct phys_range *ram, int nram,
			 uint64_t ram_limit)
{
	for (int i = 0; i < 512; i++)
		if ((pml4[i] & PTE_P) && any_wx((const uint64_t *)(pml4[i] & PTE_ADDR), 3))
			return "internal: a page would be both writable and executable";
	for (int i = 0; i < plan->nseg; i++) {
		const struct image_segment *s = &plan->seg[i];
		if (!mapped_as(s->paddr, s->paddr + s->memsz, s->flags & PF_W, s->flags & PF_X))
			return "internal: an image segment is not mapped as its flags say";
	}
	if (!mapped_as(L(__loader_start), L(__loader_text_end), 0, 1) ||
	    !mapped_as(L(__loader_text_end), L(__loader_rodata_end), 0, 0) ||
	    !mapped_as(L(__loader_rodata_end), L(__loader_end), 1, 0))
		return "internal: the loader is not mapped as it is linked";
	for (int i = 0; i < nram; i++) {
		uint64_t end = ram[i].end < ram_limit ? ram[i].end : ram_limit, size = PAGE;
		for (uint64_t a = ram[i].start; a < end; a = (a & ~(size - 1)) + size)
			if (!(leaf(a, &size) & PTE_P))
				return "internal: usable RAM below the mapped limit is not mapped";
	}
	return NULL;
}

static void count(uint64_t start, uint64_t end, struct page_counts *n)
{
	uint64_t size;
	*n = (struct page_counts){ 0 };
	for (uint64_t a = start & ~(PAGE - 1); a < end; a += PAGE) {
		uint64_t e = leaf(a, &size);
		if (executable(e))
			n->rx++;
		else if (writable(e))
			n->rw++;
		else
			n->r++;
	}
}

/* [start, end) of RAM range r above 4 GiB and below limit, grown to 2 MiB
 * pages; false when nothing of it is there. */
static int high_part(const struct phys_range *r, uint64_t limit, uint64_t *start, uint64_t *end)
{
	uint64_t s = r->start > LOW ? r->start : LOW, e = r->end < limit ? r->end : limit;
	if (s >= e)
		return 0;
	*start = s & ~(MB2 - 1);
	*end = (e + MB2 - 1) & ~(MB2 - 1);
	return 1;
}

uint64_t paging_pool_pages(const struct phys_range *ram, int nram, uint64_t limit)
{
	uint64_t n = 0, s, e;
	for (int i = 0; i < nram; i++) {
		if (!high_part(&ram[i], limit, &s, &e))
			continue;
		n += ((e - 1) >> 30) - (s >> 30) + 1; /* page directories: one per GiB */
		n += ((e - 1) >> 39) - (s >> 39) + 1; /* directory tables: one per 512 GiB */
	}
	return n;
}

/* RAM above 4 GiB, one-to-one in 2 MiB pages, ranges in ascending order. The
 * address below which all of it is mapped: limit, or where the pool ran out. */
static uint64_t map_high_ram(const struct phys_range *ram, int nram, uint64_t limit)
{
	uint64_t s, e;
	for (int i = 0; i < nram; i++) {
		if (!high_part(&ram[i], limit, &s, &e))
			continue;
		for (uint64_t a = s; a < e; a += MB2) {
			uint64_t *pde = pde_of(a, 1);
			if (!pde)
				return a;
			*pde = a | PTE_P | PTE_W | PTE_PS | PTE_NX;
		}
	}
	return limit;
}

const char *paging_build(const struct image_plan *plan, const struct phys_range *ram, int nram,
			 uint64_t limit, uint64_t *table_pool, uint64_t table_pool_pages,
			 struct paging_map *out)
{
	for (int i = 0; i < 512; i++)
		pml4[i] = pdpt[i] = 0;
	pml4[0] = (uint64_t)pdpt | PTE_P | PTE_W;
	for (int i = 0; i < NPD; i++)
		pdpt[i] = (uint64_t)&pd[i * 512] | PTE_P | PTE_W;
	for (uint64_t i = 0; i < NPD * 512; i++)
		pd[i] = (i * MB2) | PTE_P | PTE_W | PTE_PS | PTE_NX;
	npt = 0;
	pool = table_pool;
	pool_pages = table_pool_pages;
	pool_used = 0;

	if (limit < LOW)
		limit = LOW; /* the first 4 GiB are mapped whatever the CPU says */
	out->ram_limit = map_high_ram(ram, nram, limit);
	out->tables_used = pool_used;

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
	const char *why = check(plan, ram, nram, out->ram_limit);
	if (why)
		return why;
	count(plan->start, plan->end, &out->image);
	count(L(__loader_start), L(__loader_end), &out->loader);
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
