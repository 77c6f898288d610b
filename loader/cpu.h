/*
 * cpu.h: what the loader and the kernel need of the processor, checked before
 * anything uses it (cpu.c; entry.S checks the few that long mode itself needs,
 * before it enters long mode), and the CPU's physical address width.
 */
#ifndef LOADER_CPU_H
#define LOADER_CPU_H

/* The exit status of a CPU that lacks a feature the loader or the kernel
 * needs (EX_UNAVAILABLE): the machine cannot run the image, whatever it is. */
#define LOADER_NO_CPU_FEATURE 69

#ifndef __ASSEMBLER__
#include <stdint.h>

/*
 * NULL when the CPU (as CPUID describes it) has every feature the loader and
 * the kernel use, else a one-line reason naming the first one it lacks and
 * what needs it. Run before any of them is used.
 */
const char *cpu_missing_feature(void);

/* The CPU's physical address width in bits (CPUID 0x80000008; 36 when the
 * leaf is absent, as the SDM says to assume). */
unsigned cpu_phys_addr_bits(void);
#endif

#endif
