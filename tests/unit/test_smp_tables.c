/*
 * test_smp_tables.c: the CPUs of the firmware's tables (kernel/smp_tables.c)
 * over tables built here as QEMU, SeaBIOS and qboot lay them out, and as
 * hostile firmware might: a MADT with disabled hot-plug slots, x2APIC
 * entries, duplicate and unaddressable APIC IDs, more CPUs than the kernel
 * keeps, and entries that are cut short, zero-length or run past the end;
 * an MP floating pointer and configuration table with the entry count
 * qboot leaves 0, bad checksums, lengths, revisions, a default
 * configuration, unknown entry types. Every table is copied into a heap
 * block of exactly its length, so a read past it is AddressSanitizer's
 * failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/smp_tables.h"
#include "table_bytes.h"

static const char *why;
static struct smp_cpu_list list;

/* ---- the MADT ------------------------------------------------------------ */

/* A MADT being built: its bytes and length so far. */
struct madt {
	uint8_t b[8192];
	size_t len;
};

static void madt_start(struct madt *m)
{
	memset(m, 0, sizeof *m);
	memcpy(m->b, "APIC", 4);
	put32(m->b, 36, 0xfee00000); /* the local APIC's address */
	put32(m->b, 40, 1);          /* PCAT_COMPAT */
	m->len = MADT_FIXED_LEN;
}

static void madt_entry(struct madt *m, const uint8_t *e, size_t len)
{
	memcpy(m->b + m->len, e, len);
	m->len += len;
}

static void madt_lapic(struct madt *m, uint8_t uid, uint8_t id, uint32_t flags)
{
	uint8_t e[8] = { 0, 8, uid, id };
	put32(e, 4, flags);
	madt_entry(m, e, sizeof e);
}

static void madt_x2apic(struct madt *m, uint32_t id, uint32_t flags)
{
	uint8_t e[16] = { 9, 16 };
	put32(e, 4, id);
	put32(e, 8, flags);
	put32(e, 12, id);
	madt_entry(m, e, sizeof e);
}

/* What QEMU adds after the CPUs: an I/O APIC and interrupt overrides. */
static void madt_others(struct madt *m)
{
	uint8_t ioapic[12] = { 1, 12, 0, 0 };
	put32(ioapic, 4, 0xfec00000);
	madt_entry(m, ioapic, sizeof ioapic);
	uint8_t iso[10] = { 2, 10, 0, 0, 2 };
	madt_entry(m, iso, sizeof iso);
	uint8_t nmi[6] = { 4, 6, 0xff, 0, 0, 1 };
	madt_entry(m, nmi, sizeof nmi);
}

/* The CPUs of the first len bytes of m, read from a block of exactly len. */
static int read_madt(const struct madt *m, size_t len)
{
	put32((uint8_t *)m->b, 4, (uint32_t)len);
	uint8_t *copy = malloc(len ? len : 1);
	memcpy(copy, m->b, len);
	int r = smp_madt_cpus(copy, len, &list, &why);
	free(copy);
	return r;
}

