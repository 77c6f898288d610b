/*
 * mem.c: physical memory, page tables and the heap.
 *
 * At boot the free ranges come from the firmware's map less what is in use
 * (low memory, the loader, the image and the image file kept for symbols). The
 * largest free range serves two clients from opposite ends: newlib's heap grows
 * up from its start through kernel_sbrk(), page_alloc() takes pages down from
 * its end; exhaustion is where they meet. The kernel replaces the loader's
 * page tables with its own: RAM mapped one-to-one (page 0 left unmapped so a
 * NULL dereference faults), device memory mapped uncached on request.
 */
#include <errno.h>
#include <string.h>
#include "arch.h"
#include <reent.h>
#include "kernel.h"
#include "mem.h"
#include "memmap.h"

#define PTE_P   0x001ULL
#define PTE_W   0x002ULL
#define PTE_PWT 0x008ULL
#define PTE_PCD 0x010ULL
#define PTE_PS  0x080ULL
#define PTE_NX  (1ULL << 63)
#define PTE_ADDR 0x000ffffffffff000ULL
#define PTE_FLAGS_4K (PTE_NX | 0xfffULL)
#define MB2     (2ULL << 20)

#define MAX_RANGES 32

static struct phys_range ram[MAX_RANGES]; /* mapped RAM (usable entries) */
static int nram;
static uint64_t heap_start, heap_brk; /* newlib's heap: [heap_start, heap_brk) */
static uint64_t heap_brk_max;         /* the highest break so far */
static uint64_t pages_floor;          /* page_alloc hands out [pages_floor, pool_end) */
static uint64_t pool_end;
static uint64_t ram_total, pages_allocated;
static uint64_t *pml4;

/* ---- page allocation ---------------------------------------------------- */

void *page_alloc(size_t npages)
{
	uint64_t bytes = (uint64_t)npages * PAGE_SIZE;
	uint64_t flags = irq_save();
	if (npages == 0 || bytes > pages_floor - heap_brk) {
		irq_restore(flags);
		return NULL;
	}
	pages_floor -= bytes;
	pages_allocated += npages;
	void *p = (void *)pages_floor;
	irq_restore(flags);
	memset(p, 0, bytes);
	return p;
}

void *kernel_sbrk(intptr_t incr)
{
	uint64_t old = heap_brk;
	if ((incr > 0 && (uint64_t)incr > pages_floor - heap_brk) ||
	    (incr < 0 && (uint64_t)-incr > heap_brk - heap_start)) {
		errno = ENOMEM;
		return (void *)-1;
	}
	heap_brk += (uint64_t)incr;
	if (heap_brk > heap_brk_max)
		heap_brk_max = heap_brk;
	return (void *)old;
}

/* Bytes malloc has handed out. newlib's <malloc.h> declares struct mallinfo
 * with size_t fields, but the mallocr.c it was built from fills a struct of
 * ten ints (its own definition wins when the header is not included there),
 * so we read it the way the library writes it: uordblks is the eighth int. */
static uint64_t malloc_in_use(void)
{
	/* Returned through a hidden first argument, as any struct of its size. */
	extern void mallinfo_as_ints(int *out, struct _reent *reent) __asm__("_mallinfo_r");
	int info[20]; /* room for either layout */
	mallinfo_as_ints(info, _REENT);
	return (uint64_t)(unsigned)info[7];
}

void mem_get_stats(struct mem_stats *st)
{
	st->ram_bytes = ram_total;
	st->heap_bytes = heap_brk - heap_start;
	st->heap_high_water = heap_brk_max > heap_start ? heap_brk_max - heap_start : 0;
	st->heap_limit = pages_floor - heap_start;
	st->pages_allocated = pages_allocated;
	st->malloc_bytes = malloc_in_use();
}

int mem_is_mapped_ram(uint64_t addr, uint64_t len)
{
	if (addr < PAGE_SIZE || addr + len < addr)
		return 0;
	for (int i = 0; i < nram; i++)
		if (addr >= ram[i].start && addr + len <= ram[i].end)
			return 1;
	return 0;
}

/* ---- page tables -------------------------------------------------------- */

static int is_mapped(uint64_t va);

/* The next-level table under entry `e`, created when absent. */
static uint64_t *table_under(uint64_t *e)
{
	if (!(*e & PTE_P)) {
		uint64_t *t = page_alloc(1);
		if (!t)
			panic("out of memory for page tables");
		*e = (uint64_t)t | PTE_P | PTE_W;
	}
	KASSERT(!(*e & PTE_PS));
	return (uint64_t *)(*e & PTE_ADDR);
}

static void map_page(uint64_t va, uint64_t pa, uint64_t flags, int big)
{
	uint64_t *pdpt = table_under(&pml4[(va >> 39) & 511]);
	uint64_t *pd = table_under(&pdpt[(va >> 30) & 511]);
	if (big && !(pd[(va >> 21) & 511] & PTE_P)) {
		pd[(va >> 21) & 511] = pa | flags | PTE_PS;
		return;
	}
	if (big) { /* part of this 2 MiB is mapped with small pages already */
		for (uint64_t off = 0; off < MB2; off += PAGE_SIZE)
			if (!is_mapped(va + off))
				map_page(va + off, pa + off, flags, 0);
		return;
	}
	uint64_t *pt = table_under(&pd[(va >> 21) & 511]);
	pt[(va >> 12) & 511] = pa | flags;
}

