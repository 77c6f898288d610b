/*
 * mem.c: physical memory, page tables and the heap.
 *
 * At boot the free ranges come from the firmware's map less what is in use
 * (low memory, the loader and its page tables, the image and the image file
 * kept for symbols), below the limit the loader could map (the CPU's physical
 * address width). They serve newlib's heap (kernel_sbrk) and page_alloc
 * from opposite ends, in address order, each moving to the next range when
 * one is full (physmem.c), so all of RAM, above 4 GiB included, is there for
 * both, and nothing is touched until it is handed out (a 64 GiB guest boots as
 * fast as a small one).
 *
 * The kernel replaces the loader's page tables with its own: RAM mapped
 * one-to-one (page 0 left unmapped so a NULL dereference faults), device
 * memory mapped uncached on request. RAM the kernel cannot use is reported
 * at boot in one line.
 *
 * All of it is the boot CPU's: the free ranges, newlib's heap and the page
 * tables, which other CPUs only read (no lock; debug builds check the
 * allocators' callers, and nothing flushes another CPU's TLB: docs/design/smp.md).
 */
#include <errno.h>
#include <string.h>
#include "arch.h"
#include <reent.h>
#include "kernel.h"
#include "mem.h"
#include "boot/memmap.h"
#include "percpu.h"
#include "physmem.h"
#include "switches.h"

#define PTE_P   0x001ULL
#define PTE_W   0x002ULL
#define PTE_PWT 0x008ULL
#define PTE_PCD 0x010ULL
#define PTE_PS  0x080ULL
#define PTE_NX  (1ULL << 63)
#define PTE_ADDR 0x000ffffffffff000ULL
#define PTE_FLAGS_4K (PTE_NX | 0xfffULL)
#define MB2     (2ULL << 20)

#define MAX_RANGES PHYSMEM_MAX_RANGES

static struct phys_range ram[MAX_RANGES]; /* mapped RAM (usable entries below the limit) */
static int nram;
static struct physmem phys;               /* the free RAM: heap and pages */
static uint64_t ram_total, pages_allocated;
static uint64_t *pml4;

/* ---- page allocation ---------------------------------------------------- */

void *page_alloc(size_t npages)
{
	KASSERT(on_boot_cpu()); /* the boot CPU's (docs/design/smp.md): no lock */
	uint64_t bytes = (uint64_t)npages * PAGE_SIZE;
	uint64_t flags = irq_save();
	uint64_t p = physmem_pages(&phys, bytes);
	if (p)
		pages_allocated += npages;
	irq_restore(flags);
	if (p)
		memset((void *)p, 0, bytes);
	return (void *)p;
}

/*
 * The network's heap (lwIP's, net/net.c; lwipopts.h says why it is not BSS),
 * set aside at boot as untouched pages when the network is linked in: a
 * weak reference, so an image without sockets, which does not link net.c,
 * sets nothing aside. It is taken off the free ranges before the heap and
 * the pages are laid out, as BSS would have been: one contiguous run, and
 * the heap's range chosen from what is left.
 */
extern const size_t net_heap_arena_bytes __attribute__((weak));
static void *net_heap_arena;

void *kmem_net_heap_arena(void) { return net_heap_arena; }

/* Takes bytes (whole pages) off the top of the highest of the n free ranges
 * that holds them, dropping a range it empties; its address, or 0 when none
 * holds them. */
static uint64_t take_off_top(struct phys_range *free, int *n, uint64_t bytes)
{
	for (int i = *n - 1; i >= 0; i--) {
		uint64_t end = free[i].end & ~(PAGE_SIZE - 1);
		if (end <= free[i].start || end - free[i].start < bytes)
			continue;
		uint64_t at = end - bytes;
		free[i].end = at;
		if (free[i].end == free[i].start) {
			for (int j = i; j < *n - 1; j++)
				free[j] = free[j + 1];
			(*n)--;
		}
		return at;
	}
	return 0;
}

