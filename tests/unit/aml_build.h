/*
 * aml_build.h: composing AML and resource templates for the unit tests of
 * the DSDT reader (test_acpi_dsdt.c, test_acpi_crs.c): byte buffers, package
 * lengths, Scope, Device and Name objects, Memory32Fixed and Extended
 * Interrupt descriptors, and a DSDT header with its checksum, the way
 * QEMU's aml-build writes them (the fewest bytes for each package length
 * and integer). Include after cmocka.h.
 */
#ifndef AML_BUILD_H
#define AML_BUILD_H

#include <stdint.h>
#include <string.h>
#include "kernel/acpi.h"

/* Bytes being composed: a table, a term list or a resource template. */
struct aml {
	uint8_t b[8192]; /* the bytes */
	size_t n;        /* how many */
};

static inline void put(struct aml *a, const void *p, size_t n)
{
	assert_true(a->n + n <= sizeof a->b);
	memcpy(a->b + a->n, p, n);
	a->n += n;
}

static inline void put8(struct aml *a, uint8_t v) { put(a, &v, 1); }

static inline void put_le(struct aml *a, uint64_t v, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++)
		put8(a, (uint8_t)(v >> (8 * i)));
}

/* A PkgLength for a body of n bytes, in `bytes` bytes (1-4; 0: the fewest). */
static inline void pkg_length(struct aml *a, size_t n, int bytes)
{
	if (bytes == 0)
		bytes = n + 1 < 0x40 ? 1 : n + 2 < 0x1000 ? 2 : n + 3 < 0x100000 ? 3 : 4;
	size_t len = n + (size_t)bytes;
	if (bytes == 1) {
		put8(a, (uint8_t)len);
		return;
	}
	put8(a, (uint8_t)(((bytes - 1) << 6) | (len & 0x0f)));
	for (int i = 0; i < bytes - 1; i++)
		put8(a, (uint8_t)(len >> (4 + 8 * i)));
}

/* op (1 or 2 bytes), PkgLength, then name (4 characters) and body. */
static inline void package(struct aml *a, const uint8_t *op, size_t oplen, const char *name,
		    const struct aml *body)
{
	put(a, op, oplen);
	pkg_length(a, (name ? 4 : 0) + body->n, 0);
	if (name)
		put(a, name, 4);
	put(a, body->b, body->n);
}

static inline void scope(struct aml *a, const char *name, const struct aml *body)
{
	static const uint8_t op[] = { 0x10 };
	package(a, op, 1, name, body);
}

static inline void device(struct aml *a, const char *name, const struct aml *body)
{
	static const uint8_t op[] = { 0x5b, 0x82 };
	package(a, op, 2, name, body);
}

static inline void name_string(struct aml *a, const char *name, const char *value)
{
	put8(a, 0x08);
	put(a, name, 4);
	put8(a, 0x0d);
	put(a, value, strlen(value) + 1);
}

/* Name(name, v) with the shortest encoding, as QEMU's aml_int writes it. */
static inline void name_int(struct aml *a, const char *name, uint64_t v)
{
	put8(a, 0x08);
	put(a, name, 4);
	if (v == 0 || v == 1) {
		put8(a, (uint8_t)v);
	} else if (v <= 0xff) {
		put8(a, 0x0a);
		put_le(a, v, 1);
	} else if (v <= 0xffff) {
		put8(a, 0x0b);
		put_le(a, v, 2);
	} else if (v <= 0xffffffff) {
		put8(a, 0x0c);
		put_le(a, v, 4);
	} else {
		put8(a, 0x0e);
		put_le(a, v, 8);
	}
}

/* Name(name, Buffer(size) { bytes }), the size given as a byte constant. */
static inline void name_buffer_sized(struct aml *a, const char *name, const struct aml *bytes, size_t size)
{
	struct aml body = { .n = 0 };
	put8(&body, 0x0a);
	put8(&body, (uint8_t)size);
	put(&body, bytes->b, bytes->n);
	static const uint8_t op[] = { 0x11 };
	put8(a, 0x08);
	put(a, name, 4);
	package(a, op, 1, NULL, &body);
}

static inline void name_buffer(struct aml *a, const char *name, const struct aml *bytes)
{
	name_buffer_sized(a, name, bytes, bytes->n);
}

/* Resource descriptors. */
static inline void mem32_fixed(struct aml *t, uint32_t base, uint32_t size)
{
	put8(t, 0x86);
	put_le(t, 9, 2);
	put8(t, 1); /* read-write */
	put_le(t, base, 4);
	put_le(t, size, 4);
}

#define IRQ_CONSUMER 0x01
#define IRQ_EDGE     0x02
#define IRQ_LOW      0x04

static inline void ext_irq(struct aml *t, uint8_t flags, uint32_t gsi)
{
	put8(t, 0x89);
	put_le(t, 6, 2);
	put8(t, flags);
	put8(t, 1);
	put_le(t, gsi, 4);
}

static inline void end_tag(struct aml *t)
{
	put8(t, 0x79);
	put8(t, 0);
}

/* A virtio-mmio device's resource template, as QEMU writes it. */
static inline struct aml virtio_crs(uint32_t base, uint32_t size, uint8_t flags, uint32_t gsi)
{
	struct aml t = { .n = 0 };
	mem32_fixed(&t, base, size);
	ext_irq(&t, flags, gsi);
	end_tag(&t);
	return t;
}

/* Device(VRnn) as QEMU's microvm writes it. */
static inline void virtio_device(struct aml *a, const char *name, unsigned uid, uint32_t base, uint32_t gsi)
{
	struct aml body = { .n = 0 };
	struct aml crs = virtio_crs(base, 512, IRQ_CONSUMER, gsi);
	name_string(&body, "_HID", "LNRO0005");
	name_int(&body, "_UID", uid);
	name_int(&body, "_CCA", 1);
	name_buffer(&body, "_CRS", &crs);
	device(a, name, &body);
}

/* A DSDT around the term list `body`: header, length, checksum. */
static inline struct aml *table(const struct aml *body)
{
	static struct aml t;
	t.n = 0;
	put(&t, "DSDT", 4);
	put_le(&t, ACPI_HEADER_LEN + body->n, 4);
	put8(&t, 2);
	put8(&t, 0);
	put(&t, "UKTESTUKDSDT  ", 14); /* OEM ID, OEM table ID */
	put(&t, "\1\0\0\0UKTS\1\0\0\0", 12);
	put(&t, body->b, body->n);
	uint8_t sum = 0;
	for (size_t i = 0; i < t.n; i++)
		sum = (uint8_t)(sum + t.b[i]);
	t.b[9] = (uint8_t)-sum;
	return &t;
}

#endif
