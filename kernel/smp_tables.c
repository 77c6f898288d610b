/*
 * smp_tables.c: the CPUs of the MADT and of the MP configuration table
 * (see smp_tables.h). Pure. Fields are read byte by byte, little-endian,
 * so that no table's alignment matters.
 */
#include <string.h>
#include "smp_tables.h"

#define MADT_LOCAL_APIC     0  /* type: processor local APIC */
#define MADT_LOCAL_APIC_LEN 8
#define MADT_X2APIC         9  /* type: processor local x2APIC */
#define MADT_X2APIC_LEN     16
#define MADT_ENABLED        1u /* flags: the CPU is usable now */
#define MADT_ONLINE_CAPABLE 2u /* ... or may be brought up (ACPI 6.3) */

#define MP_PROCESSOR        0  /* entry types and lengths (MP specification 1.4, table 4-3) */
#define MP_PROCESSOR_LEN    20
#define MP_OTHER_LEN        8  /* bus, I/O APIC, I/O and local interrupt assignments: types 1-4 */
#define MP_LAST_KNOWN_TYPE  4
#define MP_CPU_ENABLED      1u
#define MP_CPU_BOOT         2u

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool sums_to_zero(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + p[i]);
	return sum == 0;
}

static void list_init(struct smp_cpu_list *out)
{
	memset(out, 0, sizeof *out);
	out->bsp_index = -1;
}

static void refuse(struct smp_cpu_list *out, const char *why)
{
	if (out->refused++ == 0)
		out->refused_why = why;
}

/* One enabled CPU: kept, unless its ID cannot be addressed, is there already,
 * or the list is full. The index it was kept at, or -1. */
static int add_cpu(struct smp_cpu_list *out, uint32_t apic_id)
{
	if (apic_id > SMP_APIC_ID_MAX) {
		refuse(out, "an APIC ID above 254, which the kernel's xAPIC-mode IPIs cannot address");
		return -1;
	}
	for (int i = 0; i < out->n; i++) {
		if (out->apic_id[i] == apic_id) {
			refuse(out, "an APIC ID listed twice");
			return -1;
		}
	}
	if (out->n == SMP_TABLE_MAX_CPUS) {
		out->dropped++;
		return -1;
	}
	out->apic_id[out->n] = apic_id;
	return out->n++;
}

int smp_madt_cpus(const uint8_t *madt, size_t len, struct smp_cpu_list *out, const char **why)
{
	list_init(out);
	if (len < MADT_FIXED_LEN) {
		*why = "the MADT is shorter than its fixed fields";
		return -1;
	}
	for (size_t off = MADT_FIXED_LEN; off < len;) {
		if (len - off < 2) {
			*why = "a MADT entry's header runs past the table's end";
			return -1;
		}
		uint8_t type = madt[off], elen = madt[off + 1];
		if (elen < 2 || elen > len - off) {
			*why = elen < 2 ? "a MADT entry is shorter than its own header"
					: "a MADT entry runs past the table's end";
			return -1;
		}
		const uint8_t *e = madt + off;
		if (type == MADT_LOCAL_APIC || type == MADT_X2APIC) {
			size_t want = type == MADT_LOCAL_APIC ? MADT_LOCAL_APIC_LEN : MADT_X2APIC_LEN;
			if (elen != want) {
				*why = type == MADT_LOCAL_APIC ? "a MADT local APIC entry is not 8 bytes"
							       : "a MADT local x2APIC entry is not 16 bytes";
				return -1;
			}
			uint32_t id = type == MADT_LOCAL_APIC ? e[3] : le32(e + 4);
			uint32_t flags = le32(e + (type == MADT_LOCAL_APIC ? 4 : 8));
			if (flags & MADT_ENABLED)
				add_cpu(out, id);
			else
				out->disabled++;
		}
		off += elen;
	}
	return 0;
}

int smp_mp_find(const uint8_t *area, size_t len, size_t *at, uint32_t *config, const char **why)
{
	*why = "no MP floating pointer";
	for (size_t off = 0; len >= MP_FLOAT_LEN && off <= len - MP_FLOAT_LEN; off += 16) {
		const uint8_t *f = area + off;
		if (memcmp(f, "_MP_", 4))
			continue;
		if (f[8] != 1 || !sums_to_zero(f, MP_FLOAT_LEN)) {
			*why = "an MP floating pointer whose length or checksum is wrong";
			continue;
		}
		if (f[9] != 1 && f[9] != 4) {
			*why = "an MP floating pointer of a revision other than 1.1 or 1.4";
			continue;
		}
		if (f[11] != 0) {
			*why = "an MP default configuration (no table), which this kernel does not take";
			return -1;
		}
		*config = le32(f + 4);
		if (*config == 0) {
			*why = "an MP floating pointer with no configuration table";
			return -1;
		}
		*at = off;
		return 0;
	}
	return -1;
}

size_t smp_mp_config_length(const uint8_t *cfg, size_t avail)
{
	if (avail < MP_CONFIG_HEADER || memcmp(cfg, "PCMP", 4))
		return 0;
	return le16(cfg + 4);
}

int smp_mp_cpus(const uint8_t *cfg, size_t avail, struct smp_cpu_list *out, const char **why)
{
	list_init(out);
	size_t len = smp_mp_config_length(cfg, avail);
	if (len == 0) {
		*why = "no MP configuration table at the floating pointer's address";
		return -1;
	}
	if (len < MP_CONFIG_HEADER || len > avail) {
		*why = "the MP configuration table's length is shorter than its header or past what is mapped";
		return -1;
	}
	if (!sums_to_zero(cfg, len)) {
		*why = "the MP configuration table's checksum is wrong";
		return -1;
	}
	/* The entries are walked to the base table's length, which the checksum
	 * covers; the entry count is not read: qboot's table leaves it 0. */
	for (size_t off = MP_CONFIG_HEADER; off < len;) {
		uint8_t type = cfg[off];
		if (type > MP_LAST_KNOWN_TYPE) {
			*why = "an MP configuration entry of an unknown type (its length is unknown)";
			return -1;
		}
		size_t elen = type == MP_PROCESSOR ? MP_PROCESSOR_LEN : MP_OTHER_LEN;
		if (elen > len - off) {
			*why = "an MP configuration entry runs past the table's end";
			return -1;
		}
		if (type == MP_PROCESSOR) {
			const uint8_t *e = cfg + off;
			if (e[3] & MP_CPU_ENABLED) {
				int at = add_cpu(out, e[1]);
				if (at >= 0 && (e[3] & MP_CPU_BOOT) && out->bsp_index < 0)
					out->bsp_index = at;
			} else {
				out->disabled++;
			}
		}
		off += elen;
	}
	return 0;
}