static void madt_as_qemu_gives_it(void **state)
{
	(void)state;
	struct madt m;
	madt_start(&m);
	for (uint8_t i = 0; i < 4; i++)
		madt_lapic(&m, i, i, 1);
	madt_lapic(&m, 4, 4, 0); /* -smp 4,maxcpus=6: two slots for hot plug */
	madt_lapic(&m, 5, 5, 0);
	madt_others(&m);
	assert_int_equal(read_madt(&m, m.len), 0);
	assert_int_equal(list.n, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(list.apic_id[i], i);
	assert_int_equal(list.disabled, 2);
	assert_int_equal(list.refused, 0);
	assert_int_equal(list.dropped, 0);
	assert_int_equal(list.bsp_index, -1);
}

static void madt_x2apic_entries(void **state)
{
	(void)state;
	struct madt m;
	madt_start(&m);
	madt_lapic(&m, 0, 0, 1);
	madt_x2apic(&m, 7, 1);
	madt_x2apic(&m, 300, 1);        /* beyond an xAPIC's reach */
	madt_x2apic(&m, 0xffffffff, 1);
	madt_x2apic(&m, 9, 2);          /* online capable, not enabled: a slot */
	assert_int_equal(read_madt(&m, m.len), 0);
	assert_int_equal(list.n, 2);
	assert_int_equal(list.apic_id[1], 7);
	assert_int_equal(list.refused, 2);
	assert_non_null(strstr(list.refused_why, "above 254"));
	assert_int_equal(list.disabled, 1);
}

static void madt_duplicates_and_broadcast(void **state)
{
	(void)state;
	struct madt m;
	madt_start(&m);
	madt_lapic(&m, 0, 0, 1);
	madt_lapic(&m, 1, 1, 1);
	madt_lapic(&m, 2, 1, 1);    /* the same ID twice: the first stays */
	madt_lapic(&m, 3, 0xff, 1); /* the broadcast ID */
	madt_lapic(&m, 4, 2, 1);
	assert_int_equal(read_madt(&m, m.len), 0);
	assert_int_equal(list.n, 3);
	assert_int_equal(list.apic_id[2], 2);
	assert_int_equal(list.refused, 2);
	assert_non_null(strstr(list.refused_why, "twice"));
}

static void madt_too_many(void **state)
{
	(void)state;
	struct madt m;
	madt_start(&m);
	for (int i = 0; i < 70; i++)
		madt_lapic(&m, (uint8_t)i, (uint8_t)i, 1);
	assert_int_equal(read_madt(&m, m.len), 0);
	assert_int_equal(list.n, SMP_TABLE_MAX_CPUS);
	assert_int_equal(list.dropped, 70 - SMP_TABLE_MAX_CPUS);
	assert_int_equal(list.apic_id[SMP_TABLE_MAX_CPUS - 1], SMP_TABLE_MAX_CPUS - 1);
}

static void madt_hostile(void **state)
{
	(void)state;
	struct madt m;
	/* Shorter than its fixed fields. */
	madt_start(&m);
	assert_int_equal(read_madt(&m, MADT_FIXED_LEN - 1), -1);
	assert_non_null(strstr(why, "fixed"));
	/* No entries at all: nothing, and no error. */
	assert_int_equal(read_madt(&m, MADT_FIXED_LEN), 0);
	assert_int_equal(list.n, 0);
	/* Every cut through a good table either reads the whole entries
	 * before the cut or is refused; none reads past it. */
	madt_start(&m);
	madt_lapic(&m, 0, 0, 1);
	madt_x2apic(&m, 1, 1);
	madt_others(&m);
	for (size_t len = MADT_FIXED_LEN; len <= m.len; len++) {
		int r = read_madt(&m, len);
		assert_true(r == 0 || r == -1);
		if (len == MADT_FIXED_LEN + 8 || len == MADT_FIXED_LEN + 24 || len == m.len)
			assert_int_equal(r, 0);
	}
	/* One byte of an entry's header. */
	assert_int_equal(read_madt(&m, MADT_FIXED_LEN + 1), -1);
	assert_non_null(strstr(why, "header"));
	/* An entry of length 0 or 1 (a walk that never moves). */
	for (uint8_t bad = 0; bad < 2; bad++) {
		madt_start(&m);
		uint8_t e[8] = { 0, bad };
		madt_entry(&m, e, sizeof e);
		assert_int_equal(read_madt(&m, m.len), -1);
		assert_non_null(strstr(why, "shorter than its own header"));
	}
	/* An entry claiming more than is left. */
	madt_start(&m);
	madt_lapic(&m, 0, 0, 1);
	m.b[MADT_FIXED_LEN + 1] = 200;
	assert_int_equal(read_madt(&m, m.len), -1);
	assert_non_null(strstr(why, "past the table's end"));
	/* Processor entries of the wrong length. */
	madt_start(&m);
	uint8_t short_lapic[6] = { 0, 6, 0, 0, 1, 0 };
	madt_entry(&m, short_lapic, sizeof short_lapic);
	assert_int_equal(read_madt(&m, m.len), -1);
	assert_non_null(strstr(why, "not 8 bytes"));
	madt_start(&m);
	uint8_t long_x2[20] = { 9, 20 };
	madt_entry(&m, long_x2, sizeof long_x2);
	assert_int_equal(read_madt(&m, m.len), -1);
	assert_non_null(strstr(why, "not 16 bytes"));
}

/* ---- the MP table -------------------------------------------------------- */

static void make_float(uint8_t *f, uint32_t config, uint8_t revision, uint8_t feature1)
{
	memset(f, 0, MP_FLOAT_LEN);
	memcpy(f, "_MP_", 4);
	put32(f, 4, config);
	f[8] = 1;
	f[9] = revision;
	f[11] = feature1;
	fix_sum(f, MP_FLOAT_LEN, 10);
}

struct mpc {
	uint8_t b[4096];
	size_t len;
	uint16_t count;
};

static void mpc_start(struct mpc *c)
{
	memset(c, 0, sizeof *c);
	memcpy(c->b, "PCMP", 4);
	c->b[6] = 4; /* revision 1.4 */
	memcpy(c->b + 8, "QBOOT   ", 8);
	put32(c->b, 36, 0xfee00000);
	c->len = MP_CONFIG_HEADER;
}

static void mpc_cpu(struct mpc *c, uint8_t id, uint8_t flags)
{
	uint8_t *e = c->b + c->len;
	memset(e, 0, 20);
	e[0] = 0;
	e[1] = id;
	e[2] = 0x14;
	e[3] = flags;
	c->len += 20;
	c->count++;
}

static void mpc_other(struct mpc *c, uint8_t type)
{
	uint8_t *e = c->b + c->len;
	memset(e, 0, 8);
	e[0] = type;
	c->len += 8;
	c->count++;
}

/* Length, count (or 0, as qboot) and checksum set; the CPUs of its first
 * avail bytes, read from a block of exactly that many. */
static int read_mpc(struct mpc *c, bool with_count, size_t avail)
{
	put16(c->b, 4, (uint16_t)c->len);
	put16(c->b, 34, with_count ? c->count : 0);
	fix_sum(c->b, c->len, 7);
	uint8_t *copy = malloc(avail ? avail : 1);
	memcpy(copy, c->b, avail);
	int r = smp_mp_cpus(copy, avail, &list, &why);
	free(copy);
	return r;
}

static void mp_as_qboot_and_seabios_give_it(void **state)
{
	(void)state;
	struct mpc c;
	for (int with_count = 0; with_count < 2; with_count++) {
		mpc_start(&c);
		mpc_cpu(&c, 0, 3); /* enabled, the boot CPU */
		mpc_cpu(&c, 1, 1);
		mpc_cpu(&c, 2, 1);
		mpc_other(&c, 1); /* bus */
		mpc_other(&c, 2); /* I/O APIC */
		for (int i = 0; i < 16; i++)
			mpc_other(&c, 3);
		mpc_other(&c, 4);
		mpc_other(&c, 4);
		assert_int_equal(read_mpc(&c, with_count, c.len), 0);
		assert_int_equal(list.n, 3);
		assert_int_equal(list.apic_id[2], 2);
		assert_int_equal(list.bsp_index, 0);
	}
}

static void mp_cpus_hostile(void **state)
{
	(void)state;
	struct mpc c;
	/* Disabled, duplicate, broadcast, too many. */
	mpc_start(&c);
	mpc_cpu(&c, 0, 1);
	mpc_cpu(&c, 1, 0);
	mpc_cpu(&c, 0, 1);
	mpc_cpu(&c, 0xff, 1);
	mpc_cpu(&c, 3, 3); /* a boot CPU flag after the first entry */
	assert_int_equal(read_mpc(&c, true, c.len), 0);
	assert_int_equal(list.n, 2);
	assert_int_equal(list.disabled, 1);
	assert_int_equal(list.refused, 2);
	assert_int_equal(list.bsp_index, 1);
	mpc_start(&c);
	for (int i = 0; i < 70; i++)
		mpc_cpu(&c, (uint8_t)i, 1);
	assert_int_equal(read_mpc(&c, true, c.len), 0);
	assert_int_equal(list.n, SMP_TABLE_MAX_CPUS);
	assert_int_equal(list.dropped, 70 - SMP_TABLE_MAX_CPUS);

	/* A bad checksum. */
	mpc_start(&c);
	mpc_cpu(&c, 0, 1);
	read_mpc(&c, true, c.len);
	c.b[7]++;
	uint8_t *copy = malloc(c.len);
	memcpy(copy, c.b, c.len);
	assert_int_equal(smp_mp_cpus(copy, c.len, &list, &why), -1);
	assert_non_null(strstr(why, "checksum"));
	free(copy);
	/* Another signature. */
	mpc_start(&c);
	memcpy(c.b, "PCMQ", 4);
	assert_int_equal(read_mpc(&c, true, c.len), -1);
	assert_int_equal(smp_mp_config_length(c.b, c.len), 0);
	/* Fewer bytes readable than its header, or than its length claims. */
	mpc_start(&c);
	mpc_cpu(&c, 0, 1);
	assert_int_equal(read_mpc(&c, true, MP_CONFIG_HEADER - 1), -1);
	assert_int_equal(read_mpc(&c, true, c.len - 1), -1);
	assert_non_null(strstr(why, "length"));
	/* A length shorter than the header. */
	mpc_start(&c);
	c.len = 20;
	put16(c.b, 4, 20);
	copy = malloc(MP_CONFIG_HEADER);
	memcpy(copy, c.b, MP_CONFIG_HEADER);
	assert_int_equal(smp_mp_cpus(copy, MP_CONFIG_HEADER, &list, &why), -1);
	free(copy);
	/* An entry of a type whose length nobody knows. */
	mpc_start(&c);
	mpc_cpu(&c, 0, 1);
	mpc_other(&c, 5);
	assert_int_equal(read_mpc(&c, true, c.len), -1);
	assert_non_null(strstr(why, "unknown type"));
	/* An entry cut by the length: a processor entry's 20 bytes with 12 left. */
	mpc_start(&c);
	mpc_cpu(&c, 0, 1);
	c.len -= 8;
	assert_int_equal(read_mpc(&c, true, c.len), -1);
	assert_non_null(strstr(why, "past the table's end"));
}

static void mp_float_search(void **state)
{
	(void)state;
	uint8_t area[1024];
	size_t at;
	uint32_t config;
	memset(area, 0, sizeof area);
	assert_int_equal(smp_mp_find(area, sizeof area, &at, &config, &why), -1);
	assert_non_null(strstr(why, "no MP floating pointer"));
	/* In the last 16 bytes, as qboot puts it at 0x9fc00 in the EBDA's KiB. */
	make_float(area + sizeof area - 16, 0x9fc10, 4, 0);
	assert_int_equal(smp_mp_find(area, sizeof area, &at, &config, &why), 0);
	assert_int_equal(at, sizeof area - 16);
	assert_int_equal(config, 0x9fc10);
	/* An area too short for it, or cut through it: not found, no overread. */
	uint8_t *cut = malloc(sizeof area - 1);
	memcpy(cut, area, sizeof area - 1);
	assert_int_equal(smp_mp_find(cut, sizeof area - 1, &at, &config, &why), -1);
	assert_int_equal(smp_mp_find(cut, 15, &at, &config, &why), -1);
	assert_int_equal(smp_mp_find(cut, 0, &at, &config, &why), -1);
	free(cut);
	/* A bad checksum, a wrong length, revision 2: passed over; a good one
	 * further on is taken. */
	make_float(area, 0x1000, 4, 0);
	area[10]++;
	make_float(area + 16, 0x2000, 4, 0);
	area[16 + 8] = 2;
	make_float(area + 32, 0x3000, 2, 0);
	make_float(area + 48, 0x4000, 1, 0);
	assert_int_equal(smp_mp_find(area, sizeof area, &at, &config, &why), 0);
	assert_int_equal(at, 48);
	assert_int_equal(config, 0x4000);
	assert_int_equal(smp_mp_find(area, 48, &at, &config, &why), -1);
	assert_non_null(strstr(why, "revision"));
	/* A default configuration, or no table address. */
	memset(area, 0, sizeof area);
	make_float(area, 0, 4, 5);
	assert_int_equal(smp_mp_find(area, sizeof area, &at, &config, &why), -1);
	assert_non_null(strstr(why, "default configuration"));
	make_float(area, 0, 4, 0);
	assert_int_equal(smp_mp_find(area, sizeof area, &at, &config, &why), -1);
	assert_non_null(strstr(why, "no configuration table"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(madt_as_qemu_gives_it),
		cmocka_unit_test(madt_x2apic_entries),
		cmocka_unit_test(madt_duplicates_and_broadcast),
		cmocka_unit_test(madt_too_many),
		cmocka_unit_test(madt_hostile),
		cmocka_unit_test(mp_as_qboot_and_seabios_give_it),
		cmocka_unit_test(mp_cpus_hostile),
		cmocka_unit_test(mp_float_search),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
