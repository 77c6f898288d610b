/*
 * json.c: the JSON reader and writer of json.h.
 *
 * The reader is a recursive skipper: skip_value() returns the end of the
 * value that starts at p, or NULL when the text there is not JSON. json_parse()
 * runs it over the whole document once; the lookups then walk spans already
 * known to be well formed, skipping what they do not want with the same
 * function (so a lookup on a span json_parse accepted cannot fail halfway).
 */
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	return p;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A literal word (true, false, null). */
static const char *skip_word(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(end - p) < n || memcmp(p, word, n) != 0)
		return NULL;
	return p + n;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static const char *skip_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p >= end || !is_digit(*p))
		return NULL;
	if (*p == '0')
		p++;
	else
		while (p < end && is_digit(*p))
			p++;
	if (p < end && *p == '.') {
		p++;
		if (p >= end || !is_digit(*p))
			return NULL;
		while (p < end && is_digit(*p))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !is_digit(*p))
			return NULL;
		while (p < end && is_digit(*p))
			p++;
	}
	return p;
}

/* A string, p at its opening quote. Control characters must be escaped;
 * bytes from 0x80 up pass as they are (cJSON does not check UTF-8 either). */
static const char *skip_string(const char *p, const char *end)
{
	p++;
	while (p < end) {
		unsigned char c = (unsigned char)*p++;

		if (c == '"')
			return p;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		if (p >= end)
			return NULL;
		c = (unsigned char)*p++;
		if (c == 'u') {
			if (end - p < 4 || !is_hex(p[0]) || !is_hex(p[1]) || !is_hex(p[2]) || !is_hex(p[3]))
				return NULL;
			p += 4;
		} else if (!strchr("\"\\/bfnrt", c) || c == '\0') {
			return NULL;
		}
	}
	return NULL;
}

static const char *skip_value(const char *p, const char *end, int depth, enum json_type *type);

/* An array or object, p at its opening bracket. */
static const char *skip_container(const char *p, const char *end, int depth, bool object)
{
	char close = object ? '}' : ']';
	enum json_type t;

	if (depth >= JSON_DEPTH_MAX)
		return NULL;
	p = skip_ws(p + 1, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (object) {
			if (p >= end || *p != '"' || !(p = skip_string(p, end)))
				return NULL;
			p = skip_ws(p, end);
			if (p >= end || *p != ':')
				return NULL;
			p = skip_ws(p + 1, end);
		}
		if (!(p = skip_value(p, end, depth + 1, &t)))
			return NULL;
		p = skip_ws(p, end);
		if (p >= end)
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1, end);
	}
}

/* The value at p (no leading whitespace); its end, or NULL. */
static const char *skip_value(const char *p, const char *end, int depth, enum json_type *type)
{
	if (p >= end)
		return NULL;
	switch (*p) {
	case '{': *type = JSON_OBJECT; return skip_container(p, end, depth, true);
	case '[': *type = JSON_ARRAY; return skip_container(p, end, depth, false);
	case '"': *type = JSON_STRING; return skip_string(p, end);
	case 't': *type = JSON_TRUE; return skip_word(p, end, "true");
	case 'f': *type = JSON_FALSE; return skip_word(p, end, "false");
	case 'n': *type = JSON_NULL; return skip_word(p, end, "null");
	default: *type = JSON_NUMBER; return skip_number(p, end);
	}
}

bool json_parse(const char *text, size_t len, struct json_value *root)
{
	const char *end = text + len, *p = skip_ws(text, end), *q;

	if (!(q = skip_value(p, end, 0, &root->type)))
		return false;
	root->start = p;
	root->len = (size_t)(q - p);
	return skip_ws(q, end) == end;
}

bool json_next(const struct json_value *c, size_t *pos, struct json_value *key, struct json_value *out)
{
	const char *end = c->start + c->len, *p;
	bool object = c->type == JSON_OBJECT;

	if (!object && c->type != JSON_ARRAY)
		return false;
	/* *pos is 0 before the first, else the offset just past the last value. */
	p = c->start + (*pos ? *pos : 1);
	p = skip_ws(p, end);
	if (*pos && *p == ',')
		p = skip_ws(p + 1, end);
	if (*p == (object ? '}' : ']'))
		return false;
	if (object) {
		const char *k = p;

		p = skip_string(p, end);
		if (key) {
			key->type = JSON_STRING;
			key->start = k;
			key->len = (size_t)(p - k);
		}
		p = skip_ws(p, end);
		p = skip_ws(p + 1, end); /* the ':' */
	}
	out->start = p;
	/* Depth 0 suffices: the whole document was checked to its real depth. */
	p = skip_value(p, end, 0, &out->type);
	out->len = (size_t)(p - out->start);
	*pos = (size_t)(p - c->start);
	return true;
}

bool json_string_is(const struct json_value *v, const char *s)
{
	size_t n = strlen(s);

	return v->type == JSON_STRING && v->len == n + 2 && memcmp(v->start + 1, s, n) == 0;
}

bool json_member(const struct json_value *obj, const char *key, struct json_value *out)
{
	struct json_value k;
	size_t pos = 0;

	if (obj->type != JSON_OBJECT)
		return false;
	while (json_next(obj, &pos, &k, out))
		if (json_string_is(&k, key))
			return true;
	return false;
}

bool json_int64(const struct json_value *v, int64_t *out)
{
	const char *p = v->start, *end = v->start + v->len;
	bool neg = false;
	uint64_t mag = 0, limit;

	if (v->type != JSON_NUMBER)
		return false;
	if (*p == '-') {
		neg = true;
		p++;
	}
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; p < end; p++) {
		if (!is_digit(*p))
			return false; /* a fraction or an exponent */
		if (mag > (limit - (uint64_t)(*p - '0')) / 10)
			return false;
		mag = mag * 10 + (uint64_t)(*p - '0');
	}
	*out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return true;
}

/* ---- the writer ---------------------------------------------------------- */

void jw_init(struct json_writer *w, char *buf, size_t cap)
{
	w->buf = buf;
	w->cap = cap;
	w->len = 0;
	w->overflow = cap == 0;
	w->need_comma = false;
	if (cap)
		buf[0] = '\0';
}

static void jw_printf(struct json_writer *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(w->buf + w->len, w->cap - w->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= w->cap - w->len) {
		w->overflow = true;
		w->buf[w->len] = '\0';
		return;
	}
	w->len += (size_t)n;
}

/* The separator before a value that is not the first in its container. */
static void jw_separate(struct json_writer *w)
{
	if (w->need_comma)
		jw_printf(w, ",");
	w->need_comma = false;
}

void jw_begin(struct json_writer *w, char open)
{
	jw_separate(w);
	jw_printf(w, "%c", open);
}

void jw_end(struct json_writer *w, char close)
{
	jw_printf(w, "%c", close);
	w->need_comma = true;
}

void jw_key(struct json_writer *w, const char *key)
{
	jw_separate(w);
	jw_printf(w, "\"%s\":", key);
}

void jw_int(struct json_writer *w, int64_t v)
{
	jw_separate(w);
	jw_printf(w, "%lld", (long long)v);
	w->need_comma = true;
}

void jw_fixed6(struct json_writer *w, int64_t whole, int64_t frac)
{
	jw_separate(w);
	if (frac < 0 || frac > 999999) {
		w->overflow = true; /* a caller's bug: refuse to write a wrong number */
		return;
	}
	jw_printf(w, "%lld.%06lld", (long long)whole, (long long)frac);
	w->need_comma = true;
}

bool jw_ok(const struct json_writer *w)
{
	return !w->overflow;
}
