/*
 * test_ple.c: the model of a KVM host's pause filters (kernel/ple.h): a
 * spin under the default takes no exit, each exit doubles the limit up to
 * the host's maximum, the limits carry from spin to spin until a park sets
 * them back, and Intel's window counts cycles where AMD's counts PAUSEs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../kernel/ple.h"

static void spin(struct ple_model *m, uint64_t pauses, uint64_t cycles, uint64_t want_amd, uint64_t want_intel)
{
	uint64_t amd = 99, intel = 99;
	ple_spin(m, pauses, cycles, &amd, &intel);
	assert_int_equal(amd, want_amd);
	assert_int_equal(intel, want_intel);
}

static void under_the_defaults(void **state)
{
	(void)state;
	struct ple_model m;
	ple_reset(&m);
	spin(&m, 0, 0, 0, 0);
	spin(&m, PLE_AMD_COUNT - 1, PLE_INTEL_WINDOW - 1, 0, 0);
	spin(&m, PLE_AMD_COUNT - 1, PLE_INTEL_WINDOW - 1, 0, 0); /* each spin starts its count again */
}

static void grows_by_exit(void **state)
{
	(void)state;
	struct ple_model m;
	ple_reset(&m);
	spin(&m, 3000, 4096, 1, 1);   /* exactly the defaults: one exit each */
	spin(&m, 5999, 8191, 0, 0);   /* now 6000 and 8192 */
	spin(&m, 6000 + 12000, 8192 + 16384, 2, 2);
	assert_int_equal(m.amd_count, 24000);
	assert_int_equal(m.intel_window, 32768);
	ple_reset(&m);                /* a park: back to 3000 and 4096 */
	spin(&m, 3000, 4096, 1, 1);
}

static void one_long_spin(void **state)
{
	(void)state;
	struct ple_model m;
	ple_reset(&m);
	/* 3000+6000+12000+24000+48000 = 93000, then 65535 a time (the cap). */
	spin(&m, 93000 + 2 * 65535, 0, 7, 0);
	assert_int_equal(m.amd_count, PLE_AMD_COUNT_MAX);
	/* 4096 * (1 + 2 + ... + 64) = 520192 cycles: 7 exits; the 8th needs
	 * 262144 more. */
	ple_reset(&m);
	spin(&m, 0, 1000000, 0, 7);
	assert_int_equal(m.intel_window, 4096u * 128);
	/* The window's cap: it never wraps past UINT32_MAX. */
	m.intel_window = 0x90000000u;
	spin(&m, 0, 0x90000000u, 0, 1);
	assert_int_equal(m.intel_window, PLE_INTEL_WINDOW_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(under_the_defaults),
		cmocka_unit_test(grows_by_exit),
		cmocka_unit_test(one_long_spin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
