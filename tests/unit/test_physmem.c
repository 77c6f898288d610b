/*
 * test_physmem.c: the heap's break and page_alloc's pages over several free
 * ranges: the break jumping to the next range with room, pages moving down,
 * what either passes over reused as spare pieces, exhaustion where they meet;
 * and a random walk checking that nothing is handed out twice or outside the
 * free ranges and that every byte is accounted for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "kernel/physmem.h"

#define KB 1024ULL
#define MB (1024 * KB)
#define GB (1024 * MB)
#define PAGE 4096ULL

static struct physmem m;

/* QEMU's -m 6G, less the loader and the image: a small piece, low RAM to the
 * PCI hole, and RAM from 4 GiB. */
static const struct phys_range six_gib[] = {
	{ 0x11e000, 0x400000 },
	{ 0x490000, 3 * GB - 128 * KB },
	{ 4 * GB, 7 * GB },
};

static void one_range_meets_in_the_middle(void **state)
{
	(void)state;
	const struct phys_range r[] = { { MB, 2 * MB } };
	physmem_init(&m, r, 1);
	assert_int_equal(physmem_break(&m, 0), MB);
	assert_int_equal(physmem_break(&m, 100), MB);
	assert_int_equal(physmem_break(&m, 0), MB + 100);
	assert_int_equal(physmem_pages(&m, PAGE), 2 * MB - PAGE);
	assert_int_equal(physmem_heap_room(&m), MB - PAGE - 100);
	/* Everything but the last byte, then a page that no longer fits. */
	assert_int_not_equal(physmem_break(&m, (int64_t)(MB - PAGE - 101)), 0);
	assert_int_equal(physmem_pages(&m, PAGE), 0);
	assert_int_equal(physmem_break(&m, 2), 0);
	assert_int_equal(physmem_break(&m, 1), 2 * MB - PAGE - 1);
	assert_int_equal(physmem_heap_bytes(&m), MB - PAGE);
	assert_int_equal(physmem_heap_room(&m), 0);
}

static void break_goes_back_only_in_its_range(void **state)
{
	(void)state;
	physmem_init(&m, six_gib, 3);
	/* The piece below 4 MiB holds less than a quarter of the free RAM: the
	 * heap starts above it (it would jump at once), and it is spare for pages. */
	assert_int_equal(m.heap_range, 1);
	assert_int_equal(physmem_spare_bytes(&m), 0x400000 - 0x11e000);
	assert_int_equal(physmem_break(&m, 4096), 0x490000);
	assert_int_equal(physmem_break(&m, -8192), 0); /* below the range's start */
	assert_int_equal(physmem_break(&m, -4096), 0x491000);
	assert_int_equal(physmem_heap_bytes(&m), 0);
}

static void break_jumps_to_the_next_range_with_room(void **state)
{
	(void)state;
	const struct phys_range two[] = { { MB, 9 * MB }, { 16 * MB, 32 * MB } };
	physmem_init(&m, two, 2);
	assert_int_equal(m.heap_range, 0);
	physmem_break(&m, 7 * MB);
	/* 4 MiB does not fit in the rest of the first range: the break moves to
	 * the second, the rest of the first becomes spare, and the gap it
	 * jumped is counted (newlib's malloc takes it for memory in use). */
	assert_int_equal(physmem_break(&m, 4 * MB), 16 * MB);
	assert_int_equal(m.heap_range, 1);
	assert_int_equal(m.jumped, 16 * MB - 8 * MB);
	assert_int_equal(physmem_heap_bytes(&m), 7 * MB + 4 * MB);
	assert_int_equal(physmem_spare_bytes(&m), MB);
	/* Pages come from the spare piece first, from its end. */
	assert_int_equal(physmem_pages(&m, PAGE), 9 * MB - PAGE);
	assert_int_equal(m.heap_max, physmem_heap_bytes(&m));
	/* More than is left anywhere: refused, nothing moves. */
	assert_int_equal(physmem_break(&m, (int64_t)(16 * MB)), 0);
	assert_int_equal(m.heap_range, 1);
}

