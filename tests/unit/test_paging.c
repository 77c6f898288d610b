/*
 * test_paging.c: the loader's hand-over page tables (loader/paging.c) built
 * on the host: RAM above 4 GiB mapped from the memory map with tables from
 * the pool the loader sizes with paging_pool_pages(), up to the CPU's
 * physical address width; a pool that runs short maps less and says where it
 * stopped; W^X over the image. paging_build() checks every leaf and every
 * page of usable RAM itself (a mistake is an error string), so each case
 * also asserts that check passed. The loader's own link addresses come from
 * --defsym (unit.mk), as loader.ld gives them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "boot/elf64.h"
#include "loader/paging.h"

#define MB (1ULL << 20)
#define GB (1ULL << 30)

static struct image_plan plan;
static struct paging_map out;

static int setup(void **state)
{
	(void)state;
	memset(&plan, 0, sizeof plan);
	plan.nseg = 3;
	plan.seg[0] = (struct image_segment){ 0, 0x1b000, 4 * MB, 0x1b000, PF_R | PF_X };
	plan.seg[1] = (struct image_segment){ 0, 0x6000, 4 * MB + 0x1b000, 0x6400, PF_R };
	plan.seg[2] = (struct image_segment){ 0, 0x1000, 4 * MB + 0x22000, 0x55000, PF_R | PF_W };
	plan.start = 4 * MB;
	plan.end = 4 * MB + 0x77000;
	plan.entry = 4 * MB;
	return 0;
}

static uint64_t *pool_of(uint64_t pages)
{
	uint64_t *p = aligned_alloc(4096, (pages ? pages : 1) * 4096);
	assert_non_null(p);
	return p;
}

static const char *build(const struct phys_range *ram, int n, uint64_t limit, uint64_t pages)
{
	uint64_t *pool = pool_of(pages);
	const char *why = paging_build(&plan, ram, n, limit, pool, pages, &out);
	free(pool); /* the tables are checked inside; nothing reads them after */
	return why;
}

static void low_ram_needs_no_pool(void **state)
{
	(void)state;
	const struct phys_range ram[] = { { 0, 0x9f000 }, { MB, 256 * MB } };
	assert_int_equal(paging_pool_pages(ram, 2, 1ULL << 40), 0);
	assert_null(build(ram, 2, 1ULL << 40, 0));
	assert_int_equal(out.ram_limit, 1ULL << 40);
	assert_int_equal(out.tables_used, 0);
	assert_int_equal(out.image.rx, 0x1b);
	assert_int_equal(out.image.r, 7);
	assert_int_equal(out.image.rw, 0x55);
}

static void ram_above_4g_is_mapped_from_the_map(void **state)
{
	(void)state;
	/* -m 6G: one page directory per GiB above 4 GiB. */
	const struct phys_range six[] = { { MB, 3 * GB }, { 4 * GB, 7 * GB } };
	assert_int_equal(paging_pool_pages(six, 2, 1ULL << 40), 3 + 1);
	assert_null(build(six, 2, 1ULL << 40, 4));
	assert_int_equal(out.ram_limit, 1ULL << 40);
	assert_int_equal(out.tables_used, 3);
	/* 1 TiB less a bit, across a 512 GiB boundary: a second directory table. */
	const struct phys_range big[] = { { MB, 3 * GB }, { 4 * GB, 1000 * GB } };
	uint64_t want = paging_pool_pages(big, 2, 1ULL << 40);
	assert_null(build(big, 2, 1ULL << 40, want));
	assert_int_equal(out.tables_used, 996 + 1);
	assert_true(out.tables_used <= want);
}

static void unaligned_and_split_ranges(void **state)
{
	(void)state;
	/* Ranges that share a GiB, one not 2 MiB aligned: mapped in 2 MiB pages
	 * around them, the shared directory made once. */
	const struct phys_range ram[] = {
		{ MB, 2 * GB }, { 4 * GB + 0x3000, 4 * GB + 100 * MB }, { 4 * GB + 200 * MB, 5 * GB + 5 * MB },
	};
	uint64_t want = paging_pool_pages(ram, 3, 1ULL << 40);
	assert_null(build(ram, 3, 1ULL << 40, want));
	assert_int_equal(out.tables_used, 2);
}

static void cpu_limit_leaves_ram_above_unmapped(void **state)
{
	(void)state;
	const struct phys_range six[] = { { MB, 3 * GB }, { 4 * GB, 7 * GB } };
	/* 32-bit physical addresses: nothing above 4 GiB. */
	assert_int_equal(paging_pool_pages(six, 2, 4 * GB), 0);
	assert_null(build(six, 2, 4 * GB, 0));
	assert_int_equal(out.ram_limit, 4 * GB);
	/* 33 bits: up to 8 GiB only... and a limit below 4 GiB is raised to it. */
	const struct phys_range ten[] = { { MB, 3 * GB }, { 4 * GB, 11 * GB } };
	assert_null(build(ten, 2, 8 * GB, paging_pool_pages(ten, 2, 8 * GB)));
	assert_int_equal(out.ram_limit, 8 * GB);
	assert_int_equal(out.tables_used, 4);
	assert_null(build(six, 2, 2 * GB, 0));
	assert_int_equal(out.ram_limit, 4 * GB);
}

static void short_pool_maps_less_and_says_where(void **state)
{
	(void)state;
	const struct phys_range six[] = { { MB, 3 * GB }, { 4 * GB, 7 * GB } };
	assert_null(build(six, 2, 1ULL << 40, 2));
	assert_int_equal(out.tables_used, 2);
	assert_int_equal(out.ram_limit, 6 * GB);
	assert_null(build(six, 2, 1ULL << 40, 0));
	assert_int_equal(out.ram_limit, 4 * GB);
}

static void too_much_read_only_image_is_refused(void **state)
{
	(void)state;
	const struct phys_range ram[] = { { MB, 256 * MB } };
	plan.seg[1].memsz = 20 * MB;
	plan.seg[2].paddr = 4 * MB + 21 * MB;
	const char *why = build(ram, 1, 1ULL << 40, 0);
	assert_non_null(why);
	assert_non_null(strstr(why, "2 MiB pages"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(low_ram_needs_no_pool, setup),
		cmocka_unit_test_setup(ram_above_4g_is_mapped_from_the_map, setup),
		cmocka_unit_test_setup(unaligned_and_split_ranges, setup),
		cmocka_unit_test_setup(cpu_limit_leaves_ram_above_unmapped, setup),
		cmocka_unit_test_setup(short_pool_maps_less_and_says_where, setup),
		cmocka_unit_test_setup(too_much_read_only_image_is_refused, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
