/*
 * fuzz_http: httpd's request parser, body framing and response builder on
 * arbitrary bytes, the way httpd uses them: heads parsed one after another,
 * each one's body (Content-Length or chunked) fed through http_body_feed()
 * in pieces whose sizes the input picks, then the next head. Checks what
 * must hold whatever the input: a complete head consumes something and no
 * more than it was given, its path lies inside the buffer, the body decoder
 * never claims bytes it was not given and takes all it was given until it
 * ends, and the head built for any route fits HTTP_HEAD_MAX. It also checks
 * http_pattern() at an offset and length the input picks against the
 * pattern's definition, byte by byte.
 *
 * And that every request is framed exactly, against a reference framer
 * written here independently of the parser: a Content-Length that is taken
 * is the header's decimal value, and one past HTTP_LENGTH_MAX is refused;
 * a chunked body ends exactly where the reference's walk of its chunks ends,
 * and a chunk size past HTTP_LENGTH_MAX is refused by the time its digits
 * end. So no byte of a body is ever parsed as a request. The reference
 * counts significant digits before it computes, in 128 bits, so its own
 * arithmetic cannot wrap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "apps/httpd/http.h"

/* Byte p of the /bytes pattern, from its definition in http.h. */
static char pattern_byte(uint64_t p)
{
	static const char hex[] = "0123456789abcdef";
	uint64_t offset = p / 16 * 16;
	unsigned col = (unsigned)(p % 16);

	if (col == 15)
		return '\n';
	return hex[(offset >> (4 * (14 - col))) & 15];
}

static void check_pattern(const uint8_t *data, size_t size)
{
	static char out[4096];
	uint64_t offset = 0;
	size_t len, i;

	if (size < 10)
		return;
	for (i = 0; i < 8; i++)
		offset = offset << 8 | data[i];
	offset %= HTTP_BYTES_MAX;
	len = ((size_t)data[8] << 8 | data[9]) % sizeof(out);
	http_pattern(offset, out, len);
	for (i = 0; i < len; i++)
		if (out[i] != pattern_byte(offset + i))
			abort();
}

/* ---- the reference framer ---------------------------------------------------- */

/* What ref_number() answers for a value past HTTP_LENGTH_MAX. */
#define REF_TOO_LARGE UINT64_MAX

