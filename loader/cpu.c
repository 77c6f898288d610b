/*
 * cpu.c: the processor features the loader and the kernel use, checked from
 * CPUID before the first of them runs, so a CPU model without one (a user's
 * -cpu choice) ends with a one-line reason instead of a fault nobody reports.
 *
 * The list comes from what the code executes: the loader's long mode, PAE,
 * MSRs and NX (entry.S checks the first three before it enters long mode,
 * since a fault there is a triple fault); the TSC (the clock, from the
 * loader's first line on); the x87 FPU, SSE and SSE2 (start.S turns them on,
 * the compiler emits SSE2 for x86-64 and newlib uses long double), CMOV
 * (baseline x86-64 code) and FXSR (isr.S saves the SSE state with fxsave);
 * the local APIC (timers and every interrupt). RDRAND is used only when
 * present (start.S); RDTSCP, FSGSBASE and XSAVE are not used, and neither is
 * an invariant TSC required (the kernel calibrates the TSC once at boot).
 */
#include <stddef.h>
#include <stdint.h>
#include "cpu.h"

enum { EAX, EBX, ECX, EDX };

struct cpu_feature {
	uint32_t leaf;      /* CPUID leaf whose output holds the flag */
	uint8_t reg;        /* which output register (EAX..EDX) */
	uint8_t bit;        /* the flag's bit in it */
	const char *reason; /* the message when it is missing */
};

static const struct cpu_feature required[] = {
	{ 0x80000001, EDX, 29, "the CPU has no long mode (the image is 64-bit code)" },
	{ 1, EDX, 6, "the CPU has no PAE (long mode's page tables need it)" },
	{ 1, EDX, 5, "the CPU has no MSRs (long mode is turned on through one)" },
	{ 0x80000001, EDX, 20, "the CPU has no NX (no-execute) bit, which W^X needs" },
	{ 1, EDX, 4, "the CPU has no TSC (the kernel's clock counts it)" },
	{ 1, EDX, 0, "the CPU has no x87 FPU (the kernel and newlib use it)" },
	{ 1, EDX, 15, "the CPU has no CMOV (the compiled x86-64 code uses it)" },
	{ 1, EDX, 24, "the CPU has no FXSR (interrupt entry saves the SSE state with fxsave)" },
	{ 1, EDX, 25, "the CPU has no SSE (the compiled x86-64 code uses it)" },
	{ 1, EDX, 26, "the CPU has no SSE2 (the compiled x86-64 code uses it)" },
	{ 1, EDX, 9, "the CPU has no local APIC (the kernel's timer and interrupts need it)" },
};

static void cpuid(uint32_t leaf, uint32_t r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[EAX]), "=b"(r[EBX]), "=c"(r[ECX]), "=d"(r[EDX])
			 : "a"(leaf), "c"(0));
}

/* Whether `leaf` exists: at most the highest leaf of its range (basic or
 * extended), which leaf 0 or 0x80000000 reports. */
static int has_leaf(uint32_t leaf)
{
	uint32_t r[4];
	cpuid(leaf & 0x80000000, r);
	return leaf <= r[EAX] && (r[EAX] & 0x80000000) == (leaf & 0x80000000);
}

const char *cpu_missing_feature(void)
{
	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
		const struct cpu_feature *f = &required[i];
		uint32_t r[4] = { 0 };
		if (has_leaf(f->leaf))
			cpuid(f->leaf, r);
		if (!((r[f->reg] >> f->bit) & 1))
			return f->reason;
	}
	return NULL;
}

unsigned cpu_phys_addr_bits(void)
{
	uint32_t r[4];
	if (!has_leaf(0x80000008))
		return 36;
	cpuid(0x80000008, r);
	return r[EAX] & 0xff;
}