void *kernel_sbrk(intptr_t incr)
{
#if SMP_DESIGN
	KASSERT(malloc_lock_held()); /* newlib's heap is shared then (malloc_lock.c) */
#else
	KASSERT(on_boot_cpu());
#endif
	uint64_t flags = irq_save();
	uint64_t old = physmem_break(&phys, incr);
	irq_restore(flags);
	if (!old) {
		errno = ENOMEM;
		return (void *)-1;
	}
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

uint64_t mem_heap_room(void)
{
	uint64_t flags = irq_save();
	uint64_t room = physmem_heap_room(&phys);
	irq_restore(flags);
	return room;
}

void mem_get_stats(struct mem_stats *st)
{
	uint64_t flags = irq_save();
	st->ram_bytes = ram_total;
	st->heap_bytes = physmem_heap_bytes(&phys);
	st->heap_high_water = phys.heap_max;
	st->heap_limit = st->heap_bytes + physmem_heap_room(&phys);
	st->pages_allocated = pages_allocated;
	uint64_t jumped = phys.jumped;
	irq_restore(flags);
	/* When the break jumps to another range, newlib's malloc takes the gap
	 * for someone else's memory ("foreign sbrk") and counts it in use: the
	 * bytes malloc really handed out are the rest. */
	uint64_t in_use = malloc_in_use();
	st->malloc_bytes = in_use > jumped ? in_use - jumped : 0;
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
	KCHECK(!(*e & PTE_PS));
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

void mem_guard_page(uint64_t va)
{
	KCHECK(!(va & (PAGE_SIZE - 1)) && is_mapped(va));
	*pte_4k(va) = 0;
	__asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
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

/* Keeps of the sorted ranges r only what lies below limit; the new count. */
static int clip(struct phys_range *r, int n, uint64_t limit)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (r[i].start >= limit)
			continue;
		r[k] = r[i];
		if (r[k].end > limit)
			r[k].end = limit;
		k++;
	}
	return k;
}

/* One line when some RAM is left out: above the loader's mapped limit (the
 * CPU's physical address width, paging's reach, or where the loader's tables
 * ran out), or listed in memory-map entries nobody kept. */
static void report_unusable(const struct bootinfo *bi, uint64_t above, int ranges_dropped)
{
	uint64_t lost = above + bi->mem_dropped_usable;
	if (!lost && !bi->mem_dropped && !ranges_dropped)
		return;
	uint64_t cpu_limit = bi->cpu_phys_bits >= 47 ? 1ULL << 47 : 1ULL << bi->cpu_phys_bits;
	const char *sep = ":";
	kprintf("kernel: %lu MiB of RAM not usable", lost >> 20);
	if (above) {
		kprintf("%s %lu MiB above 0x%lx (%s)", sep, above >> 20, bi->ram_limit,
			bi->ram_limit != cpu_limit && bi->protocol == BOOT_PVH
				? "the PVH entry's map: the CPU has no 1 GiB pages"
			: bi->ram_limit != cpu_limit ? "where the loader's page tables ran out"
			: bi->cpu_phys_bits >= 47 ? "4-level paging's reach"
			: "the CPU's physical address width");
		sep = ";";
	}
	if (bi->mem_dropped) {
		kprintf("%s %u memory-map entries past the loader's %d (%lu MiB usable)", sep,
			bi->mem_dropped, BOOTINFO_MAX_MEM, bi->mem_dropped_usable >> 20);
		sep = ";";
	}
	if (ranges_dropped)
		kprintf("%s %d free ranges past the kernel's %d", sep, ranges_dropped, MAX_RANGES);
	kprintf("\n");
}

void kmem_init(const struct bootinfo *bi)
{
	const struct phys_range in_use[] = {
		{ 0, 0x100000 }, /* real-mode area, BIOS */
		{ bi->loader_start, bi->loader_end },
		{ bi->tables_start, bi->tables_end }, /* the map in force until write_cr3 */
		{ bi->load_start, bi->load_end },
		{ bi->image_base, bi->image_base + bi->image_size },
	};
	struct phys_range free[MAX_RANGES];
	int dropped_ram, dropped_free;
	nram = memmap_free_ranges(bi->mem, (int)bi->nmem, NULL, 0, ram, MAX_RANGES, &dropped_ram);
	int nfree = memmap_free_ranges(bi->mem, (int)bi->nmem, in_use, 5, free, MAX_RANGES, &dropped_free);
	uint64_t listed = memmap_total(ram, nram);
	nram = clip(ram, nram, bi->ram_limit);
	nfree = clip(free, nfree, bi->ram_limit);
	ram_total = memmap_total(ram, nram);
	report_unusable(bi, listed - ram_total, dropped_ram > dropped_free ? dropped_ram : dropped_free);
	if (nfree == 0)
		panic("no free memory in the firmware's map");
	if (&net_heap_arena_bytes && net_heap_arena_bytes) {
		uint64_t pages = (net_heap_arena_bytes + PAGE_SIZE - 1) / PAGE_SIZE;
		net_heap_arena = (void *)take_off_top(free, &nfree, pages * PAGE_SIZE);
		if (net_heap_arena)
			pages_allocated += pages;
	}
	if (nfree == 0)
		panic("no free memory beside the network's heap");
	physmem_init(&phys, free, nfree);

	/* Our own page tables: RAM one-to-one (the loader's map stays in force
	 * until the switch, and covers all of RAM below ram_limit, so every
	 * table we allocate). */
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

void mem_print_layout(void)
{
	const struct phys_range *r = phys.range;
	int n = phys.nrange;
	kprintf("kernel: RAM %lu MiB in %d ranges up to 0x%lx; free %lu MiB in %d ranges: "
		"heap up from 0x%lx, pages down from 0x%lx\n",
		ram_total >> 20, nram, nram ? ram[nram - 1].end : 0, memmap_total(r, n) >> 20, n,
		r[phys.heap_range].start, r[n - 1].end);
}
