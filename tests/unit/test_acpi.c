/*
 * test_acpi.c: the checks and field reads of ACPI tables
 * (kernel/acpi_tables.c) over tables built here, as SeaBIOS and qboot lay
 * them out and as hostile firmware might: an RSDP of each revision, one
 * with a bad checksum or a length past what may be read; tables whose
 * length is shorter than their header, longer than the bytes there, or
 * whose checksum or signature is wrong; a FADT with and without a PM timer
 * (24 and 32 bits, the port in PM_TMR_BLK or only in X_PM_TMR_BLK, a
 * hardware-reduced one, one too short for the fields); an HPET table with
 * its address in memory space, in I/O space, unaligned, or cut short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/acpi.h"
#include "table_bytes.h"

static const char *why;

/* A table of len bytes with signature sig, its header's length and checksum set. */
static void make_table(uint8_t *p, size_t len, const char *sig)
{
	memcpy(p, sig, 4);
	put32(p, 4, (uint32_t)len);
	p[8] = 1; /* revision */
	memcpy(p + 10, "UKTEST", 6);
	fix_sum(p, len, 9);
}

static void make_rsdp(uint8_t *p, int revision, uint32_t rsdt, uint64_t xsdt)
{
	memset(p, 0, ACPI_RSDP_V2_LEN);
	memcpy(p, "RSD PTR ", 8);
	memcpy(p + 9, "UKTEST", 6);
	p[15] = (uint8_t)revision;
	put32(p, 16, rsdt);
	fix_sum(p, ACPI_RSDP_V1_LEN, 8);
	if (revision >= 2) { /* the extended checksum covers the first one too */
		put32(p, 20, ACPI_RSDP_V2_LEN);
		put64(p, 24, xsdt);
		fix_sum(p, ACPI_RSDP_V2_LEN, 32);
	}
}

static void rsdp_revisions(void **state)
{
	(void)state;
	uint8_t p[ACPI_RSDP_V2_LEN];
	struct acpi_root root;
	make_rsdp(p, 0, 0x7fe1000, 0);
	assert_int_equal(acpi_rsdp_parse(p, ACPI_RSDP_V1_LEN, &root, &why), 0);
	assert_int_equal(root.address, 0x7fe1000);
	assert_int_equal(root.entry_size, 4);
	make_rsdp(p, 2, 0x7fe1000, 0x7fe2000);
	assert_int_equal(acpi_rsdp_parse(p, sizeof p, &root, &why), 0);
	assert_int_equal(root.address, 0x7fe2000);
	assert_int_equal(root.entry_size, 8);
	/* A revision 2 RSDP at the very end of what may be read: only its
	 * first 20 bytes are taken, so the RSDT. */
	assert_int_equal(acpi_rsdp_parse(p, ACPI_RSDP_V1_LEN, &root, &why), 0);
	assert_int_equal(root.entry_size, 4);
}

static void rsdp_hostile(void **state)
{
	(void)state;
	uint8_t p[ACPI_RSDP_V2_LEN];
	struct acpi_root root;
	make_rsdp(p, 0, 0x7fe1000, 0);
	p[16] ^= 1; /* checksum now wrong */
	assert_int_equal(acpi_rsdp_parse(p, sizeof p, &root, &why), -1);
	make_rsdp(p, 0, 0x7fe1000, 0);
	assert_int_equal(acpi_rsdp_parse(p, ACPI_RSDP_V1_LEN - 1, &root, &why), -1);
	p[0] = 'X';
	assert_int_equal(acpi_rsdp_parse(p, sizeof p, &root, &why), -1);
	make_rsdp(p, 0, 0, 0); /* no root table at all */
	assert_int_equal(acpi_rsdp_parse(p, sizeof p, &root, &why), -1);
	/* Revision 2 whose length runs past the bytes there, or whose extended
	 * checksum is wrong: the XSDT is not taken, the RSDT is. */
	make_rsdp(p, 2, 0x7fe1000, 0x7fe2000);
	put32(p, 20, 4096);
	fix_sum(p, ACPI_RSDP_V1_LEN, 8);
	assert_int_equal(acpi_rsdp_parse(p, sizeof p, &root, &why), 0);
	assert_int_equal(root.entry_size, 4);
	make_rsdp(p, 2, 0x7fe1000, 0x7fe2000);
	p[33] ^= 0x55;
	assert_int_equal(acpi_rsdp_parse(p, sizeof p, &root, &why), 0);
	assert_int_equal(root.entry_size, 4);
}

static void table_checks(void **state)
{
	(void)state;
	uint8_t t[64];
	memset(t, 0, sizeof t);
	make_table(t, 56, "HPET");
	assert_int_equal(acpi_table_check(t, sizeof t, "HPET", &why), 0);
	assert_int_equal(acpi_table_check(t, 56, NULL, &why), 0);
	/* The wrong signature; fewer bytes than its length; than a header. */
	assert_int_equal(acpi_table_check(t, sizeof t, "FACP", &why), -1);
	assert_int_equal(acpi_table_check(t, 55, "HPET", &why), -1);
	assert_int_equal(acpi_table_check(t, ACPI_HEADER_LEN - 1, "HPET", &why), -1);
	/* A length shorter than the header, and a huge one. */
	make_table(t, 56, "HPET");
	put32(t, 4, 8);
	assert_int_equal(acpi_table_check(t, sizeof t, "HPET", &why), -1);
	put32(t, 4, 0xffffffff);
	assert_int_equal(acpi_table_check(t, sizeof t, "HPET", &why), -1);
	/* One byte changed: the checksum fails. */
	make_table(t, 56, "HPET");
	t[50] ^= 1;
	assert_int_equal(acpi_table_check(t, sizeof t, "HPET", &why), -1);
}

