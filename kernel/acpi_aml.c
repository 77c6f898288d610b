/*
 * acpi_aml.c: AML's encodings read with bounds (see acpi_aml.h), from the
 * ACPI specification's grammar (section 20). A position is an offset into
 * the table; every read is checked against the end of the package it lies
 * in, itself checked against its enclosing package up to the table's
 * length, so no read leaves the table whatever its bytes say.
 */
#include <string.h>
#include "acpi_aml.h"

uint64_t aml_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

enum aml_step aml_pkg_length(const uint8_t *aml, size_t *p, size_t end, size_t *pkg_end,
			      const char **why)
{
	size_t start = *p;
	if (start >= end) {
		*why = "a package length runs past its enclosing package";
		return AML_BAD;
	}
	uint8_t lead = aml[start];
	size_t follow = lead >> 6;
	if (follow > end - start - 1) {
		*why = "a package length runs past its enclosing package";
		return AML_BAD;
	}
	size_t len = lead & 0x3f;
	if (follow) {
		if (lead & 0x30) {
			*why = "a package length with its reserved bits set";
			return AML_BAD;
		}
		len = lead & 0x0f;
		for (size_t i = 0; i < follow; i++)
			len |= (size_t)aml[start + 1 + i] << (4 + 8 * i);
	}
	if (len < follow + 1) {
		*why = "a package length shorter than its own bytes";
		return AML_BAD;
	}
	if (len > end - start) {
		*why = "a package runs past its enclosing package";
		return AML_BAD;
	}
	*p = start + 1 + follow;
	*pkg_end = start + len;
	return AML_OK;
}

static bool name_char(uint8_t c, bool lead)
{
	return (c >= 'A' && c <= 'Z') || c == '_' || (!lead && c >= '0' && c <= '9');
}

enum aml_step aml_name_string(const uint8_t *aml, size_t *p, size_t end, struct aml_name *n,
			       const char **why)
{
	size_t q = *p;
	bool prefixed = false;
	if (q < end && aml[q] == AML_ROOT_CHAR) {
		q++;
		prefixed = true;
	} else {
		while (q < end && aml[q] == AML_PARENT_PREFIX) {
			q++;
			prefixed = true;
		}
	}
	*why = "a name runs past its package";
	if (q >= end)
		return AML_BAD;
	size_t segs = 1;
	if (aml[q] == AML_ZERO_OP) {
		q++;
		segs = 0;
	} else if (aml[q] == AML_DUAL_NAME) {
		q++;
		segs = 2;
	} else if (aml[q] == AML_MULTI_NAME) {
		q++;
		if (q >= end)
			return AML_BAD;
		segs = aml[q++];
	}
	if (segs > (end - q) / 4)
		return AML_BAD;
	for (size_t i = 0; i < 4 * segs; i++) {
		if (!name_char(aml[q + i], i % 4 == 0)) {
			*why = "a name with a character outside A-Z, 0-9 and _";
			return AML_BAD;
		}
	}
	n->last[0] = 0;
	if (segs) {
		memcpy(n->last, aml + q + 4 * (segs - 1), 4);
		n->last[4] = 0;
	}
	n->plain = !prefixed && segs == 1;
	*p = q + 4 * segs;
	return AML_OK;
}

enum aml_step aml_integer(const uint8_t *aml, size_t *p, size_t end, uint64_t *v, const char **why)
{
	size_t q = *p;
	if (q >= end) {
		*why = "an integer runs past its package";
		return AML_BAD;
	}
	size_t bytes;
	switch (aml[q]) {
	case AML_ZERO_OP: *v = 0; *p = q + 1; return AML_OK;
	case AML_ONE_OP: *v = 1; *p = q + 1; return AML_OK;
	case AML_ONES_OP: *v = UINT64_MAX; *p = q + 1; return AML_OK;
	case AML_BYTE_PREFIX: bytes = 1; break;
	case AML_WORD_PREFIX: bytes = 2; break;
	case AML_DWORD_PREFIX: bytes = 4; break;
	case AML_QWORD_PREFIX: bytes = 8; break;
	case AML_EXT_PREFIX:
		if (end - q >= 2 && aml[q + 1] == AML_REVISION_OP) {
			*v = 0;
			*p = q + 2;
			return AML_OK;
		}
		return AML_UNKNOWN;
	default: return AML_UNKNOWN;
	}
	if (bytes > end - q - 1) {
		*why = "an integer runs past its package";
		return AML_BAD;
	}
	*v = aml_le(aml + q + 1, bytes);
	*p = q + 1 + bytes;
	return AML_OK;
}

/* A Buffer at *p (past its opcode): PkgLength, a constant size, the bytes.
 * A size that is not a constant, or larger than the bytes in the package,
 * leaves the value AML_VALUE_OTHER with the reason; either way *p moves past the
 * package. */
static enum aml_step buffer(const uint8_t *aml, size_t *p, size_t end, struct aml_value *v,
			    const char **why)
{
	size_t q = *p, pkg_end;
	if (aml_pkg_length(aml, &q, end, &pkg_end, why) != AML_OK)
		return AML_BAD;
	uint64_t size;
	enum aml_step s = aml_integer(aml, &q, pkg_end, &size, why);
	*p = pkg_end;
	v->kind = AML_VALUE_OTHER;
	if (s == AML_BAD)
		return AML_BAD;
	if (s == AML_UNKNOWN)
		v->why = "a buffer whose size is not a constant";
	else if (size > pkg_end - q)
		v->why = "a buffer whose size is larger than its package";
	else {
		v->kind = AML_VALUE_BUFFER;
		v->at = q;
		v->len = (size_t)size;
	}
	return AML_OK;
}

enum aml_step aml_data_object(const uint8_t *aml, size_t *p, size_t end, struct aml_value *v,
			       const char **why)
{
	*v = (struct aml_value){ .kind = AML_VALUE_OTHER };
	size_t q = *p, pkg_end;
	if (q >= end) {
		*why = "a name's value runs past its package";
		return AML_BAD;
	}
	switch (aml[q]) {
	case AML_STRING_PREFIX: {
		const uint8_t *nul = memchr(aml + q + 1, 0, end - q - 1);
		if (!nul) {
			*why = "a string runs past its package";
			return AML_BAD;
		}
		v->kind = AML_VALUE_STRING;
		v->at = q + 1;
		v->len = (size_t)(nul - (aml + q + 1));
		*p = v->at + v->len + 1;
		return AML_OK;
	}
	case AML_BUFFER_OP:
		*p = q + 1;
		return buffer(aml, p, end, v, why);
	case AML_PACKAGE_OP:
	case AML_VAR_PACKAGE_OP:
		q++;
		if (aml_pkg_length(aml, &q, end, &pkg_end, why) != AML_OK)
			return AML_BAD;
		*p = pkg_end;
		return AML_OK;
	default: {
		enum aml_step s = aml_integer(aml, p, end, &v->integer, why);
		if (s == AML_OK)
			v->kind = AML_VALUE_INTEGER;
		return s;
	}
	}
}
