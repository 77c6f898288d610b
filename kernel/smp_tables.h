/*
 * smp_tables.h: how many CPUs the machine has and their APIC IDs, from the
 * firmware's tables: ACPI's MADT (SeaBIOS on QEMU's pc machine, qboot on
 * microvm with ACPI on) or else the MultiProcessor Specification's table
 * (qboot without ACPI writes one; so do SeaBIOS and Firecracker).
 *
 * Every byte of either is the firmware's word. The readers here are pure:
 * they take the bytes and how many may be read, check every length and
 * checksum before the fields it covers, and keep of the CPUs only what the
 * kernel can use: enabled, an APIC ID an xAPIC can address (0..254), each
 * once, SMP_TABLE_MAX_CPUS at most; the rest are counted, with the first
 * reason, for the boot's message. tests/unit/test_smp_tables.c feeds them
 * hostile tables (truncated, bad checksums, too many CPUs, duplicate IDs).
 */
#ifndef SMP_TABLES_H
#define SMP_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SMP_TABLE_MAX_CPUS 64   /* as percpu.h's SMP_MAX_CPUS */
#define SMP_APIC_ID_MAX    254  /* 255 is the xAPIC's broadcast */
#define MADT_FIXED_LEN     44   /* the ACPI header, the local APIC's address, flags */
#define MP_FLOAT_LEN       16   /* the MP floating pointer structure */
#define MP_CONFIG_HEADER   44   /* the MP configuration table's header */
#define MP_CONFIG_MAX      65535 /* its base length is a 16-bit field */

/* The CPUs a table lists, as the kernel will use them. */
struct smp_cpu_list {
	int n;                                  /* CPUs kept, in the table's order */
	uint32_t apic_id[SMP_TABLE_MAX_CPUS];   /* their APIC IDs */
	int disabled;                           /* entries the table marks not enabled (hot-plug slots) */
	int dropped;                            /* enabled CPUs past SMP_TABLE_MAX_CPUS */
	int refused;                            /* entries refused: a duplicate ID, one an xAPIC cannot address */
	const char *refused_why;                /* the first refusal's reason */
	int bsp_index;                          /* the entry the table marks as the boot CPU (MP only); -1 */
};

/* A MADT of len bytes whose ACPI header, length and checksum have been
 * checked (acpi_table_check): its processors (local APIC and local x2APIC
 * entries) into out. 0, or -1 with the reason when the table cannot be
 * walked (shorter than its fixed part; an entry shorter than its own
 * header, running past the end, or of its type's wrong length). */
int smp_madt_cpus(const uint8_t *madt, size_t len, struct smp_cpu_list *out, const char **why);

/* The MP floating pointer in area (len bytes, searched on 16-byte
 * boundaries): 0 with its offset in *at and the configuration table's
 * physical address in *config, or -1 with the reason (none; one whose
 * checksum, length or revision is wrong; a default configuration, which has
 * no table and which this kernel does not take). */
int smp_mp_find(const uint8_t *area, size_t len, size_t *at, uint32_t *config, const char **why);

/* How many bytes the MP configuration table whose header is at cfg claims
 * (avail bytes readable, at least MP_CONFIG_HEADER): its base length, or 0
 * when the header is not a configuration table's. */
size_t smp_mp_config_length(const uint8_t *cfg, size_t avail);

/* The MP configuration table at cfg, avail bytes readable: its processor
 * entries into out. 0, or -1 with the reason (signature, a length shorter
 * than its header or past avail, the checksum, an entry of a type whose
 * length the specification does not give, entries past the length). */
int smp_mp_cpus(const uint8_t *cfg, size_t avail, struct smp_cpu_list *out, const char **why);

#endif