static void root_entries(void **state)
{
	(void)state;
	uint8_t r[ACPI_HEADER_LEN + 3 * 8];
	memset(r, 0, sizeof r);
	put64(r, ACPI_HEADER_LEN, 0x1000);
	put64(r, ACPI_HEADER_LEN + 8, 0x123456789000ULL);
	/* An XSDT of two entries and 4 stray bytes: the stray bytes are no entry. */
	make_table(r, ACPI_HEADER_LEN + 2 * 8 + 4, "XSDT");
	assert_int_equal(acpi_table_check(r, sizeof r, "XSDT", &why), 0);
	assert_int_equal(acpi_root_count(r, 8), 2);
	assert_int_equal(acpi_root_entry(r, 8, 1), 0x123456789000ULL);
	make_table(r, ACPI_HEADER_LEN + 3 * 4, "RSDT");
	assert_int_equal(acpi_root_count(r, 4), 3);
	assert_int_equal(acpi_root_entry(r, 4, 0), 0x1000);
	/* A header alone: no entries. */
	make_table(r, ACPI_HEADER_LEN, "RSDT");
	assert_int_equal(acpi_root_count(r, 4), 0);
}

/* A FADT of len bytes: PM_TMR_BLK port, PM_TMR_LEN 4, the flags given. */
static void make_fadt(uint8_t *f, size_t len, uint32_t port, uint32_t flags)
{
	memset(f, 0, 276);
	put32(f, 76, port);
	f[91] = 4;
	put32(f, 112, flags);
	make_table(f, len, "FACP");
}

static void fadt_pm_timer(void **state)
{
	(void)state;
	uint8_t f[276];
	struct acpi_pm_timer t;
	/* QEMU's pc machine: port 0x608, 24 bits (SeaBIOS's FADT is 116 bytes, revision 1). */
	make_fadt(f, 116, 0x608, 0);
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), 0);
	assert_int_equal(t.port, 0x608);
	assert_false(t.wide);
	make_fadt(f, 244, 0xb008, 1u << 8);
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), 0);
	assert_true(t.wide);
	/* The port only in X_PM_TMR_BLK, in I/O space. */
	make_fadt(f, 244, 0, 0);
	f[208] = 1;
	put64(f, 212, 0x408);
	make_table(f, 244, "FACP");
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), 0);
	assert_int_equal(t.port, 0x408);
}

static void fadt_without_a_pm_timer(void **state)
{
	(void)state;
	uint8_t f[276];
	struct acpi_pm_timer t;
	/* microvm's: hardware-reduced (its other fields are not to be read). */
	make_fadt(f, 276, 0x608, 1u << 20);
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), -1);
	make_fadt(f, 116, 0, 0);
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), -1);
	/* Too short to hold the flags. */
	make_fadt(f, 100, 0x608, 0);
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), -1);
	/* A block of another length; a port past I/O space (only X_ can say so);
	 * X_PM_TMR_BLK in memory space. */
	make_fadt(f, 116, 0x608, 0);
	f[91] = 2;
	make_table(f, 116, "FACP");
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), -1);
	make_fadt(f, 244, 0, 0);
	f[208] = 1;
	put64(f, 212, 0x10000);
	make_table(f, 244, "FACP");
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), -1);
	make_fadt(f, 244, 0, 0);
	f[208] = 0;
	put64(f, 212, 0xfed00000);
	make_table(f, 244, "FACP");
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), -1);
	/* X_PM_TMR_BLK given, but the table too short to hold it. */
	make_fadt(f, 216, 0, 0);
	f[208] = 1;
	put64(f, 212, 0x408);
	make_table(f, 216, "FACP");
	assert_int_equal(acpi_fadt_pm_timer(f, &t, &why), -1);
}

static void hpet_table(void **state)
{
	(void)state;
	uint8_t h[56];
	uint64_t base = 0;
	memset(h, 0, sizeof h);
	put64(h, 44, 0xfed00000);
	make_table(h, 56, "HPET");
	assert_int_equal(acpi_hpet_base(h, &base, &why), 0);
	assert_int_equal(base, 0xfed00000);
	h[40] = 1; /* I/O space */
	make_table(h, 56, "HPET");
	assert_int_equal(acpi_hpet_base(h, &base, &why), -1);
	h[40] = 0;
	put64(h, 44, 0xfed00010); /* not 1 KiB aligned */
	make_table(h, 56, "HPET");
	assert_int_equal(acpi_hpet_base(h, &base, &why), -1);
	put64(h, 44, 0);
	make_table(h, 56, "HPET");
	assert_int_equal(acpi_hpet_base(h, &base, &why), -1);
	put64(h, 44, 0xfed00000);
	make_table(h, 48, "HPET"); /* the address cut off */
	assert_int_equal(acpi_hpet_base(h, &base, &why), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rsdp_revisions),
		cmocka_unit_test(rsdp_hostile),
		cmocka_unit_test(table_checks),
		cmocka_unit_test(root_entries),
		cmocka_unit_test(fadt_pm_timer),
		cmocka_unit_test(fadt_without_a_pm_timer),
		cmocka_unit_test(hpet_table),
	};
	return cmocka_run_group_tests_name("acpi", tests, NULL, NULL);
}
