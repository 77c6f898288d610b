/*
 * test_pvh.c: the PVH start info to bootinfo (boot/pvh.c) over a simulated
 * guest memory: QEMU's record as the pc machine's option ROM writes it, then
 * hostile ones: bad magic, version 0, records, maps and command lines that
 * lie past readable memory or wrap, a command line with no NUL within 4 KiB,
 * too many map entries, unknown entry types.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "boot/pvh.h"

#define BASE   0x10000ULL  /* guest-physical address of ram[0] */
#define RAMLEN 0x8000ULL   /* bytes of simulated guest memory */
#define SI     (BASE + 0x100)  /* where the tests put the start info */
#define MAP    (BASE + 0x400)  /* its memory map */
#define CMD    (BASE + 0x2000) /* its command line */

static unsigned char ram[RAMLEN];
static struct bootinfo bi;
static int reads; /* read() calls, to see that a refusal stops early */

static const void *read_ram(uint64_t addr, uint64_t len, void *ctx)
{
	(void)ctx;
	reads++;
	if (addr < BASE || addr - BASE > RAMLEN || len > RAMLEN - (addr - BASE))
		return NULL;
	return ram + (addr - BASE);
}

static void put(uint64_t addr, const void *data, size_t len)
{
	memcpy(ram + (addr - BASE), data, len);
}

/* A version 1 record with QEMU's map for -m 256M and a command line. */
static struct pvh_start_info good(void)
{
	static const struct pvh_memmap_entry map[] = {
		{ 0, 0x9fc00, 1, 0 },
		{ 0x9fc00, 0x400, 2, 0 },
		{ 0xf0000, 0x10000, 2, 0 },
		{ 0x100000, 0xfee0000, 1, 0 },
		{ 0xfffc0000, 0x40000, 2, 0 },
	};
	put(MAP, map, sizeof map);
	put(CMD, "verbose -- -e 3", 16);
	return (struct pvh_start_info){
		.magic = PVH_START_MAGIC, .version = 1, .cmdline_paddr = CMD, .rsdp_paddr = 0xf5000,
		.memmap_paddr = MAP, .memmap_entries = 5,
	};
}

static const char *translate(const struct pvh_start_info *si)
{
	put(SI, si, sizeof *si);
	memset(&bi, 0x5a, sizeof bi); /* nothing may be read from what was there */
	reads = 0;
	return pvh_to_bootinfo(SI, read_ram, NULL, &bi);
}

static void qemu_record(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	assert_null(translate(&si));
	assert_int_equal(bi.magic, BOOTINFO_MAGIC);
	assert_int_equal(bi.version, BOOTINFO_VERSION);
	assert_int_equal(bi.nmem, 5);
	assert_int_equal(bi.mem[3].base, 0x100000);
	assert_int_equal(bi.mem[3].len, 0xfee0000);
	assert_int_equal(bi.mem[3].type, MEM_USABLE);
	assert_int_equal(bi.mem[4].type, MEM_RESERVED);
	assert_int_equal(bi.mem_dropped, 0);
	assert_string_equal(bi.cmdline, "verbose -- -e 3");
	assert_int_equal(bi.acpi_rsdp, 0xf5000);
}

static void no_command_line(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	si.cmdline_paddr = 0;
	assert_null(translate(&si));
	assert_string_equal(bi.cmdline, "");
}

static void unaligned_record(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	put(SI + 3, &si, sizeof si);
	memset(&bi, 0, sizeof bi);
	assert_null(pvh_to_bootinfo(SI + 3, read_ram, NULL, &bi));
	assert_int_equal(bi.nmem, 5);
}

static void bad_magic(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	si.magic ^= 1;
	const char *why = translate(&si);
	assert_non_null(why);
	assert_non_null(strstr(why, "magic"));
	assert_int_equal(reads, 1);
	assert_int_not_equal(bi.magic, BOOTINFO_MAGIC);
}

static void version_0_has_no_map(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	si.version = 0;
	assert_non_null(translate(&si));
	assert_int_equal(bi.nmem, 0);
}

