/*
 * clock_sources.h: the sources of the TSC's rate (clock_sources.c), in the
 * order `clock=auto` tries them: the exact ones (the CPU's or hypervisor's
 * word for it) first, then calibrations against a reference clock of known
 * rate. clock.c picks one (kernel option `clock`).
 */
#ifndef CLOCK_SOURCES_H
#define CLOCK_SOURCES_H

#include <stdbool.h>
#include <stdint.h>

enum clock_source {
	CLOCK_CPUID,      /* CPUID leaf 0x15 (and 0x16 for a missing crystal rate) */
	CLOCK_HYPERVISOR, /* the hypervisor leaf 0x40000010, in kHz */
	CLOCK_KVMCLOCK,   /* KVM's pvclock scale */
	CLOCK_LAPIC,      /* the local APIC's timer, at QEMU's fixed 1 GHz under TCG */
	CLOCK_PIT,        /* PIT channel 2, gated through port 0x61: the PC machine's */
	CLOCK_HPET,       /* the HPET's main counter (ACPI HPET table) */
	CLOCK_PMTIMER,    /* the ACPI PM timer (the FADT's PM_TMR_BLK) */
	CLOCK_PIT0,       /* PIT channel 0, read by latch commands (no gate needed) */
	CLOCK_SOURCES,
};

/* What measuring one source gave. */
struct clock_reading {
	uint64_t hz;      /* the TSC's rate; 0: the source is absent or refused */
	const char *why;  /* hz == 0: why; else a remark on how (or NULL) */
};

/* Real time at a moment, where a source gave one with the rate (kvmclock:
 * KVM's wall clock plus its system time at the record's TSC). */
struct clock_realtime {
	uint64_t ns;  /* ns since 1970 at tsc */
	uint64_t tsc; /* the TSC it was taken at */
	bool valid;   /* false: no source gave one; the CMOS RTC is read */
};
struct clock_realtime clock_source_realtime(void);

/* The source's name, as the option `clock` writes it, and a few words on
 * what it is. */
const char *clock_source_name(enum clock_source s);
const char *clock_source_what(enum clock_source s);

/* Measures the TSC's rate by source s. ebda is where the firmware's
 * memory map puts the EBDA (0: unknown), for finding ACPI's tables. */
struct clock_reading clock_source_measure(enum clock_source s, uint64_t ebda);

#endif
