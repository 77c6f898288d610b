/*
 * acpi_aml.h: AML's encodings read with bounds (acpi_aml.c), for the DSDT's
 * walk (acpi_dsdt.c): a package length, a name, an integer constant, the
 * constant a Name object holds. Each reader takes the table's bytes, a
 * position *p and the end of the package that position lies in; it reads
 * nothing at or past `end`, checks each length against what remains before
 * using it, and moves *p past what it read only when it parsed. Pure.
 */
#ifndef ACPI_AML_H
#define ACPI_AML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Opcodes (ACPI 6, section 20: AML encoding). */
#define AML_ZERO_OP          0x00
#define AML_ONE_OP           0x01
#define AML_ALIAS_OP         0x06
#define AML_NAME_OP          0x08
#define AML_BYTE_PREFIX      0x0a
#define AML_WORD_PREFIX      0x0b
#define AML_DWORD_PREFIX     0x0c
#define AML_STRING_PREFIX    0x0d
#define AML_QWORD_PREFIX     0x0e
#define AML_SCOPE_OP         0x10
#define AML_BUFFER_OP        0x11
#define AML_PACKAGE_OP       0x12
#define AML_VAR_PACKAGE_OP   0x13
#define AML_METHOD_OP        0x14
#define AML_EXTERNAL_OP      0x15
#define AML_DUAL_NAME        0x2e
#define AML_MULTI_NAME       0x2f
#define AML_EXT_PREFIX       0x5b
#define AML_ROOT_CHAR        0x5c /* '\' */
#define AML_PARENT_PREFIX    0x5e /* '^' */
#define AML_IF_OP            0xa0
#define AML_ELSE_OP          0xa1
#define AML_WHILE_OP         0xa2
#define AML_ONES_OP          0xff
/* After AML_EXT_PREFIX. */
#define AML_MUTEX_OP         0x01
#define AML_EVENT_OP         0x02
#define AML_REVISION_OP      0x30
#define AML_REGION_OP        0x80
#define AML_FIELD_OP         0x81
#define AML_DEVICE_OP        0x82
#define AML_PROCESSOR_OP     0x83
#define AML_POWER_RES_OP     0x84
#define AML_THERMAL_ZONE_OP  0x85
#define AML_INDEX_FIELD_OP   0x86
#define AML_BANK_FIELD_OP    0x87

/* What reading one encoding found. */
enum aml_step {
	AML_OK,      /* parsed; the position moved past it */
	AML_UNKNOWN, /* an opcode this reader does not follow; nothing moved */
	AML_BAD,     /* malformed (the reason is set); nothing after it is read */
};

/* A name as a term names it. */
struct aml_name {
	char last[5]; /* its last NameSeg, NUL-terminated ("" for the null name) */
	bool plain;   /* one segment, no root or parent prefix: a name in the current scope */
};

/* A constant a Name object holds. */
struct aml_value {
	enum { AML_VALUE_INTEGER, AML_VALUE_STRING, AML_VALUE_BUFFER, AML_VALUE_OTHER } kind;
	uint64_t integer;  /* AML_VALUE_INTEGER */
	size_t at, len;    /* AML_VALUE_STRING: its characters; AML_VALUE_BUFFER: its bytes */
	const char *why;   /* AML_VALUE_OTHER: why a buffer could not be read, or NULL */
};

/* n little-endian bytes at p (n <= 8). */
uint64_t aml_le(const uint8_t *p, size_t n);

/* A PkgLength at *p: 1 to 4 bytes, the lead byte's top two bits counting
 * the bytes that follow; its value counts its own bytes. *pkg_end is where
 * the package ends, within `end`. */
enum aml_step aml_pkg_length(const uint8_t *aml, size_t *p, size_t end, size_t *pkg_end,
			      const char **why);
/* A NameString: a root or parent prefix, then a null name, one NameSeg, two
 * (DualNamePrefix) or a counted number (MultiNamePrefix). */
enum aml_step aml_name_string(const uint8_t *aml, size_t *p, size_t end, struct aml_name *n,
			       const char **why);
/* An integer constant: Zero, One, Ones, Revision, or a byte, word, dword or
 * qword prefix and its bytes (AML_UNKNOWN: another opcode). */
enum aml_step aml_integer(const uint8_t *aml, size_t *p, size_t end, uint64_t *v, const char **why);
/* What a Name object holds: an integer, a string, a buffer (its bytes
 * located, or why not), a package (stepped over). */
enum aml_step aml_data_object(const uint8_t *aml, size_t *p, size_t end, struct aml_value *v,
			       const char **why);

#endif
