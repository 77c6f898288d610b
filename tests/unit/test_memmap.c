/*
 * test_memmap.c: free physical ranges from firmware memory maps, including
 * maps that overlap, wrap around or list RAM inside a reserved hole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "boot/memmap.h"

#define KB 1024ULL
#define MB (1024 * KB)

static struct phys_range out[32];

/* QEMU's map for -m 256M. */
static const struct mem_range qemu256[] = {
	{ 0, 0x9fc00, MEM_USABLE, 0 },
	{ 0x9fc00, 0x400, MEM_RESERVED, 0 },
	{ 0xf0000, 0x10000, MEM_RESERVED, 0 },
	{ MB, 0xfee0000, MEM_USABLE, 0 },
	{ 0xffe0000, 0x20000, MEM_RESERVED, 0 },
	{ 0xfffc0000, 0x40000, MEM_RESERVED, 0 },
};

static void qemu_map_with_reservations(void **state)
{
	(void)state;
	const struct phys_range in_use[] = { { 0, MB }, { 4 * MB, 4 * MB + 0x6f060 }, { MB + 0x100, MB + 0x8000 } };
	int n = memmap_free_ranges(qemu256, 6, in_use, 3, out, 32, NULL);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].start, MB + 0x8000);
	assert_int_equal(out[0].end, 4 * MB);
	assert_int_equal(out[1].start, 4 * MB + 0x70000); /* grown to whole pages */
	assert_int_equal(out[1].end, 0xffe0000);
}

static void unaligned_entries_shrink_to_pages(void **state)
{
	(void)state;
	const struct mem_range map[] = { { 0x1001, 0x3000, MEM_USABLE, 0 } };
	int n = memmap_free_ranges(map, 1, NULL, 0, out, 32, NULL);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].start, 0x2000);
	assert_int_equal(out[0].end, 0x4000);
	/* Smaller than a page once aligned: nothing. */
	const struct mem_range tiny[] = { { 0x1001, 0x1000, MEM_USABLE, 0 } };
	assert_int_equal(memmap_free_ranges(tiny, 1, NULL, 0, out, 32, NULL), 0);
}

static void reserved_wins_over_usable(void **state)
{
	(void)state;
	const struct mem_range map[] = {
		{ 0, 16 * MB, MEM_USABLE, 0 },
		{ 4 * MB, MB, MEM_RESERVED, 0 },   /* listed inside the usable entry */
		{ 8 * MB, 16 * MB, MEM_USABLE, 0 }, /* overlaps the first: merged */
		{ 20 * MB, 0, MEM_USABLE, 0 },      /* zero length: ignored */
	};
	int n = memmap_free_ranges(map, 4, NULL, 0, out, 32, NULL);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].start, 0);
	assert_int_equal(out[0].end, 4 * MB);
	assert_int_equal(out[1].start, 5 * MB);
	assert_int_equal(out[1].end, 24 * MB);
}

static void wrapping_entries_are_clamped(void **state)
{
	(void)state;
	const struct mem_range map[] = {
		{ UINT64_MAX - 0x1000, 0x10000, MEM_USABLE, 0 },
		{ 0x10000, UINT64_MAX, MEM_RESERVED, 0 },
		{ 0, 0x20000, MEM_USABLE, 0 },
	};
	int n = memmap_free_ranges(map, 3, NULL, 0, out, 32, NULL);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].start, 0);
	assert_int_equal(out[0].end, 0x10000);
}

static void overflowing_output_is_counted(void **state)
{
	(void)state;
	struct mem_range map[40];
	for (int i = 0; i < 40; i++)
		map[i] = (struct mem_range){ (uint64_t)i * 2 * MB, MB, MEM_USABLE, 0 };
	int dropped = -1;
	int n = memmap_free_ranges(map, 40, NULL, 0, out, 32, &dropped);
	assert_int_equal(n, 32);
	assert_int_equal(dropped, 8);
	assert_int_equal(memmap_total(out, n), 32 * MB);
}

static void random_maps_keep_invariants(void **state)
{
	(void)state;
	srand(7);
	for (int iter = 0; iter < 5000; iter++) {
		struct mem_range map[12];
		struct phys_range res[3];
		int nmap = rand() % 12, nres = rand() % 3;
		for (int i = 0; i < nmap; i++)
			map[i] = (struct mem_range){ (uint64_t)(rand() % 64) * 0x800, (uint64_t)(rand() % 64) * 0x800,
						     (uint32_t)(rand() % 3 + 1), 0 };
		for (int i = 0; i < nres; i++) {
			uint64_t s = (uint64_t)(rand() % 64) * 0x800;
			res[i] = (struct phys_range){ s, s + (uint64_t)(rand() % 16) * 0x800 };
		}
		int n = memmap_free_ranges(map, nmap, res, nres, out, 32, NULL);
		for (int i = 0; i < n; i++) {
			assert_true(out[i].start < out[i].end);
			assert_true(out[i].start % 4096 == 0 && out[i].end % 4096 == 0);
			if (i)
				assert_true(out[i - 1].end < out[i].start); /* sorted, merged */
			/* Every free page is inside a usable entry, outside reserved and non-usable ones. */
			for (uint64_t a = out[i].start; a < out[i].end; a += 4096) {
				int usable = 0;
				for (int m = 0; m < nmap; m++) {
					int in = a >= map[m].base && a + 4096 <= map[m].base + map[m].len;
					int touch = a < map[m].base + map[m].len && a + 4096 > map[m].base;
					if (map[m].type == MEM_USABLE && in)
						usable = 1;
					assert_false(map[m].type != MEM_USABLE && touch);
				}
				assert_true(usable);
				for (int r = 0; r < nres; r++)
					assert_false(a < res[r].end && a + 4096 > res[r].start);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(qemu_map_with_reservations),
		cmocka_unit_test(unaligned_entries_shrink_to_pages),
		cmocka_unit_test(reserved_wins_over_usable),
		cmocka_unit_test(wrapping_entries_are_clamped),
		cmocka_unit_test(overflowing_output_is_counted),
		cmocka_unit_test(random_maps_keep_invariants),
	};
	return cmocka_run_group_tests_name("memmap", tests, NULL, NULL);
}
