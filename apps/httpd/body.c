/*
 * body.c: follow a request body's framing, Content-Length or chunked
 * (RFC 9112 sections 6.2 and 7.1), over bytes as they arrive.
 *
 * Offers http_body_start() and http_body_feed() (see http.h). httpd discards
 * bodies, so nothing here keeps data: the decoder only says how many bytes
 * belong to the body and where it ends, in whatever pieces the bytes come
 * (one at a time included), with constant state. Chunk sizes, extensions
 * and trailers are bounded, so a peer cannot make it loop or overflow; chunk
 * extensions and trailer fields are skipped unread. A bare LF ends a line,
 * as it does in heads.
 */
#include "http.h"

/* Where the chunked decoder is. */
enum chunk_state {
	CH_SIZE,        /* hex digits of a chunk size */
	CH_EXT,         /* after the size: extension or spaces, up to the line end */
	CH_SIZE_LF,     /* a CR ended the size line; its LF must follow */
	CH_DATA,        /* `left` bytes of chunk data */
	CH_DATA_CR,     /* the CRLF after the data */
	CH_DATA_LF,     /* its LF */
	CH_TRAILER,     /* at the start of a trailer line, or of the final CRLF */
	CH_TRAILER_LINE,/* inside a trailer field line */
	CH_END_LF,      /* a CR began the final line; its LF ends the body */
};

/* Hex digits a chunk size may have (leading zeros included). */
#define SIZE_DIGITS_MAX 32
/* Bytes a chunk extension may take, and all trailer fields together. */
#define EXT_MAX 4096
#define TRAILER_MAX 8192

void http_body_start(struct http_body *b, const struct http_request *req)
{
	b->framing = req->framing;
	b->state = CH_SIZE;
	b->left = req->framing == HTTP_BODY_LENGTH ? req->content_length : 0;
	b->digits = 0;
	b->line_len = 0;
	b->trailer_len = 0;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The end of a chunk-size line: data follows, or the trailers after the
 * last chunk (size 0). */
static void size_line_done(struct http_body *b)
{
	b->state = b->left ? CH_DATA : CH_TRAILER;
	b->digits = 0;
	b->line_len = 0;
}

/* One byte of chunked framing outside chunk data. 0, or the error status. */
static int chunk_framing_byte(struct http_body *b, char c, bool *done)
{
	int v;

	switch (b->state) {
	case CH_SIZE:
		v = hex_value(c);
		if (v >= 0) {
			if (++b->digits > SIZE_DIGITS_MAX)
				return 400;
			/* Refused before the arithmetic: a size that wrapped past
			 * 2^64 would end the chunk, or the body, early. */
			if (b->left > (HTTP_LENGTH_MAX - (uint64_t)v) / 16)
				return 413;
			b->left = b->left * 16 + (uint64_t)v;
			return 0;
		}
		if (b->digits == 0)
			return 400; /* a size line must start with a digit */
		if (c == '\r')
			b->state = CH_SIZE_LF;
		else if (c == '\n')
			size_line_done(b);
		else if (c == ';' || c == ' ' || c == '\t')
			b->state = CH_EXT;
		else
			return 400;
		return 0;
	case CH_EXT:
		if (c == '\r')
			b->state = CH_SIZE_LF;
		else if (c == '\n')
			size_line_done(b);
		else if (++b->line_len > EXT_MAX)
			return 400;
		return 0;
	case CH_SIZE_LF:
		if (c != '\n')
			return 400;
		size_line_done(b);
		return 0;
	case CH_DATA_CR:
		if (c == '\r')
			b->state = CH_DATA_LF;
		else if (c == '\n')
			b->state = CH_SIZE;
		else
			return 400;
		return 0;
	case CH_DATA_LF:
		if (c != '\n')
			return 400;
		b->state = CH_SIZE;
		return 0;
	case CH_TRAILER:
		if (c == '\r') {
			b->state = CH_END_LF;
		} else if (c == '\n') {
			*done = true;
		} else {
			b->state = CH_TRAILER_LINE;
			if (++b->trailer_len > TRAILER_MAX)
				return 431;
		}
		return 0;
	case CH_TRAILER_LINE:
		if (c == '\n')
			b->state = CH_TRAILER;
		else if (++b->trailer_len > TRAILER_MAX)
			return 431;
		return 0;
	case CH_END_LF:
		if (c != '\n')
			return 400;
		*done = true;
		return 0;
	default:
		return 400;
	}
}

static enum http_body_result feed_chunked(struct http_body *b, const char *buf, size_t len,
					  size_t *used, int *status)
{
	size_t i = 0;

	while (i < len) {
		bool done = false;
		int err;

		if (b->state == CH_DATA) {
			uint64_t n = len - i < b->left ? len - i : b->left;

			i += (size_t)n;
			b->left -= n;
			if (b->left == 0)
				b->state = CH_DATA_CR;
			continue;
		}
		err = chunk_framing_byte(b, buf[i++], &done);
		if (err) {
			*used = i;
			*status = err;
			return HTTP_BODY_BAD;
		}
		if (done) {
			*used = i;
			return HTTP_BODY_DONE;
		}
	}
	*used = i;
	return HTTP_BODY_MORE;
}

enum http_body_result http_body_feed(struct http_body *b, const char *buf, size_t len,
				     size_t *used, int *status)
{
	*status = 0;
	if (b->framing == HTTP_BODY_CHUNKED)
		return feed_chunked(b, buf, len, used, status);
	if (b->framing != HTTP_BODY_LENGTH) {
		*used = 0;
		return HTTP_BODY_DONE;
	}
	if (len < b->left) {
		b->left -= len;
		*used = len;
		return HTTP_BODY_MORE;
	}
	*used = (size_t)b->left;
	b->left = 0;
	return HTTP_BODY_DONE;
}