static void pages_move_down_and_leave_spare(void **state)
{
	(void)state;
	physmem_init(&m, six_gib, 3);
	/* The spare piece below 4 MiB serves a page first. */
	assert_int_equal(physmem_pages(&m, PAGE), 0x400000 - PAGE);
	/* More than it holds comes from the top. */
	assert_int_equal(physmem_pages(&m, 2 * GB), 5 * GB);
	/* A request larger than what is left above 4 GiB goes below the hole. */
	assert_int_equal(physmem_pages(&m, 2 * GB), 3 * GB - 128 * KB - 2 * GB);
	assert_int_equal(m.pages_range, 1);
	assert_int_equal(physmem_spare_bytes(&m), 0x400000 - 0x11e000 - PAGE + GB);
	/* The break can no longer reach above 4 GiB, but spare serves pages. */
	assert_int_equal(physmem_break(&m, (int64_t)(1 * GB)), 0);
	assert_int_equal(physmem_pages(&m, GB), 4 * GB);
	assert_int_equal(physmem_spare_bytes(&m), 0x400000 - 0x11e000 - PAGE);
}

static void exhausted_ranges_give_nothing(void **state)
{
	(void)state;
	const struct phys_range r[] = { { MB, MB + 2 * PAGE } };
	physmem_init(&m, r, 1);
	assert_int_equal(physmem_pages(&m, 0), 0);
	assert_int_equal(physmem_pages(&m, 3 * PAGE), 0);
	assert_int_not_equal(physmem_pages(&m, 2 * PAGE), 0);
	assert_int_equal(physmem_pages(&m, PAGE), 0);
	assert_int_equal(physmem_break(&m, 1), 0);
	assert_int_equal(physmem_break(&m, 0), MB);
}

/* ---- random walk -------------------------------------------------------- */

struct piece {
	uint64_t start, end;
};
static struct piece taken[4096];
static int ntaken;

/* The heap's parts (each range's [start, break) up to the break's range) and
 * the pages taken: inside the free ranges, and no two overlapping. */
static void no_overlaps(const struct phys_range *r, int n)
{
	static struct piece all[4096 + PHYSMEM_MAX_RANGES];
	int k = 0;
	for (int i = 0; i < ntaken; i++)
		all[k++] = taken[i];
	all[k++] = (struct piece){ m.range[m.heap_range].start, m.brk };
	for (int i = 0; i < k; i++) {
		if (all[i].start == all[i].end)
			continue;
		int inside = 0;
		for (int j = 0; j < n; j++)
			inside |= all[i].start >= r[j].start && all[i].end <= r[j].end;
		assert_true(inside);
		for (int j = i + 1; j < k; j++)
			assert_true(all[i].end <= all[j].start || all[j].end <= all[i].start);
	}
}

static void random_walk_hands_out_nothing_twice(void **state)
{
	/* Checked after every operation, not only at the end. */
	(void)state;
	srand(12);
	for (int round = 0; round < 200; round++) {
		struct phys_range r[8];
		int n = 1 + rand() % 8;
		uint64_t at = MB, total = 0;
		for (int i = 0; i < n; i++) {
			at += (uint64_t)(rand() % 64) * PAGE;
			uint64_t len = (uint64_t)(1 + rand() % 256) * PAGE;
			r[i] = (struct phys_range){ at, at + len };
			at += len;
			total += len;
		}
		physmem_init(&m, r, n);
		ntaken = 0;
		uint64_t pages = 0;
		for (int op = 0; op < 200; op++) {
			if (rand() % 2) {
				uint64_t bytes = (uint64_t)(1 + rand() % 32) * PAGE, p = physmem_pages(&m, bytes);
				if (p && ntaken < 4096) {
					taken[ntaken++] = (struct piece){ p, p + bytes };
					pages += bytes;
				}
			} else {
				int64_t incr = rand() % 5 == 0 ? -(int64_t)(rand() % 8192) : (int64_t)(rand() % 65536);
				int was = m.heap_range;
				uint64_t brk = m.brk;
				physmem_break(&m, incr);
				/* A jump leaves the heap's part of its old range behind. */
				if (m.heap_range != was && ntaken < 4096)
					taken[ntaken++] = (struct piece){ m.range[was].start, brk };
			}
			assert_true(m.heap_range <= m.pages_range);
			if (m.heap_range == m.pages_range)
				assert_true(m.brk <= m.pages_floor);
			/* Every byte: heap, pages, spare, still reachable, or lost to rounding. */
			assert_int_equal(physmem_heap_bytes(&m) + pages + physmem_spare_bytes(&m) +
						 physmem_heap_room(&m) + m.spare_lost,
					 total);
			no_overlaps(r, n);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_range_meets_in_the_middle),
		cmocka_unit_test(break_goes_back_only_in_its_range),
		cmocka_unit_test(break_jumps_to_the_next_range_with_room),
		cmocka_unit_test(pages_move_down_and_leave_spare),
		cmocka_unit_test(exhausted_ranges_give_nothing),
		cmocka_unit_test(random_walk_hands_out_nothing_twice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
