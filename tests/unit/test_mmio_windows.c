/*
 * test_mmio_windows.c: the virtio_mmio.device=SIZE@ADDR:IRQ[:ID] entries
 * (kernel/mmio_windows.c): what QEMU's microvm and Firecracker write, and
 * hostile entries: numbers that overflow, fields missing, trailing junk,
 * windows out of bounds or overlapping, and too many of them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/mmio_windows.h"

static char why[256];

static struct mmio_window parse_ok(const char *value)
{
	struct mmio_window w;
	if (mmio_window_parse(value, &w, why, sizeof why) < 0)
		fail_msg("\"%s\" refused: %s", value, why);
	return w;
}

/* Refused, with a reason that contains `expect`. */
static void refused(const char *value, const char *expect)
{
	struct mmio_window w = { .base = 1 };
	if (mmio_window_parse(value, &w, why, sizeof why) == 0)
		fail_msg("\"%s\" accepted", value);
	if (!strstr(why, expect))
		fail_msg("\"%s\" refused as \"%s\", not \"%s\"", value, why, expect);
	assert_int_equal(w.base, 1); /* nothing written */
}

static void what_vmms_write(void **state)
{
	(void)state;
	struct mmio_window w = parse_ok("512@0xfeb00e00:12"); /* QEMU's microvm */
	assert_int_equal(w.base, 0xfeb00e00);
	assert_int_equal(w.size, 512);
	assert_int_equal(w.irq, 12);
	assert_int_equal(w.id, -1);
	w = parse_ok("4K@0xd0000000:5"); /* Firecracker */
	assert_int_equal(w.base, 0xd0000000);
	assert_int_equal(w.size, 4096);
	assert_int_equal(w.irq, 5);
	w = parse_ok("0x200@0xFEB00000:5:3");
	assert_int_equal(w.size, 0x200);
	assert_int_equal(w.base, 0xfeb00000);
	assert_int_equal(w.id, 3);
	w = parse_ok("1m@4272947200:7"); /* decimal address, lower-case suffix */
	assert_int_equal(w.size, 1 << 20);
	assert_int_equal(w.base, 0xfeb00000);
	w = parse_ok("256@0x3ffffffff00:255:0");
	assert_int_equal(w.base, 0x3ffffffff00ULL);
	assert_int_equal(w.irq, 255);
	assert_int_equal(w.id, 0);
}

static void numbers_that_overflow(void **state)
{
	(void)state;
	refused("99999999999999999999999@0xfeb00000:5", "too large");
	refused("0x10000000000000000@0xfeb00000:5", "too large");
	refused("0xffffffffffffffffG@0xfeb00000:5", "too large");
	refused("17179869184G@0xfeb00000:5", "too large");
	refused("512@0x10000000000000000:5", "too large");
	refused("512@99999999999999999999:5", "too large");
	refused("512@0xfeb00000:99999999999999999999", "too large");
	refused("512@0xfeb00000:5:99999999999999999999", "too large");
	refused("512@0xfeb00000:5:2147483648", "ID too large");
	/* In range as numbers, out of range as a window. */
	refused("512@0xfffffffffffffe00:5", "address outside");
	refused("4G@0xfeb00000:5", "size outside");
	refused("512@0x3fffffffff00:5", "address outside");
	refused("512@0xfeb00000:256", "IRQ outside");
	refused("512@0xfeb00000:4294967296", "IRQ outside");
}

static void fields_missing(void **state)
{
	(void)state;
	refused("", "missing");
	refused("512", "'@'");
	refused("512@", "missing");
	refused("512@0xfeb00000", "':'");
	refused("512@0xfeb00000:", "missing");
	refused("@0xfeb00000:5", "missing");
	refused("512@:5", "missing");
	refused("512@0x:5", "missing");
	refused("K@0xfeb00000:5", "missing");
	refused("512@0xfeb00000:5:", "missing");
	refused("512@0xfeb00000:0x5", "characters after");
	refused("-512@0xfeb00000:5", "missing");
}

static void trailing_junk(void **state)
{
	(void)state;
	refused("512@0xfeb00000:5x", "characters after");
	refused("512@0xfeb00000:5:3:4", "characters after");
	refused("512@0xfeb00000:5 ", "characters after");
	refused("512KK@0xfeb00000:5", "'@'");
	refused("512 @0xfeb00000:5", "'@'");
	refused("512@0xfeb00000g:5", "':'");
}

static void windows_out_of_bounds(void **state)
{
	(void)state;
	refused("0x80@0xfeb00000:5", "size outside");
	refused("0@0xfeb00000:5", "size outside");
	refused("2M@0xfeb00000:5", "size outside");
	refused("512@0x1000:5", "address outside");
	refused("512@0:5", "address outside");
	refused("512@0xfeb00001:5", "not 4-byte aligned");
	refused("512@0xfeb00000:0", "IRQ outside");
	refused("0512@0xfeb00000:5", "leading 0");
	refused("512@0777:5", "leading 0");
}

static void the_set(void **state)
{
	(void)state;
	const char *two[] = { "512@0xfeb00e00:12", "512@0xfeb00c00:11" };
	assert_int_equal(mmio_windows_set(two, 2, why, sizeof why), 0);
	assert_int_equal(mmio_window_count(), 2);
	assert_int_equal(mmio_window_get(1)->base, 0xfeb00c00);
	assert_null(mmio_window_get(2));
	assert_null(mmio_window_get(-1));

	/* A bad entry is named, and nothing is kept. */
	const char *bad[] = { "512@0xfeb00e00:12", "512@0xfeb00c00:x" };
	assert_int_equal(mmio_windows_set(bad, 2, why, sizeof why), -1);
	assert_non_null(strstr(why, "virtio_mmio.device=512@0xfeb00c00:x"));
	assert_int_equal(mmio_window_count(), 0);

	const char *overlap[] = { "4K@0xd0000000:5", "512@0xd0000e00:6" };
	assert_int_equal(mmio_windows_set(overlap, 2, why, sizeof why), -1);
	assert_non_null(strstr(why, "overlaps"));
	const char *same[] = { "512@0xfeb00000:5", "512@0xfeb00000:5" };
	assert_int_equal(mmio_windows_set(same, 2, why, sizeof why), -1);
	const char *touching[] = { "512@0xfeb00000:5", "512@0xfeb00200:6" };
	assert_int_equal(mmio_windows_set(touching, 2, why, sizeof why), 0);

	static char values[MMIO_WINDOWS_MAX + 1][32];
	const char *many[MMIO_WINDOWS_MAX + 1];
	for (int i = 0; i <= MMIO_WINDOWS_MAX; i++) {
		snprintf(values[i], sizeof values[i], "512@0x%x:5", 0xfeb00000 + 512 * i);
		many[i] = values[i];
	}
	assert_int_equal(mmio_windows_set(many, MMIO_WINDOWS_MAX, why, sizeof why), 0);
	assert_int_equal(mmio_window_count(), MMIO_WINDOWS_MAX);
	assert_int_equal(mmio_windows_set(many, MMIO_WINDOWS_MAX + 1, why, sizeof why), -1);
	assert_non_null(strstr(why, "more than"));
	assert_int_equal(mmio_window_count(), 0);
	assert_int_equal(mmio_windows_set(NULL, 0, why, sizeof why), 0);
	assert_int_equal(mmio_window_count(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(what_vmms_write),
		cmocka_unit_test(numbers_that_overflow),
		cmocka_unit_test(fields_missing),
		cmocka_unit_test(trailing_junk),
		cmocka_unit_test(windows_out_of_bounds),
		cmocka_unit_test(the_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