/* The value of the digit c in base 10 or 16, or -1. */
static int ref_digit(char c, unsigned base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The value of the digits s[0..n) in `base`, or REF_TOO_LARGE past
 * HTTP_LENGTH_MAX. Leading zeros are skipped and the rest counted first:
 * 20 decimal or 17 hex digits fit in 128 bits with room to spare, and more
 * are past HTTP_LENGTH_MAX (2^62) anyway. */
static uint64_t ref_number(const char *s, size_t n, unsigned base)
{
	unsigned __int128 value = 0;
	size_t i = 0;

	while (i < n && s[i] == '0')
		i++;
	if (n - i > (base == 10 ? 20u : 17u))
		return REF_TOO_LARGE;
	for (; i < n; i++)
		value = value * base + (unsigned)ref_digit(s[i], base);
	return value > HTTP_LENGTH_MAX ? REF_TOO_LARGE : (uint64_t)value;
}

static char ref_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/*
 * The Content-Length of the head buf[0..len) that http_parse() took
 * (leading blank lines and request line included): false when it has none.
 * Every Content-Length line must hold digits only, all of the same value:
 * the parser took the head, so anything else is a leak.
 */
static bool ref_content_length(const char *buf, size_t len, uint64_t *length)
{
	static const char name[] = "content-length";
	const size_t name_len = sizeof(name) - 1;
	bool found = false, request_line = true;
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len, next = end + 1, i;

		if (end > pos && buf[end - 1] == '\r')
			end--;
		if (end == pos) { /* a blank line: before the request, or the last */
			pos = next;
			continue;
		}
		if (request_line) {
			request_line = false;
			pos = next;
			continue;
		}
		if (end - pos > name_len && buf[pos + name_len] == ':') {
			for (i = 0; i < name_len && ref_lower(buf[pos + i]) == name[i]; i++)
				;
			if (i == name_len) {
				size_t vs = pos + name_len + 1, ve = end;
				uint64_t value;

				while (vs < ve && (buf[vs] == ' ' || buf[vs] == '\t'))
					vs++;
				while (ve > vs && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
					ve--;
				if (ve == vs)
					abort(); /* an empty Content-Length was taken */
				for (i = vs; i < ve; i++)
					if (ref_digit(buf[i], 10) < 0)
						abort(); /* a length that is not a number */
				value = ref_number(buf + vs, ve - vs, 10);
				if (found && value != *length)
					abort(); /* two different lengths taken */
				*length = value;
				found = true;
			}
		}
		pos = next;
	}
	return found;
}

/* Where the reference's walk of a chunked body stops. */
enum ref_chunked_end {
	REF_ENDED,     /* the body ended at *at */
	REF_TOO_BIG,   /* a chunk size past HTTP_LENGTH_MAX; its digits end at *at */
	REF_MALFORMED, /* not chunked framing */
	REF_SHORT,     /* the input ended first */
};

/* The end of the line from buf[pos], after its '\n'; 0 when the input ends
 * first (a line never ends at 0). */
static size_t ref_line_end(const char *buf, size_t size, size_t pos)
{
	const char *nl = memchr(buf + pos, '\n', size - pos);

	return nl ? (size_t)(nl - buf) + 1 : 0;
}

/*
 * Walks the chunked body at buf[pos..size) (RFC 9112 7.1): size lines
 * (digits, then an extension or a line end), data and its line end, the
 * last chunk, trailer lines and the blank line that ends it all. Lenient
 * where the decoder may refuse (lengths of extensions and trailers, digits
 * of leading zeros, bytes inside an extension): refusing is always allowed;
 * what must agree is where a body ends that both accept.
 */
static enum ref_chunked_end ref_chunked(const char *buf, size_t size, size_t pos, size_t *at)
{
	for (;;) {
		size_t digits = pos, line_end;
		uint64_t chunk;

		while (pos < size && ref_digit(buf[pos], 16) >= 0)
			pos++;
		chunk = ref_number(buf + digits, pos - digits, 16);
		if (chunk == REF_TOO_LARGE) {
			*at = pos;
			return REF_TOO_BIG;
		}
		if (pos == size)
			return REF_SHORT;
		if (pos == digits || memchr(";\t \r\n", buf[pos], 5) == NULL)
			return REF_MALFORMED;
		line_end = ref_line_end(buf, size, pos);
		if (line_end == 0)
			return REF_SHORT;
		pos = line_end;
		if (chunk == 0)
			break;
		if (chunk > size - pos)
			return REF_SHORT;
		pos += (size_t)chunk;
		if (pos < size && buf[pos] == '\r')
			pos++;
		if (pos == size)
			return REF_SHORT;
		if (buf[pos] != '\n')
			return REF_MALFORMED;
		pos++;
	}
	for (;;) {
		size_t line_end;

		if (pos == size)
			return REF_SHORT;
		if (buf[pos] == '\n') {
			*at = pos + 1;
			return REF_ENDED;
		}
		if (buf[pos] == '\r') {
			if (pos + 1 == size)
				return REF_SHORT;
			if (buf[pos + 1] != '\n')
				return REF_MALFORMED;
			*at = pos + 2;
			return REF_ENDED;
		}
		line_end = ref_line_end(buf, size, pos);
		if (line_end == 0)
			return REF_SHORT;
		pos = line_end;
	}
}

/* ---- the harness ---------------------------------------------------------------- */

/* Passes the body of `req`, starting at buf[off], through the decoder in
 * pieces of 1 to 64 bytes (sizes from the input itself). Returns the
 * decoder's last answer; *stop is where it stopped (the body's end on DONE,
 * the byte it refused on BAD, the input's end on MORE). */
static enum http_body_result feed_body(const char *buf, size_t size, size_t off,
				       const struct http_request *req, size_t *stop)
{
	struct http_body b;
	size_t step = 0;
	enum http_body_result r = HTTP_BODY_MORE;

	http_body_start(&b, req);
	while (off < size) {
		size_t piece = (size_t)(unsigned char)buf[(off + step++) % size] % 64 + 1, used;
		int status;

		if (piece > size - off)
			piece = size - off;
		r = http_body_feed(&b, buf + off, piece, &used, &status);
		if (used > piece)
			abort();
		off += used;
		if (r == HTTP_BODY_DONE)
			break;
		if (r == HTTP_BODY_BAD) {
			if (status != 400 && status != 413 && status != 431)
				abort();
			break;
		}
		if (used != piece)
			abort(); /* MORE takes everything it is given */
	}
	*stop = off;
	return r;
}

/* A Content-Length body from buf[off] ends exactly after its length. */
static void check_length_body(enum http_body_result r, size_t stop, size_t size, size_t off,
			      uint64_t length)
{
	if (r == HTTP_BODY_BAD)
		abort(); /* nothing in a counted body can be malformed */
	if (length <= size - off) {
		if (r != HTTP_BODY_DONE || stop != off + length)
			abort();
	} else if (r != HTTP_BODY_MORE || stop != size) {
		abort();
	}
}

/* A chunked body from buf[off] ends where the reference's walk ends, and a
 * chunk size past HTTP_LENGTH_MAX is refused by the end of its digits. */
static void check_chunked_body(enum http_body_result r, size_t stop, const char *buf, size_t size,
			       size_t off)
{
	size_t at = 0;
	enum ref_chunked_end ref = ref_chunked(buf, size, off, &at);

	if (r == HTTP_BODY_DONE && (ref != REF_ENDED || stop != at))
		abort(); /* the body ended where it does not */
	if (ref == REF_ENDED && r != HTTP_BODY_BAD && (r != HTTP_BODY_DONE || stop != at))
		abort(); /* it went on past its end */
	if (ref == REF_TOO_BIG && (r != HTTP_BODY_BAD || stop > at))
		abort(); /* a size past HTTP_LENGTH_MAX was taken */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly `size` bytes, so reading past it is caught. */
	char *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	size_t off = 0;

	check_pattern(data, size);
	for (int n = 0; n < 64 && off <= size; n++) {
		struct http_request req;
		enum http_parse_result r = http_parse(buf + off, size - off, 8192, &req);
		if (r == HTTP_INCOMPLETE)
			break;
		struct http_response resp;
		char head[HTTP_HEAD_MAX];
		if (r == HTTP_ERROR) {
			http_route(NULL, req.status, true, &resp);
			if (http_head(&resp, 1, head) > HTTP_HEAD_MAX)
				abort();
			break;
		}
		if (req.length == 0 || req.length > size - off)
			abort();
		if (req.path < buf + off || req.path + req.path_len > buf + off + req.length)
			abort();
		if (req.framing == HTTP_BODY_LENGTH && (req.content_length == 0 ||
							req.content_length > HTTP_LENGTH_MAX))
			abort();
		/* The length taken is the header's value, exactly. */
		uint64_t length = 0;
		if (ref_content_length(buf + off, req.length, &length)) {
			if (length == REF_TOO_LARGE)
				abort(); /* taken, though past HTTP_LENGTH_MAX */
			if (req.framing != (length ? HTTP_BODY_LENGTH : HTTP_BODY_NONE))
				abort();
			if (length && req.content_length != length)
				abort(); /* taken, but as another number */
		} else if (req.framing == HTTP_BODY_LENGTH) {
			abort(); /* a length from nowhere */
		}
		http_route(&req, 0, true, &resp);
		if (http_head(&resp, req.minor, head) > HTTP_HEAD_MAX)
			abort();
		off += req.length;
		if (req.framing != HTTP_BODY_NONE) {
			size_t stop;
			enum http_body_result body = feed_body(buf, size, off, &req, &stop);

			if (req.framing == HTTP_BODY_LENGTH)
				check_length_body(body, stop, size, off, req.content_length);
			else
				check_chunked_body(body, stop, buf, size, off);
			if (body != HTTP_BODY_DONE)
				break;
			off = stop;
		}
	}
	free(buf);
	return 0;
}
