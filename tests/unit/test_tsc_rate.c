/*
 * test_tsc_rate.c: the TSC's rate from reported values and counts
 * (kernel/tsc_rate.c): CPUID leaf 0x15's ratio and crystal, leaf 0x16's
 * base standing in for a missing crystal, the hypervisor leaf's kHz,
 * kvmclock's multiplier and shift as KVM computes them for known rates,
 * and counts against a rate or a period; every zero, out-of-range shift
 * and product that would wrap 64 bits refused or computed without wrapping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel/tsc_rate.h"

static const char *why;

static void cpuid15_with_a_crystal(void **state)
{
	(void)state;
	int from_base = -1;
	/* A 24 MHz crystal and a ratio of 176/2: 2.112 GHz, exactly. */
	assert_int_equal(tsc_hz_from_cpuid15(2, 176, 24000000, 2100, &from_base, &why), 2112000000ULL);
	assert_int_equal(from_base, 0);
	/* A 25 MHz crystal and 250/3: a ratio that does not divide evenly rounds down. */
	assert_int_equal(tsc_hz_from_cpuid15(3, 250, 25000000, 0, &from_base, &why), 2083333333ULL);
	/* The largest fields: no wrap in the product. */
	assert_int_equal(tsc_hz_from_cpuid15(0xffffffff, 0xffffffff, 100000000, 0, &from_base, &why),
			 100000000ULL);
}

static void cpuid15_without_a_crystal_takes_leaf_16(void **state)
{
	(void)state;
	int from_base = 0;
	assert_int_equal(tsc_hz_from_cpuid15(2, 200, 0, 2400, &from_base, &why), 2400000000ULL);
	assert_int_equal(from_base, 1);
	/* Neither: refused. */
	assert_int_equal(tsc_hz_from_cpuid15(2, 200, 0, 0, &from_base, &why), 0);
	assert_non_null(why);
}

static void cpuid15_refuses_zeros_and_silly_rates(void **state)
{
	(void)state;
	int from_base;
	why = NULL;
	assert_int_equal(tsc_hz_from_cpuid15(0, 176, 24000000, 0, &from_base, &why), 0);
	assert_non_null(why);
	assert_int_equal(tsc_hz_from_cpuid15(2, 0, 24000000, 0, &from_base, &why), 0);
	/* 24 MHz * 0xffffffff / 1: far above 100 GHz. */
	assert_int_equal(tsc_hz_from_cpuid15(1, 0xffffffff, 24000000, 0, &from_base, &why), 0);
	/* 1 Hz crystal: below 1 MHz. */
	assert_int_equal(tsc_hz_from_cpuid15(1, 2, 1, 0, &from_base, &why), 0);
}

static void hypervisor_khz(void **state)
{
	(void)state;
	assert_int_equal(tsc_hz_from_khz(2445000, &why), 2445000000ULL);
	assert_int_equal(tsc_hz_from_khz(0, &why), 0);
	assert_int_equal(tsc_hz_from_khz(999, &why), 0);        /* below 1 MHz */
	assert_int_equal(tsc_hz_from_khz(0xffffffff, &why), 0); /* 4.3 THz: refused, no wrap */
	assert_int_equal(tsc_hz_from_khz(100000000, &why), 100000000000ULL); /* the bound itself */
}

static void pvclock_scale(void **state)
{
	(void)state;
	/* KVM's scale for 1 GHz: shift 1, mul 2^31. */
	assert_int_equal(tsc_hz_from_pvclock(0x80000000u, 1, &why), 1000000000ULL);
	/* 100 MHz: 10 ns a tick = (ticks << 4) * (10/16 * 2^32) >> 32. */
	assert_int_equal(tsc_hz_from_pvclock(2684354560u, 4, &why), 100000000ULL);
	/* 2.445 GHz: shift -1 and the multiplier KVM rounds to; within a Hz. */
	uint64_t hz = tsc_hz_from_pvclock(3513265682u, -1, &why);
	assert_in_range(hz, 2444999998ULL, 2445000001ULL);
}

static void pvclock_refuses_hostile_values(void **state)
{
	(void)state;
	why = NULL;
	assert_int_equal(tsc_hz_from_pvclock(0, 1, &why), 0);
	assert_non_null(why);
	assert_int_equal(tsc_hz_from_pvclock(0x80000000u, 33, &why), 0);
	assert_int_equal(tsc_hz_from_pvclock(0x80000000u, -33, &why), 0);
	assert_int_equal(tsc_hz_from_pvclock(0x80000000u, -128, &why), 0);
	assert_int_equal(tsc_hz_from_pvclock(0x80000000u, 127, &why), 0);
	/* The extremes of the range: computed without wrapping, then refused. */
	assert_int_equal(tsc_hz_from_pvclock(1, -32, &why), 0); /* 1e9 * 2^64 Hz */
	assert_int_equal(tsc_hz_from_pvclock(0xffffffffu, 32, &why), 0); /* 0.23 Hz */
}

static void counts(void **state)
{
	(void)state;
	/* 5 ms of the PM timer (17,897 ticks) while the TSC counted 12.225 M. */
	uint64_t hz = tsc_hz_from_count(12225000, 17897, 3579545, &why);
	assert_in_range(hz, 2444900000ULL, 2445100000ULL);
	assert_int_equal(tsc_hz_from_count(12225000, 0, 3579545, &why), 0);
	assert_int_equal(tsc_hz_from_count(12225000, 17897, 0, &why), 0);
	/* Huge counts do not wrap: 2^63 TSC ticks over 2^40 ticks of 1 GHz. */
	assert_int_equal(tsc_hz_from_count(1ULL << 63, 1ULL << 40, 1000000000, &why), 0);
	assert_int_equal(tsc_hz_from_count(1ULL << 60, 1ULL << 60, 1000000000, &why), 1000000000ULL);
}

static void periods(void **state)
{
	(void)state;
	/* QEMU's HPET: 10 ns (10^7 fs); 500,000 ticks are 5 ms. */
	assert_int_equal(tsc_hz_from_period(12225000, 500000, 10000000, &why), 2445000000ULL);
	assert_int_equal(tsc_hz_from_period(12225000, 0, 10000000, &why), 0);
	assert_int_equal(tsc_hz_from_period(12225000, 500000, 0, &why), 0);
	/* The largest period and count: no wrap. */
	assert_int_equal(tsc_hz_from_period(~0ULL, ~0ULL, 0xffffffffULL, &why), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpuid15_with_a_crystal),
		cmocka_unit_test(cpuid15_without_a_crystal_takes_leaf_16),
		cmocka_unit_test(cpuid15_refuses_zeros_and_silly_rates),
		cmocka_unit_test(hypervisor_khz),
		cmocka_unit_test(pvclock_scale),
		cmocka_unit_test(pvclock_refuses_hostile_values),
		cmocka_unit_test(counts),
		cmocka_unit_test(periods),
	};
	return cmocka_run_group_tests_name("tsc_rate", tests, NULL, NULL);
}
