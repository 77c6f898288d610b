/*
 * test_trampoline.c: where the AP trampoline goes and how it is relocated
 * (kernel/trampoline.c), with the real blob (kernel/trampoline.S, built for
 * the host: it is bytes here, never run). The page: the lowest free one of
 * low RAM in the maps SeaBIOS, qboot and a PVH start info give, and in
 * hostile ones (entries that wrap, reserved ranges inside usable ones, no
 * low RAM at all, usable RAM claimed over the video hole). The relocation:
 * every address the blob's code jumps to or loads is the page's address
 * plus the right offset, for every page STARTUP can reach, and what cannot
 * be reached from the AP's 32-bit code is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/trampoline.h"

/* trampoline.S's 64-bit part calls it; never run here. */
void smp_ap_main(void *percpu);
void smp_ap_main(void *percpu) { (void)percpu; }

static const char *why;

#define R(b, l, t) { (b), (l), (t), 0 }

static void page_in_the_usual_maps(void **state)
{
	(void)state;
	/* SeaBIOS on pc: 639 KiB, the EBDA's KiB reserved, the BIOS. */
	const struct mem_range seabios[] = {
		R(0, 0x9fc00, MEM_USABLE), R(0x9fc00, 0x400, MEM_RESERVED),
		R(0xf0000, 0x10000, MEM_RESERVED), R(0x100000, 0xfee0000, MEM_USABLE),
	};
	assert_int_equal(trampoline_pick_page(seabios, 4, NULL, 0), 0x1000);
	/* With the EBDA and a table at 0x1000-0x2fff to keep clear of. */
	const struct phys_range avoid[] = { { 0x9f000, 0xa0000 }, { 0x1800, 0x2010 } };
	assert_int_equal(trampoline_pick_page(seabios, 4, avoid, 2), 0x3000);
	/* qboot's: low RAM from 0, an NVS range for ACPI, all in order. */
	const struct mem_range qboot[] = {
		R(0, 639 * 1024, MEM_USABLE), R(639 * 1024, 1024, MEM_RESERVED),
		R(0xd0000, 0x20000, MEM_NVS), R(0xf0000, 0x10000, MEM_RESERVED),
		R(0x100000, 0x7f00000, MEM_USABLE),
	};
	assert_int_equal(trampoline_pick_page(qboot, 5, NULL, 0), 0x1000);
	/* Out of order, low RAM starting at an odd byte. */
	const struct mem_range odd[] = { R(0x100000, 0x100000, MEM_USABLE), R(0x2345, 0x8000, MEM_USABLE) };
	assert_int_equal(trampoline_pick_page(odd, 2, NULL, 0), 0x3000);
}

static void page_in_hostile_maps(void **state)
{
	(void)state;
	/* No RAM below 1 MiB, or only page 0, or less than a page. */
	const struct mem_range high[] = { R(0x100000, 0x1000000, MEM_USABLE) };
	assert_int_equal(trampoline_pick_page(high, 1, NULL, 0), 0);
	const struct mem_range page0[] = { R(0, 0x1000, MEM_USABLE) };
	assert_int_equal(trampoline_pick_page(page0, 1, NULL, 0), 0);
	const struct mem_range sliver[] = { R(0x1000, 0xfff, MEM_USABLE) };
	assert_int_equal(trampoline_pick_page(sliver, 1, NULL, 0), 0);
	/* A reserved range inside the usable one, listed later, and one
	 * overlapping a page by a byte. */
	const struct mem_range holes[] = {
		R(0, 0x9fc00, MEM_USABLE), R(0x1000, 0x1000, MEM_RESERVED), R(0x2fff, 1, MEM_ACPI),
	};
	assert_int_equal(trampoline_pick_page(holes, 3, NULL, 0), 0x3000);
	/* A usable entry that wraps past the top: not used. */
	const struct mem_range wraps[] = { R(0x5000, UINT64_MAX - 0x1000, MEM_USABLE) };
	assert_int_equal(trampoline_pick_page(wraps, 1, NULL, 0), 0);
	/* A reserved entry that wraps takes everything from its base. */
	const struct mem_range wraps_reserved[] = {
		R(0, 0x9f000, MEM_USABLE), R(0x4000, UINT64_MAX - 0x1000, MEM_RESERVED),
	};
	assert_int_equal(trampoline_pick_page(wraps_reserved, 2, NULL, 0), 0x1000);
	const struct mem_range wraps_low[] = {
		R(0, 0x9f000, MEM_USABLE), R(0x1000, UINT64_MAX, MEM_BAD),
	};
	assert_int_equal(trampoline_pick_page(wraps_low, 2, NULL, 0), 0);
	/* Usable RAM claimed over the video hole and the BIOS: the page still
	 * lies below 640 KiB. */
	const struct mem_range greedy[] = { R(0x9f000, 0x100000, MEM_USABLE) };
	assert_int_equal(trampoline_pick_page(greedy, 1, NULL, 0), 0x9f000);
	const struct mem_range above[] = { R(0xa0000, 0x60000, MEM_USABLE) };
	assert_int_equal(trampoline_pick_page(above, 1, NULL, 0), 0);
	/* Avoid ranges that are empty or inverted count for nothing; a count
	 * below zero is no map. */
	const struct phys_range odd_avoid[] = { { 0x3000, 0x3000 }, { 0x9000, 0x1000 } };
	assert_int_equal(trampoline_pick_page(page0, 1, odd_avoid, 2), 0);
	assert_int_equal(trampoline_pick_page(holes, 3, odd_avoid, 2), 0x3000);
	assert_int_equal(trampoline_pick_page(holes, -1, NULL, 0), 0);
	assert_int_equal(trampoline_pick_page(holes, 3, odd_avoid, -1), 0);
}

