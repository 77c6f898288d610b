/*
 * trampoline.c: where the AP trampoline goes and how it is relocated there
 * (see trampoline.h). Pure: the kernel and tests/unit/test_trampoline.c
 * build the same file. Every map entry is the firmware's word, so a range
 * is checked for wrapping before its end is worked out.
 */
#include <string.h>
#include "trampoline.h"

#define PAGE 4096ULL
#define CR4_PCIDE (1ULL << 17) /* may not be set outside long mode */
#define EFER_LMA  (1ULL << 10) /* the CPU's to set, not ours */

/* [start, end) meets [a, b). */
static int overlaps(uint64_t start, uint64_t end, uint64_t a, uint64_t b)
{
	return start < b && a < end;
}

/* The page at p is one a map entry's type makes unusable, or one of avoid's. */
static int taken(uint64_t p, const struct mem_range *map, int nmap, const struct phys_range *avoid,
		 int navoid)
{
	for (int i = 0; i < nmap; i++) {
		if (map[i].type == MEM_USABLE || map[i].len == 0)
			continue;
		/* A wrapping entry of another type is taken to reach the top. */
		uint64_t end = map[i].base + map[i].len < map[i].base ? UINT64_MAX : map[i].base + map[i].len;
		if (overlaps(p, p + PAGE, map[i].base, end))
			return 1;
	}
	for (int i = 0; i < navoid; i++)
		if (avoid[i].end > avoid[i].start && overlaps(p, p + PAGE, avoid[i].start, avoid[i].end))
			return 1;
	return 0;
}

uint64_t trampoline_pick_page(const struct mem_range *map, int nmap, const struct phys_range *avoid,
			      int navoid)
{
	if (nmap < 0 || navoid < 0)
		return 0;
	uint64_t best = 0;
	for (int i = 0; i < nmap; i++) {
		const struct mem_range *m = &map[i];
		if (m->type != MEM_USABLE || m->len == 0 || m->base + m->len < m->base)
			continue;
		uint64_t start = (m->base + PAGE - 1) & ~(PAGE - 1);
		uint64_t end = m->base + m->len;
		if (start < m->base) /* rounding up wrapped */
			continue;
		if (start < TRAMPOLINE_LOWEST)
			start = TRAMPOLINE_LOWEST;
		if (end > TRAMPOLINE_LIMIT)
			end = TRAMPOLINE_LIMIT;
		for (uint64_t p = start; p + PAGE <= end && (best == 0 || p < best); p += PAGE) {
			if (!taken(p, map, nmap, avoid, navoid)) {
				best = p;
				break;
			}
		}
	}
	return best;
}

int trampoline_fill(uint8_t *page, uint64_t phys, const struct trampoline_args *args, const char **why)
{
	size_t len = (size_t)(trampoline_end - trampoline_start);
	if (len != TRAMPOLINE_DATA_END || len > TRAMPOLINE_PAGE) {
		*why = "the trampoline's blob is not the size trampoline.h gives it";
		return -1;
	}
	if ((phys & (PAGE - 1)) || phys < TRAMPOLINE_LOWEST || phys + PAGE > TRAMPOLINE_LIMIT) {
		*why = "the trampoline's page is not one a STARTUP IPI can start an AP in";
		return -1;
	}
	if (args->cr3_early >= (1ULL << 32) || (args->cr3_early & (PAGE - 1))) {
		*why = "the AP's first page tables are not a page below 4 GiB";
		return -1;
	}
	if (args->entry >= TRAMPOLINE_MAP_LIMIT) {
		*why = "the kernel's AP entry lies beyond the first GiB the AP's first tables map";
		return -1;
	}
	if ((args->cr4 & CR4_PCIDE) || args->cr4 >> 32 || args->cr0 >> 32) {
		*why = "the boot CPU's CR0 or CR4 holds bits 32-bit code cannot load (PCIDE, high bits)";
		return -1;
	}
	memset(page, 0, TRAMPOLINE_PAGE);
	memcpy(page, trampoline_start, len);
	struct trampoline_data *d = (struct trampoline_data *)(page + TRAMPOLINE_DATA);
	d->gdtr_base = (uint32_t)(phys + TP_GDT);
	d->far32 = (struct trampoline_far){ (uint32_t)(phys + (uint64_t)(trampoline_code32 - trampoline_start)),
					    TRAMPOLINE_SEL_CODE32, 0 };
	d->far64 = (struct trampoline_far){ (uint32_t)(phys + (uint64_t)(trampoline_code64 - trampoline_start)),
					    TRAMPOLINE_SEL_CODE64, 0 };
	d->cr3_early = (uint32_t)args->cr3_early;
	d->cr4 = (uint32_t)args->cr4;
	d->cr0 = (uint32_t)args->cr0;
	d->efer = args->efer & ~EFER_LMA;
	d->entry = args->entry;
	d->kernel_cr3 = args->kernel_cr3;
	d->stage = TRAMPOLINE_STAGE_NONE;
	return 0;
}

void trampoline_set_cpu(uint8_t *page, uint8_t apic_id, uint64_t stack_top, uint64_t percpu)
{
	volatile struct trampoline_data *d = trampoline_data_of(page);
	d->apic_id = apic_id;
	d->stack_top = stack_top;
	d->percpu = percpu;
	d->stage = TRAMPOLINE_STAGE_NONE;
}
