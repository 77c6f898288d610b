/*
 * acpi_tables.c: checks and field reads of ACPI tables given as bytes (see
 * acpi.h). Nothing is read past the length a caller says it may read, and
 * no field of a table is read before its length and checksum have been
 * checked. Fields are copied out with memcpy: tables are packed and their
 * fields unaligned.
 */
#include <string.h>
#include "acpi.h"

/* Offsets of the fields read, from the ACPI specification's layouts. */
#define RSDP_REVISION     15 /* u8: 0 for ACPI 1.0, 2 and up for an XSDT */
#define RSDP_RSDT         16 /* u32 */
#define RSDP_LENGTH       20 /* u32, revision 2 and up */
#define RSDP_XSDT         24 /* u64, revision 2 and up */
#define TABLE_LENGTH      4  /* u32 */
#define FADT_DSDT         40 /* u32: the DSDT's address */
#define FADT_PM_TMR_BLK   76 /* u32: the timer's I/O port */
#define FADT_PM_TMR_LEN   91 /* u8: 4 when there is a timer */
#define FADT_FLAGS        112 /* u32 */
#define FADT_X_DSDT       140 /* u64, ACPI 2.0 and up: the DSDT's 64-bit address */
#define FADT_X_PM_TMR_BLK 208 /* a generic address (12 bytes), ACPI 2.0 and up */
#define FADT_FLAG_TMR_VAL_EXT (1u << 8)  /* the timer has 32 bits */
#define FADT_FLAG_HW_REDUCED  (1u << 20) /* no fixed hardware: no PM timer */
#define HPET_ADDRESS      40 /* a generic address (12 bytes) */
#define GAS_SPACE         0  /* u8 within a generic address: 0 memory, 1 I/O */
#define GAS_ADDRESS       4  /* u64 within a generic address */
#define GAS_LEN           12
#define SPACE_MEMORY      0
#define SPACE_IO          1

static uint32_t u32_at(const uint8_t *p, size_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

static uint64_t u64_at(const uint8_t *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

bool acpi_checksum_ok(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + p[i]);
	return sum == 0;
}

int acpi_rsdp_parse(const uint8_t *p, size_t avail, struct acpi_root *root, const char **why)
{
	if (avail < ACPI_RSDP_V1_LEN || memcmp(p, "RSD PTR ", 8)) {
		*why = "no RSDP signature";
		return -1;
	}
	if (!acpi_checksum_ok(p, ACPI_RSDP_V1_LEN)) {
		*why = "the RSDP's checksum is wrong";
		return -1;
	}
	if (p[RSDP_REVISION] >= 2 && avail >= ACPI_RSDP_V2_LEN) {
		uint32_t len = u32_at(p, RSDP_LENGTH);
		uint64_t xsdt = u64_at(p, RSDP_XSDT);
		if (len >= ACPI_RSDP_V2_LEN && len <= avail && acpi_checksum_ok(p, len) && xsdt) {
			root->address = xsdt;
			root->entry_size = 8;
			return 0;
		}
	}
	uint32_t rsdt = u32_at(p, RSDP_RSDT);
	if (rsdt == 0) {
		*why = "the RSDP gives no root table";
		return -1;
	}
	root->address = rsdt;
	root->entry_size = 4;
	return 0;
}

uint32_t acpi_table_length(const uint8_t *p)
{
	return u32_at(p, TABLE_LENGTH);
}

int acpi_table_check(const uint8_t *p, size_t avail, const char *sig, const char **why)
{
	if (avail < ACPI_HEADER_LEN) {
		*why = "shorter than a table header";
		return -1;
	}
	uint32_t len = acpi_table_length(p);
	if (len < ACPI_HEADER_LEN) {
		*why = "its length is shorter than its header";
		return -1;
	}
	if (len > avail) {
		*why = "its length runs past what may be read";
		return -1;
	}
	if (sig && memcmp(p, sig, 4)) {
		*why = "its signature is not the one asked for";
		return -1;
	}
	if (!acpi_checksum_ok(p, len)) {
		*why = "its checksum is wrong";
		return -1;
	}
	return 0;
}

size_t acpi_root_count(const uint8_t *root, int entry_size)
{
	return (acpi_table_length(root) - ACPI_HEADER_LEN) / (size_t)entry_size;
}

uint64_t acpi_root_entry(const uint8_t *root, int entry_size, size_t i)
{
	size_t off = ACPI_HEADER_LEN + i * (size_t)entry_size;
	return entry_size == 8 ? u64_at(root, off) : u32_at(root, off);
}

int acpi_fadt_pm_timer(const uint8_t *fadt, struct acpi_pm_timer *t, const char **why)
{
	uint32_t len = acpi_table_length(fadt);
	if (len < FADT_FLAGS + 4) {
		*why = "the FADT is too short to hold the PM timer's fields";
		return -1;
	}
	uint32_t flags = u32_at(fadt, FADT_FLAGS);
	if (flags & FADT_FLAG_HW_REDUCED) {
		*why = "the FADT says the machine is hardware-reduced (no PM timer)";
		return -1;
	}
	uint64_t port = u32_at(fadt, FADT_PM_TMR_BLK);
	if (port == 0 && len >= FADT_X_PM_TMR_BLK + GAS_LEN &&
	    fadt[FADT_X_PM_TMR_BLK + GAS_SPACE] == SPACE_IO)
		port = u64_at(fadt, FADT_X_PM_TMR_BLK + GAS_ADDRESS);
	if (port == 0) {
		*why = "the FADT gives no PM timer";
		return -1;
	}
	if (fadt[FADT_PM_TMR_LEN] != 4) {
		*why = "the FADT's PM timer block is not 4 bytes";
		return -1;
	}
	if (port > 0xfffc) {
		*why = "the FADT's PM timer port lies outside I/O space";
		return -1;
	}
	t->port = (uint16_t)port;
	t->wide = (flags & FADT_FLAG_TMR_VAL_EXT) != 0;
	return 0;
}

int acpi_fadt_dsdt(const uint8_t *fadt, uint64_t *dsdt, const char **why)
{
	uint32_t len = acpi_table_length(fadt);
	if (len < FADT_DSDT + 4) {
		*why = "the FADT is too short to hold the DSDT's address";
		return -1;
	}
	/* ACPI 2.0 on: a non-zero X_DSDT is the one to use. */
	uint64_t a = len >= FADT_X_DSDT + 8 ? u64_at(fadt, FADT_X_DSDT) : 0;
	if (a == 0)
		a = u32_at(fadt, FADT_DSDT);
	if (a == 0) {
		*why = "the FADT gives no DSDT";
		return -1;
	}
	*dsdt = a;
	return 0;
}

int acpi_hpet_base(const uint8_t *hpet, uint64_t *base, const char **why)
{
	if (acpi_table_length(hpet) < HPET_ADDRESS + GAS_LEN) {
		*why = "the HPET table is too short to hold its address";
		return -1;
	}
	if (hpet[HPET_ADDRESS + GAS_SPACE] != SPACE_MEMORY) {
		*why = "the HPET table's address is not in memory space";
		return -1;
	}
	uint64_t a = u64_at(hpet, HPET_ADDRESS + GAS_ADDRESS);
	if (a == 0 || (a & 0x3ff)) {
		*why = "the HPET table's address is 0 or not 1 KiB aligned";
		return -1;
	}
	*base = a;
	return 0;
}