static const struct trampoline_args good_args = {
	.cr3_early = 0x4a5000,
	.kernel_cr3 = 0x3fffe000, /* the kernel's tables may lie anywhere */
	.cr0 = 0x80050033,
	.cr4 = 0x6a0,
	.efer = 0xd00, /* LME, LMA, NXE: LMA is the CPU's */
	.entry = 0x40a120,
};

static void relocated_for_every_page(void **state)
{
	(void)state;
	static uint8_t page[TRAMPOLINE_PAGE];
	size_t code32 = (size_t)(trampoline_code32 - trampoline_start);
	size_t code64 = (size_t)(trampoline_code64 - trampoline_start);
	assert_int_equal(trampoline_end - trampoline_start, TRAMPOLINE_DATA_END);
	assert_true(code32 < code64 && code64 < TRAMPOLINE_DATA);
	for (uint64_t phys = TRAMPOLINE_LOWEST; phys + TRAMPOLINE_PAGE <= TRAMPOLINE_LIMIT; phys += 0x1000) {
		memset(page, 0xa5, sizeof page);
		assert_int_equal(trampoline_fill(page, phys, &good_args, &why), 0);
		assert_memory_equal(page, trampoline_start, TRAMPOLINE_DATA + 32); /* code and GDT as built */
		const struct trampoline_data *d = (const void *)(page + TRAMPOLINE_DATA);
		assert_int_equal(d->gdtr_limit, 31);
		assert_int_equal(d->gdtr_base, phys + TP_GDT);
		assert_int_equal(d->far32.offset, phys + code32);
		assert_int_equal(d->far32.selector, TRAMPOLINE_SEL_CODE32);
		assert_int_equal(d->far64.offset, phys + code64);
		assert_int_equal(d->far64.selector, TRAMPOLINE_SEL_CODE64);
		assert_int_equal(d->cr3_early, good_args.cr3_early);
		assert_int_equal(d->cr0, good_args.cr0);
		assert_int_equal(d->cr4, good_args.cr4);
		assert_int_equal(d->efer, 0x900);
		assert_int_equal(d->entry, good_args.entry);
		assert_int_equal(d->kernel_cr3, good_args.kernel_cr3);
		assert_int_equal(d->stage, TRAMPOLINE_STAGE_NONE);
		assert_int_equal(d->strays, 0);
		for (size_t i = TRAMPOLINE_DATA_END; i < TRAMPOLINE_PAGE; i++)
			assert_int_equal(page[i], 0);
		assert_int_equal(trampoline_vector(phys), phys >> 12);
	}
	/* The GDT as the code expects it: 32-bit code, data, 64-bit code. */
	const struct trampoline_data *d = (const void *)(page + TRAMPOLINE_DATA);
	assert_int_equal(d->gdt[0], 0);
	assert_int_equal((d->gdt[1] >> 53) & 3, 2); /* D=1, L=0 */
	assert_int_equal((d->gdt[3] >> 53) & 3, 1); /* L=1 */
	assert_int_equal((d->gdt[2] >> 43) & 1, 0); /* data */
}

static void set_cpu(void **state)
{
	(void)state;
	static uint8_t page[TRAMPOLINE_PAGE];
	assert_int_equal(trampoline_fill(page, 0x8000, &good_args, &why), 0);
	volatile struct trampoline_data *d = trampoline_data_of(page);
	d->stage = TRAMPOLINE_STAGE_KERNEL; /* the last AP's */
	trampoline_set_cpu(page, 3, 0x7ff0000, 0x7fe0000);
	assert_int_equal(d->apic_id, 3);
	assert_int_equal(d->stack_top, 0x7ff0000);
	assert_int_equal(d->percpu, 0x7fe0000);
	assert_int_equal(d->stage, TRAMPOLINE_STAGE_NONE);
	assert_int_equal(d->gdtr_base, 0x8000 + TP_GDT); /* what every AP shares stays */
}

static void refusals(void **state)
{
	(void)state;
	static uint8_t page[TRAMPOLINE_PAGE];
	/* Pages STARTUP cannot start an AP in. */
	const uint64_t bad_pages[] = { 0, 0x800, 0x1800, 0xa0000, 0xb8000, 0x100000, 1ULL << 32 };
	for (size_t i = 0; i < sizeof bad_pages / sizeof bad_pages[0]; i++) {
		assert_int_equal(trampoline_fill(page, bad_pages[i], &good_args, &why), -1);
		assert_non_null(strstr(why, "STARTUP"));
	}
	/* What 32-bit code cannot load, or the first tables do not map. */
	struct trampoline_args a = good_args;
	a.cr3_early = 1ULL << 32;
	assert_int_equal(trampoline_fill(page, 0x1000, &a, &why), -1);
	a = good_args;
	a.cr3_early = 0x4a5800;
	assert_int_equal(trampoline_fill(page, 0x1000, &a, &why), -1);
	a = good_args;
	a.entry = TRAMPOLINE_MAP_LIMIT;
	assert_int_equal(trampoline_fill(page, 0x1000, &a, &why), -1);
	assert_non_null(strstr(why, "first GiB"));
	a = good_args;
	a.cr4 |= 1ULL << 17; /* PCIDE */
	assert_int_equal(trampoline_fill(page, 0x1000, &a, &why), -1);
	a = good_args;
	a.cr0 |= 1ULL << 32;
	assert_int_equal(trampoline_fill(page, 0x1000, &a, &why), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(page_in_the_usual_maps),
		cmocka_unit_test(page_in_hostile_maps),
		cmocka_unit_test(relocated_for_every_page),
		cmocka_unit_test(set_cpu),
		cmocka_unit_test(refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
