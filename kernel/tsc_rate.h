/*
 * tsc_rate.h: the TSC's rate from what a CPU or hypervisor reports (CPUID
 * leaves 0x15 and 0x16, the hypervisor leaf 0x40000010, kvmclock's scale)
 * and from a count of a reference clock's ticks, as pure arithmetic: no
 * instruction is run here, so every case, hostile values included, is
 * tested on the host (tests/unit/test_tsc_rate.c). Each returns the rate in
 * Hz, or 0 with a reason when the values give none or one outside
 * [TSC_HZ_MIN, TSC_HZ_MAX].
 */
#ifndef TSC_RATE_H
#define TSC_RATE_H

#include <stdint.h>

/* Bounds on a TSC rate the kernel accepts: below a MHz the nanosecond clock
 * would step by microseconds (and the old PIT failure read 46,800 Hz); above
 * 100 GHz no CPU runs. A source giving a rate outside is refused. */
#define TSC_HZ_MIN 1000000ULL
#define TSC_HZ_MAX 100000000000ULL

/* CPUID leaf 0x15: TSC = crystal * numerator / denominator. crystal_hz is
 * ECX; where it is 0, base_mhz (leaf 0x16 EAX, the processor's base
 * frequency in MHz, 0 when absent) stands in for the TSC itself, the way
 * the leaf's ratio relates them, which is coarse (whole MHz). *from_base
 * is set when it did. */
uint64_t tsc_hz_from_cpuid15(uint32_t denominator, uint32_t numerator, uint32_t crystal_hz,
			     uint32_t base_mhz, int *from_base, const char **why);

/* The hypervisor leaf 0x40000010's EAX: the TSC rate in kHz. */
uint64_t tsc_hz_from_khz(uint32_t khz, const char **why);

/* kvmclock's (pvclock's) scale: ns = ((ticks << shift, or >> -shift) *
 * mul) >> 32, so the TSC rate is 1e9 * 2^(32 - shift) / mul. shift is
 * refused outside [-32, 32] and mul when 0. */
uint64_t tsc_hz_from_pvclock(uint32_t mul, int8_t shift, const char **why);

/* A calibration: tsc_ticks of the TSC while a reference clock of ref_hz
 * counted ref_ticks. */
uint64_t tsc_hz_from_count(uint64_t tsc_ticks, uint64_t ref_ticks, uint64_t ref_hz, const char **why);

/* The same with the reference's tick as a period in femtoseconds (the
 * HPET's unit). */
uint64_t tsc_hz_from_period(uint64_t tsc_ticks, uint64_t ref_ticks, uint64_t period_fs,
			    const char **why);

#endif
