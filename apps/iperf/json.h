/*
 * json.h: the small JSON reader and writer iperf's control messages need.
 *
 * The reader checks a whole document against RFC 8259's grammar (nesting
 * bounded by JSON_DEPTH_MAX) and then looks values up in place: no tree, no
 * allocation, nothing copied. A value is a span of the caller's text, so it
 * lives as long as that text does.
 *
 *   json_parse()    the whole text is one value (whitespace around it)
 *   json_member()   the first member of an object with a given key
 *   json_next()     the elements of an array (or members of an object), in order
 *   json_int64()    an integer number as int64_t; false for anything else
 *
 * The writer appends to a fixed buffer and remembers when it ran out of
 * room, so a caller checks once at the end (jw_ok()).
 *
 * Why not a library: the unikernel links only newlib and what apps.mk gives
 * it, and iperf needs a handful of flat fields; this is smaller than any
 * general parser and fuzzed with the rest (tests/fuzz/fuzz_iperf.c).
 */
#ifndef IPERF_JSON_H
#define IPERF_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest nesting of arrays and objects the reader accepts. */
#define JSON_DEPTH_MAX 16

enum json_type {
	JSON_NULL,   /* null */
	JSON_FALSE,  /* false */
	JSON_TRUE,   /* true */
	JSON_NUMBER, /* a number, any syntax the grammar allows */
	JSON_STRING, /* a string; start points at its opening quote */
	JSON_ARRAY,  /* [ ... ] */
	JSON_OBJECT, /* { ... } */
};

/* A value: a span of well-formed text. */
struct json_value {
	enum json_type type; /* what the span holds */
	const char *start;   /* its first byte (a quote, bracket, digit...) */
	size_t len;          /* its length in bytes */
};

/* Whether text[0..len) is exactly one JSON value, with optional whitespace
 * around it; *root is that value. */
bool json_parse(const char *text, size_t len, struct json_value *root);

/* The first member of object `obj` whose key is `key` (compared as raw
 * bytes: a key spelled with escapes does not match). False when obj is no
 * object or has no such member. */
bool json_member(const struct json_value *obj, const char *key, struct json_value *out);

/*
 * Iterates over an array's elements or an object's values. *pos starts at 0
 * and is advanced; returns false after the last one. For an object, *key
 * (when not NULL) receives each member's key, a JSON_STRING.
 */
bool json_next(const struct json_value *container, size_t *pos, struct json_value *key,
	       struct json_value *out);

/* An integer (no fraction, no exponent) that fits int64_t. */
bool json_int64(const struct json_value *v, int64_t *out);

/* Whether string value v's contents are exactly s (raw bytes, no escapes). */
bool json_string_is(const struct json_value *v, const char *s);

/* ---- the writer ------------------------------------------------------------ */

struct json_writer {
	char *buf;     /* where the text goes */
	size_t cap;    /* its size */
	size_t len;    /* bytes written so far (never more than cap - 1) */
	bool overflow; /* something did not fit: the text is incomplete */
	bool need_comma; /* the next member or element follows another */
};

void jw_init(struct json_writer *w, char *buf, size_t cap);
void jw_begin(struct json_writer *w, char open);  /* '{' or '[' */
void jw_end(struct json_writer *w, char close);   /* '}' or ']' */
void jw_key(struct json_writer *w, const char *key); /* a member's key (plain ASCII) */
void jw_int(struct json_writer *w, int64_t v);
/* A fixed-point number: whole + frac / 10^6 (frac 0..999999), e.g. 12.000500. */
void jw_fixed6(struct json_writer *w, int64_t whole, int64_t frac);
bool jw_ok(const struct json_writer *w);

#endif