static void record_outside_memory(void **state)
{
	(void)state;
	assert_non_null(pvh_to_bootinfo(0, read_ram, NULL, &bi));
	assert_non_null(pvh_to_bootinfo(BASE + RAMLEN - 8, read_ram, NULL, &bi));
	assert_non_null(pvh_to_bootinfo(UINT64_MAX - 4, read_ram, NULL, &bi));
	/* The first 40 bytes readable, the version 1 fields not. */
	struct pvh_start_info si = good();
	put(BASE + RAMLEN - PVH_START_INFO_V0_SIZE, &si, PVH_START_INFO_V0_SIZE);
	assert_non_null(pvh_to_bootinfo(BASE + RAMLEN - PVH_START_INFO_V0_SIZE, read_ram, NULL, &bi));
}

static void map_outside_memory(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	si.memmap_paddr = BASE + RAMLEN - 24; /* one entry fits, five do not */
	assert_non_null(translate(&si));
	assert_int_equal(bi.nmem, 0);
	si.memmap_paddr = UINT64_MAX - 23; /* wraps */
	assert_non_null(translate(&si));
	si = good();
	si.memmap_paddr = 0;
	assert_non_null(translate(&si));
}

static void map_empty_or_huge(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	si.memmap_entries = 0;
	assert_non_null(translate(&si));
	si.memmap_entries = 0xffffffff; /* 24 times that would wrap 32 bits */
	assert_non_null(translate(&si));
	si.memmap_entries = PVH_MAX_MEMMAP + 1;
	assert_non_null(translate(&si));
}

static void map_past_bootinfo_is_counted(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	struct pvh_memmap_entry e[BOOTINFO_MAX_MEM + 3];
	for (int i = 0; i < BOOTINFO_MAX_MEM + 3; i++)
		e[i] = (struct pvh_memmap_entry){ .addr = (uint64_t)i << 24, .size = 1 << 20, .type = 1 };
	e[BOOTINFO_MAX_MEM + 2].type = 2;
	put(MAP, e, sizeof e);
	si.memmap_entries = BOOTINFO_MAX_MEM + 3;
	assert_null(translate(&si));
	assert_int_equal(bi.nmem, BOOTINFO_MAX_MEM);
	assert_int_equal(bi.mem_dropped, 3);
	assert_int_equal(bi.mem_dropped_usable, 2 << 20);
}

static void unknown_types_are_reserved(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	struct pvh_memmap_entry e[] = { { 0x100000, 0x100000, 7, 0 }, { 0x200000, 0x100000, 0, 0 },
					{ 0x300000, 0x100000, 0xf0000001u, 0 }, { 0x400000, 0x100000, 4, 0 } };
	put(MAP, e, sizeof e);
	si.memmap_entries = 4;
	assert_null(translate(&si));
	assert_int_equal(bi.mem[0].type, MEM_RESERVED);
	assert_int_equal(bi.mem[1].type, MEM_RESERVED);
	assert_int_equal(bi.mem[2].type, MEM_RESERVED);
	assert_int_equal(bi.mem[3].type, MEM_NVS);
}

static void cmdline_without_nul(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	memset(ram + (CMD - BASE), 'a', BOOTINFO_CMDLINE);
	assert_non_null(translate(&si));
	assert_int_equal(bi.cmdline[0], 0);
	assert_int_equal(bi.nmem, 0);
	/* 4095 bytes and a NUL: the longest that fits. */
	ram[CMD - BASE + BOOTINFO_CMDLINE - 1] = 0;
	assert_null(translate(&si));
	assert_int_equal(strlen(bi.cmdline), BOOTINFO_CMDLINE - 1);
}

static void cmdline_runs_off_memory(void **state)
{
	(void)state;
	struct pvh_start_info si = good();
	si.cmdline_paddr = BASE + RAMLEN - 4;
	memset(ram + RAMLEN - 4, 'x', 4); /* no NUL before readable memory ends */
	assert_non_null(translate(&si));
	si.cmdline_paddr = UINT64_MAX - 2;
	assert_non_null(translate(&si));
	si.cmdline_paddr = BASE + RAMLEN;
	assert_non_null(translate(&si));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(qemu_record),
		cmocka_unit_test(no_command_line),
		cmocka_unit_test(unaligned_record),
		cmocka_unit_test(bad_magic),
		cmocka_unit_test(version_0_has_no_map),
		cmocka_unit_test(record_outside_memory),
		cmocka_unit_test(map_outside_memory),
		cmocka_unit_test(map_empty_or_huge),
		cmocka_unit_test(map_past_bootinfo_is_counted),
		cmocka_unit_test(unknown_types_are_reserved),
		cmocka_unit_test(cmdline_without_nul),
		cmocka_unit_test(cmdline_runs_off_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
