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

/* Passes the body of `req`, starting at buf[off], through the decoder in
 * pieces of 1 to 64 bytes (sizes from the input itself). Returns where the
 * body ended, or SIZE_MAX when it did not end (or was malformed). */
static size_t feed_body(const char *buf, size_t size, size_t off, const struct http_request *req)
{
	struct http_body b;
	size_t step = 0;

	http_body_start(&b, req);
	while (off < size) {
		size_t piece = (size_t)(unsigned char)buf[(off + step++) % size] % 64 + 1, used;
		int status;
		enum http_body_result r;

		if (piece > size - off)
			piece = size - off;
		r = http_body_feed(&b, buf + off, piece, &used, &status);
		if (used > piece)
			abort();
		off += used;
		if (r == HTTP_BODY_DONE)
			return off;
		if (r == HTTP_BODY_BAD) {
			if (status != 400 && status != 413 && status != 431)
				abort();
			return SIZE_MAX;
		}
		if (used != piece)
			abort(); /* MORE takes everything it is given */
	}
	return SIZE_MAX;
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
		http_route(&req, 0, true, &resp);
		if (http_head(&resp, req.minor, head) > HTTP_HEAD_MAX)
			abort();
		off += req.length;
		if (req.framing != HTTP_BODY_NONE) {
			off = feed_body(buf, size, off, &req);
			if (off == SIZE_MAX)
				break;
		}
	}
	free(buf);
	return 0;
}
