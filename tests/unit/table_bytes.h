/*
 * table_bytes.h: building firmware tables by hand in the host tests
 * (test_acpi.c, test_smp_tables.c): little-endian fields at an offset, and
 * the checksum byte that makes a table's bytes sum to 0.
 */
#ifndef TABLE_BYTES_H
#define TABLE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void put16(uint8_t *p, size_t off, uint16_t v) { memcpy(p + off, &v, 2); }
static inline void put32(uint8_t *p, size_t off, uint32_t v) { memcpy(p + off, &v, 4); }
static inline void put64(uint8_t *p, size_t off, uint64_t v) { memcpy(p + off, &v, 8); }

/* Sets the byte at `at` so that p[0..len) sums to 0. */
static inline void fix_sum(uint8_t *p, size_t len, size_t at)
{
	p[at] = 0;
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + p[i]);
	p[at] = (uint8_t)-sum;
}

#endif
