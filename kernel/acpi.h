/*
 * acpi.h: what the kernel needs of the firmware's ACPI tables: for the
 * clock, the FADT's power-management timer and the HPET table's base
 * address; for virtio-mmio, the devices the DSDT describes.
 *
 * The checks and field reads (acpi_tables.c) are pure: they take a table
 * as bytes and how many of them may be read, and refuse a table whose
 * length, checksum or signature is wrong before reading a field of it, so
 * hostile tables are tested on the host (tests/unit/test_acpi.c). The
 * DSDT's AML is read the same way (acpi_dsdt.c, tests/unit/test_acpi_dsdt.c,
 * tests/fuzz/fuzz_dsdt.c). Finding the tables in memory (acpi.c) maps and
 * checks each one before use.
 */
#ifndef ACPI_H
#define ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mmio_windows.h"

#define ACPI_HEADER_LEN   36      /* every system description table's header */
#define ACPI_RSDP_V1_LEN  20      /* the RSDP of ACPI 1.0 (RSDT only) */
#define ACPI_RSDP_V2_LEN  36      /* ACPI 2.0 and later (XSDT too) */
#define ACPI_TABLE_MAX    65536   /* the longest table we read; longer ones are refused */
#define ACPI_PM_TIMER_HZ  3579545 /* the PM timer's rate, fixed by the specification */

/* The root table the RSDP points at. */
struct acpi_root {
	uint64_t address; /* physical address of the RSDT or XSDT */
	int entry_size;   /* 4: an RSDT of 32-bit addresses; 8: an XSDT of 64-bit ones */
};

/* The FADT's power-management timer. */
struct acpi_pm_timer {
	uint16_t port; /* its I/O port */
	bool wide;     /* 32 bits (TMR_VAL_EXT), else 24 */
};

/* The bytes p[0..len) sum to 0 modulo 256. */
bool acpi_checksum_ok(const uint8_t *p, size_t len);

/* An RSDP at p, with avail bytes readable: 0 with *root set, or -1 with the
 * reason. The XSDT is taken where the revision gives one (and its extended
 * checksum holds), else the RSDT. */
int acpi_rsdp_parse(const uint8_t *p, size_t avail, struct acpi_root *root, const char **why);

/* The length a table's header claims (avail must be at least 8). */
uint32_t acpi_table_length(const uint8_t *p);

/* A table at p with avail bytes readable: 0 when its header fits, its
 * length lies in [ACPI_HEADER_LEN, avail], its bytes sum to 0 and its
 * signature is sig (4 characters; NULL takes any); else -1 with the reason. */
int acpi_table_check(const uint8_t *p, size_t avail, const char *sig, const char **why);

/* A checked root table's entries: how many, and the i-th's address. */
size_t acpi_root_count(const uint8_t *root, int entry_size);
uint64_t acpi_root_entry(const uint8_t *root, int entry_size, size_t i);

/* A checked FADT's PM timer: 0 with *t set, or -1 with the reason (none
 * given, a hardware-reduced machine, a block of another length, an
 * address outside I/O space). */
int acpi_fadt_pm_timer(const uint8_t *fadt, struct acpi_pm_timer *t, const char **why);

/* A checked HPET table's register block: 0 with *base set, or -1. */
int acpi_hpet_base(const uint8_t *hpet, uint64_t *base, const char **why);

/* A checked FADT's DSDT address: its X_DSDT where the FADT is long enough
 * to hold one and it is not 0, else its 32-bit DSDT field. 0 with *dsdt
 * set, or -1 with the reason (too short, or neither is set). */
int acpi_fadt_dsdt(const uint8_t *fadt, uint64_t *dsdt, const char **why);

/* ---- virtio-mmio devices in the DSDT (acpi_dsdt.c) ---- */

#define ACPI_VIRTIO_MMIO_HID  "LNRO0005" /* the _HID of a virtio-mmio device */
#define ACPI_DSDT_REFUSED_MAX 8          /* refused devices whose reasons are kept */

/* A LNRO0005 device the reader would not take. */
struct acpi_mmio_refusal {
	char name[5];    /* the Device's name (its last NameSeg), NUL-terminated */
	const char *why; /* why, a constant string */
};

/* What the reader found in one DSDT. */
struct acpi_mmio_found {
	struct mmio_window windows[MMIO_WINDOWS_MAX]; /* the devices taken, in the table's order */
	char names[MMIO_WINDOWS_MAX][5];  /* their Device names */
	int count;                        /* entries in windows[] */
	int beyond_max;                   /* sound devices past MMIO_WINDOWS_MAX, not taken */
	struct acpi_mmio_refusal refused[ACPI_DSDT_REFUSED_MAX]; /* the first refused devices */
	int nrefused;                     /* refused devices, those past refused[] counted too */
	int unfollowed;                   /* term lists with AML the walk does not follow, scanned
	                                   * for devices past it instead */
	const char *bad_why;              /* the first malformed AML outside a LNRO0005 device */
	size_t bad_at;                    /* its offset in the table */
};

/* The virtio-mmio devices (Device objects whose _HID is "LNRO0005") in the
 * DSDT dsdt[0..len), whose header has been checked: each taken with its
 * _CRS's register window and interrupt, and its _UID as the window's id (-1
 * when it has none that is an integer), or refused with a reason. Reads
 * nothing outside dsdt[0..len). Returns found->count. */
int acpi_dsdt_virtio_mmio(const uint8_t *dsdt, size_t len, struct acpi_mmio_found *found);

/* A LNRO0005 device's resource template crs[0..len) (acpi_crs.c): NULL
 * with w's base, size and irq set from its one Memory32Fixed descriptor and
 * its one Extended Interrupt (level-triggered, active-high), or why it is
 * refused: a descriptor that runs past the buffer, no End Tag, no window or
 * interrupt or more than one, a window given another way, an interrupt
 * that is edge-triggered, active-low or outside 1..255. The window's bounds
 * are the caller's to check (mmio_window_check). */
const char *acpi_crs_mmio_window(const uint8_t *crs, size_t len, struct mmio_window *w);

/* The kernel's side (acpi.c): the table with signature sig, found through
 * the RSDP the firmware left in the EBDA or the BIOS area, mapped and
 * checked; NULL with the reason when there is none or it fails a check.
 * ebda is where the EBDA begins (0 when unknown). */
const uint8_t *acpi_find_table(const char *sig, uint64_t ebda, const char **why);

/* Where the VMM says the RSDP is (the PVH start info's rsdp_paddr; 0: it
 * did not say). Set before the first acpi_find_table; the address is
 * checked like a table's, and a bad one is reported and the usual places
 * searched instead. */
void acpi_set_rsdp_hint(uint64_t phys);

/* Keeps the virtio-mmio windows the DSDT describes (mmio_windows_use), with
 * one line saying how many, and one for each device refused or other
 * trouble (always printed); with verbose, also a line when the DSDT holds AML
 * the reader does not follow. Quiet when there are no ACPI tables. The
 * number of windows kept. */
int acpi_virtio_mmio_windows(uint64_t ebda, bool verbose);

#endif
