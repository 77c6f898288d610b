/*
 * acpi.h: what the clock needs of the firmware's ACPI tables: the FADT's
 * power-management timer and the HPET table's base address.
 *
 * The checks and field reads (acpi_tables.c) are pure: they take a table
 * as bytes and how many of them may be read, and refuse a table whose
 * length, checksum or signature is wrong before reading a field of it, so
 * hostile tables are tested on the host (tests/unit/test_acpi.c). Finding
 * the tables in memory (acpi.c) maps and checks each one before use.
 */
#ifndef ACPI_H
#define ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The kernel's side (acpi.c): the table with signature sig, found through
 * the RSDP the firmware left in the EBDA or the BIOS area, mapped and
 * checked; NULL with the reason when there is none or it fails a check.
 * ebda is where the EBDA begins (0 when unknown). */
const uint8_t *acpi_find_table(const char *sig, uint64_t ebda, const char **why);

#endif