static int is_mapped(uint64_t va)
{
	uint64_t e = pml4[(va >> 39) & 511];
	if (!(e & PTE_P))
		return 0;
	e = ((uint64_t *)(e & PTE_ADDR))[(va >> 30) & 511];
	if (!(e & PTE_P))
		return 0;
	e = ((uint64_t *)(e & PTE_ADDR))[(va >> 21) & 511];
	if (!(e & PTE_P) || (e & PTE_PS))
		return (e & PTE_P) != 0;
	return (((uint64_t *)(e & PTE_ADDR))[(va >> 12) & 511] & PTE_P) != 0;
}

/* Identity-map [start, end) with 2 MiB pages where alignment allows; pages
 * already mapped are left as they are. */
static void map_range(uint64_t start, uint64_t end, uint64_t flags)
{
	for (uint64_t a = start & ~(PAGE_SIZE - 1); a < end;) {
		if (!(a & (MB2 - 1)) && a + MB2 <= end && a >= MB2 && !is_mapped(a)) {
			map_page(a, a, flags, 1);
			a += MB2;
		} else {
			if (a != 0 && !is_mapped(a)) /* page 0 stays unmapped: NULL faults */
				map_page(a, a, flags, 0);
			a += PAGE_SIZE;
		}
	}
}

/* The 4 KiB entry for va, splitting a 2 MiB page into 512 small ones (same
 * frames, same flags) when one covers it. va must be mapped. */
static uint64_t *pte_4k(uint64_t va)
{
	uint64_t *pdpt = table_under(&pml4[(va >> 39) & 511]);
	uint64_t *pd = table_under(&pdpt[(va >> 30) & 511]);
	uint64_t *pde = &pd[(va >> 21) & 511];
	if (*pde & PTE_PS) {
		uint64_t *pt = page_alloc(1);
		if (!pt)
			panic("out of memory for page tables");
		uint64_t base = *pde & PTE_ADDR & ~(MB2 - 1), flags = *pde & (PTE_NX | 0x1f);
		for (int i = 0; i < 512; i++)
			pt[i] = (base + (uint64_t)i * PAGE_SIZE) | flags;
		*pde = (uint64_t)pt | PTE_P | PTE_W;
	}
	return &table_under(pde)[(va >> 12) & 511];
}

/* W^X for the image (text read-only and executable, read-only data and
 * everything writable never executable) and the boot stack's guard page. */
static void protect_image(void)
{
	extern char __image_start[], __text_end[], __rodata_end[], __image_end[];
	extern char boot_stack_guard[];
	for (uint64_t a = (uint64_t)__image_start; a < (uint64_t)__image_end; a += PAGE_SIZE) {
		uint64_t *pte = pte_4k(a);
		uint64_t flags = a < (uint64_t)__text_end ? PTE_P
			       : a < (uint64_t)__rodata_end ? PTE_P | PTE_NX
			       : PTE_P | PTE_W | PTE_NX;
		*pte = (*pte & PTE_ADDR) | flags;
	}
	*pte_4k((uint64_t)boot_stack_guard) = 0;
}

void *mmio_map(uint64_t phys, size_t len)
{
	uint64_t end = phys + len;
	for (uint64_t a = phys & ~(PAGE_SIZE - 1); a < end; a += PAGE_SIZE)
		if (!is_mapped(a))
			map_page(a, a, PTE_P | PTE_W | PTE_PCD | PTE_PWT | PTE_NX, 0);
	__asm__ volatile("mov %%cr3, %%rax; mov %%rax, %%cr3" ::: "rax", "memory");
	return (void *)phys;
}

/* ---- set-up ------------------------------------------------------------- */

void mem_init(const struct bootinfo *bi)
{
	const struct phys_range in_use[] = {
		{ 0, 0x100000 }, /* real-mode area, BIOS */
		{ bi->loader_start, bi->loader_end },
		{ bi->load_start, bi->load_end },
		{ bi->image_base, bi->image_base + bi->image_size },
	};
	struct phys_range free[MAX_RANGES];
	int nfree = memmap_free_ranges(bi->mem, (int)bi->nmem, in_use, 4, free, MAX_RANGES, NULL);
	nram = memmap_free_ranges(bi->mem, (int)bi->nmem, NULL, 0, ram, MAX_RANGES, NULL);
	ram_total = memmap_total(ram, nram);
	if (nfree == 0)
		panic("no free memory in the firmware's map");

	int big = 0;
	for (int i = 1; i < nfree; i++)
		if (free[i].end - free[i].start > free[big].end - free[big].start)
			big = i;
	heap_start = heap_brk = heap_brk_max = free[big].start;
	pages_floor = pool_end = free[big].end;

	/* Our own page tables: RAM one-to-one (the loader's map stays in force
	 * until the switch, and covers every table we allocate). */
	pml4 = page_alloc(1);
	if (!pml4)
		panic("no memory for page tables");
	for (int i = 0; i < nram; i++)
		map_range(ram[i].start, ram[i].end, PTE_P | PTE_W | PTE_NX);
	/* The loader and the image may sit in RAM the map calls reserved only if
	 * the firmware lied; map them anyway so we keep running. */
	map_range(bi->load_start, bi->load_end, PTE_P | PTE_W | PTE_NX);
	protect_image();
	write_cr3((uint64_t)pml4);
	write_cr0(read_cr0() | (1ULL << 16)); /* WP: read-only pages bind ring 0 too */
}
