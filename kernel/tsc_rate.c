/*
 * tsc_rate.c: the TSC's rate from reported values and from counts (see
 * tsc_rate.h). 128-bit intermediates throughout, so no product of two
 * 32-bit fields, nor a count times a rate, can wrap; the range check at
 * the end refuses what no real TSC runs at.
 */
#include <stddef.h>
#include "tsc_rate.h"

#define NSEC_PER_SEC_128 ((unsigned __int128)1000000000)
#define FSEC_PER_SEC_128 ((unsigned __int128)1000000000000000ULL)

/* hz when it lies in the accepted range, else 0 with the reason. */
static uint64_t in_range(unsigned __int128 hz, const char **why)
{
	if (hz < TSC_HZ_MIN) {
		*why = "gives a rate below 1 MHz";
		return 0;
	}
	if (hz > TSC_HZ_MAX) {
		*why = "gives a rate above 100 GHz";
		return 0;
	}
	return (uint64_t)hz;
}

uint64_t tsc_hz_from_cpuid15(uint32_t denominator, uint32_t numerator, uint32_t crystal_hz,
			     uint32_t base_mhz, int *from_base, const char **why)
{
	*from_base = 0;
	if (denominator == 0 || numerator == 0) {
		*why = "leaf 0x15 gives no TSC/crystal ratio";
		return 0;
	}
	if (crystal_hz != 0)
		return in_range((unsigned __int128)crystal_hz * numerator / denominator, why);
	if (base_mhz == 0) {
		*why = "leaf 0x15 gives no crystal rate, and leaf 0x16 no base frequency";
		return 0;
	}
	/* The crystal is base * denominator / numerator; the TSC runs at the
	 * crystal times the ratio, which is the base rate itself. */
	*from_base = 1;
	return in_range((unsigned __int128)base_mhz * 1000000, why);
}

uint64_t tsc_hz_from_khz(uint32_t khz, const char **why)
{
	if (khz == 0) {
		*why = "the leaf gives 0 kHz";
		return 0;
	}
	return in_range((unsigned __int128)khz * 1000, why);
}

uint64_t tsc_hz_from_pvclock(uint32_t mul, int8_t shift, const char **why)
{
	if (mul == 0) {
		*why = "its multiplier is 0";
		return 0;
	}
	if (shift < -32 || shift > 32) {
		*why = "its shift is outside -32..32";
		return 0;
	}
	unsigned __int128 scaled = NSEC_PER_SEC_128 << 32; /* 1e9 * 2^32 < 2^62 */
	if (shift >= 0)
		scaled >>= shift;
	else
		scaled <<= -shift; /* < 2^94: fits */
	return in_range(scaled / mul, why);
}

uint64_t tsc_hz_from_count(uint64_t tsc_ticks, uint64_t ref_ticks, uint64_t ref_hz, const char **why)
{
	if (ref_ticks == 0 || ref_hz == 0) {
		*why = "the reference did not count";
		return 0;
	}
	return in_range((unsigned __int128)tsc_ticks * ref_hz / ref_ticks, why);
}

uint64_t tsc_hz_from_period(uint64_t tsc_ticks, uint64_t ref_ticks, uint64_t period_fs,
			    const char **why)
{
	if (ref_ticks == 0 || period_fs == 0) {
		*why = "the reference did not count";
		return 0;
	}
	/* elapsed fs = ref_ticks * period_fs, below 2^96: no wrap. */
	unsigned __int128 elapsed_fs = (unsigned __int128)ref_ticks * period_fs;
	return in_range((unsigned __int128)tsc_ticks * FSEC_PER_SEC_128 / elapsed_fs, why);
}
