/*
 * test_http.c: unit tests of httpd's request parser, body framing and
 * response builder (apps/httpd/http.c, body.c): whole, split, pipelined,
 * malformed and over-long requests, keep-alive rules, Content-Length and
 * chunked bodies fed in every piece size, lengths and chunk sizes at the
 * bounds of their arithmetic (2^62, 2^64), Expect, routing (/bytes/N
 * included), the exact bytes of response heads and the /bytes pattern.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apps/httpd/http.h"

#define MAX 8192

static enum http_parse_result parse(const char *s, struct http_request *req)
{
	return http_parse(s, strlen(s), MAX, req);
}

static void assert_error(const char *s, int status)
{
	struct http_request req;

	assert_int_equal(parse(s, &req), HTTP_ERROR);
	assert_int_equal(req.status, status);
}

static void test_body_is_41_bytes(void **state)
{
	(void)state;
	assert_int_equal(HTTP_HELLO_LEN, 41);
}

static void test_simple_get(void **state)
{
	const char *s = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct http_request req;
	(void)state;

	assert_int_equal(parse(s, &req), HTTP_COMPLETE);
	assert_int_equal(req.method, HTTP_GET);
	assert_int_equal(req.path_len, 1);
	assert_memory_equal(req.path, "/", 1);
	assert_int_equal(req.minor, 1);
	assert_true(req.keep_alive);
	assert_int_equal(req.length, strlen(s));
}

static void test_keep_alive_rules(void **state)
{
	struct http_request req;
	(void)state;

	/* ab -k: HTTP/1.0 with Connection: Keep-Alive. */
	assert_int_equal(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: h\r\n"
			       "User-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n", &req),
			 HTTP_COMPLETE);
	assert_int_equal(req.minor, 0);
	assert_true(req.keep_alive);
	/* ab without -k. */
	assert_int_equal(parse("GET / HTTP/1.0\r\nHost: h\r\n\r\n", &req), HTTP_COMPLETE);
	assert_false(req.keep_alive);
	/* 1.1 close, in a list and any case. */
	assert_int_equal(parse("GET / HTTP/1.1\r\nConnection: foo, CLOSE \r\n\r\n", &req), HTTP_COMPLETE);
	assert_false(req.keep_alive);
	assert_int_equal(parse("GET / HTTP/1.0\r\nconnection:keep-alive, close\r\n\r\n", &req), HTTP_COMPLETE);
	assert_false(req.keep_alive);
}

/* Every split point of a request: incomplete until the last byte. */
static void test_split_everywhere(void **state)
{
	const char *s = "\r\nGET /a?b=c HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc";
	size_t n = strlen(s), cut;
	struct http_request req;
	(void)state;

	/* The head ends 3 bytes before the end: the body is not the head's. */
	for (cut = 0; cut < n - 3; cut++)
		assert_int_equal(http_parse(s, cut, MAX, &req), HTTP_INCOMPLETE);
	for (; cut <= n; cut++) {
		assert_int_equal(http_parse(s, cut, MAX, &req), HTTP_COMPLETE);
		assert_int_equal(req.length, n - 3);
		assert_int_equal(req.framing, HTTP_BODY_LENGTH);
		assert_int_equal(req.content_length, 3);
	}
	assert_int_equal(req.path_len, 2);
	assert_memory_equal(req.path, "/a", 2);
}

static void test_bare_lf(void **state)
{
	struct http_request req;
	(void)state;

	assert_int_equal(parse("GET / HTTP/1.1\nHost: x\n\n", &req), HTTP_COMPLETE);
	assert_int_equal(req.length, 24);
}

static void test_pipelined(void **state)
{
	const char *s = "GET / HTTP/1.1\r\n\r\nHEAD /x HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\nGET /";
	size_t len = strlen(s), off = 0;
	struct http_request req;
	(void)state;

	assert_int_equal(http_parse(s, len, MAX, &req), HTTP_COMPLETE);
	assert_int_equal(req.method, HTTP_GET);
	assert_int_equal(req.length, 18);
	off += req.length;
	assert_int_equal(http_parse(s + off, len - off, MAX, &req), HTTP_COMPLETE);
	assert_int_equal(req.method, HTTP_HEAD);
	assert_memory_equal(req.path, "/x", 2);
	off += req.length;
	assert_int_equal(http_parse(s + off, len - off, MAX, &req), HTTP_COMPLETE);
	assert_false(req.keep_alive);
	off += req.length;
	assert_int_equal(http_parse(s + off, len - off, MAX, &req), HTTP_INCOMPLETE);
	assert_int_equal(len - off, 5);
}

static void test_malformed(void **state)
{
	(void)state;
	assert_error("GET  / HTTP/1.1\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1 \r\n\r\n", 400);
	assert_error("GET / HTTP/2.0\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1x\r\n\r\n", 400);
	assert_error("GET /\r\n\r\n", 400);
	assert_error("GET\r\n\r\n", 400);
	assert_error("GET http://h/ HTTP/1.1\r\n\r\n", 400);
	assert_error("G(T / HTTP/1.1\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nContent-Length:\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400);
	assert_error("GET / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\na", 400);
	assert_error("GET /a\x01 HTTP/1.1\r\n\r\n", 400);
}

/* Garbage is refused before a line end arrives (e.g. TLS to a plain port). */
static void test_garbage_early(void **state)
{
	const char tls[] = { 0x16, 0x03, 0x01, 0x02, 0x00 };
	struct http_request req;
	(void)state;

	assert_int_equal(http_parse(tls, sizeof(tls), MAX, &req), HTTP_ERROR);
	assert_int_equal(req.status, 400);
	/* but a CRLF cut in half is only incomplete */
	assert_int_equal(http_parse("\r", 1, MAX, &req), HTTP_INCOMPLETE);
	assert_int_equal(http_parse("GET / HTTP/1.1\r", 15, MAX, &req), HTTP_INCOMPLETE);
}

static void test_over_long(void **state)
{
	struct http_request req;
	char *buf = malloc(MAX + 100);
	size_t i;
	(void)state;

	assert_non_null(buf);
	memcpy(buf, "GET / HTTP/1.1\r\nX: ", 19);
	for (i = 19; i < MAX + 100; i++)
		buf[i] = 'a';
	/* A head that has not ended within MAX bytes is 431, whatever follows. */
	assert_int_equal(http_parse(buf, MAX, MAX, &req), HTTP_ERROR);
	assert_int_equal(req.status, 431);
	assert_int_equal(http_parse(buf, MAX + 100, MAX, &req), HTTP_ERROR);
	assert_int_equal(req.status, 431);
	/* One byte short of MAX is still worth waiting for. */
	assert_int_equal(http_parse(buf, MAX - 1, MAX, &req), HTTP_INCOMPLETE);
	/* A long request line, too. */
	memset(buf, 'a', MAX);
	memcpy(buf, "GET /", 5);
	assert_int_equal(http_parse(buf, MAX, MAX, &req), HTTP_ERROR);
	assert_int_equal(req.status, 431);
	/* Bodies are not buffered: any length up to HTTP_LENGTH_MAX is taken,
	 * a larger one is 413 at once (and cannot overflow). */
	assert_int_equal(parse("POST / HTTP/1.1\r\nContent-Length: 4611686018427387904\r\n\r\n", &req),
			 HTTP_COMPLETE);
	assert_true(req.content_length == HTTP_LENGTH_MAX);
	assert_error("GET / HTTP/1.1\r\nContent-Length: 4611686018427387905\r\n\r\n", 413);
	assert_error("GET / HTTP/1.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n", 413);
	/* Blank lines alone fill the buffer: 431 too. */
	memset(buf, '\n', MAX);
	assert_int_equal(http_parse(buf, MAX, MAX, &req), HTTP_ERROR);
	assert_int_equal(req.status, 431);
	free(buf);
}

/* Parses a POST whose Content-Length is `digits`. */
static enum http_parse_result parse_length(const char *digits, struct http_request *req)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "POST / HTTP/1.1\r\nContent-Length: %s\r\n\r\n", digits);

	assert_true(n > 0 && (size_t)n < sizeof(head));
	return parse(head, req);
}

/* A Content-Length taken, with exactly this value. */
static void check_length(const char *digits, uint64_t want)
{
	struct http_request req;

	assert_int_equal(parse_length(digits, &req), HTTP_COMPLETE);
	assert_int_equal(req.framing, HTTP_BODY_LENGTH);
	assert_true(req.content_length == want);
}

/* A Content-Length refused: 413, whatever its value would wrap to. */
static void check_length_refused(const char *digits)
{
	struct http_request req;

	assert_int_equal(parse_length(digits, &req), HTTP_ERROR);
	assert_int_equal(req.status, 413);
}

/*
 * Content-Length values around 2^62 (HTTP_LENGTH_MAX) and 2^64: a value is
 * either taken exactly or refused, never taken modulo 2^64 (a body of
 * 18446744073709551620 bytes read as 4 would let the rest of the body be
 * served as a request of its own).
 */
static void test_length_bounds(void **state)
{
	char digits[128];
	(void)state;

	check_length("4611686018427387904", HTTP_LENGTH_MAX);
	check_length("4611686018427387903", HTTP_LENGTH_MAX - 1);
	check_length_refused("4611686018427387905");
	check_length_refused("18446744073709551615");  /* 2^64 - 1 */
	check_length_refused("18446744073709551616");  /* 2^64: 0 modulo 2^64 */
	check_length_refused("18446744073709551620");  /* 2^64 + 4 */
	check_length_refused("20000000000000000000");  /* wraps under 2^62 */
	check_length_refused("23058430092136939520");  /* 2^64 + 2^62 */
	check_length_refused("73786976294838206464");  /* 2^66 */
	check_length_refused("10000000000000000000000000000000"); /* 32 digits */
	check_length("00000000000000000000000000000005", 5); /* 32 digits, too */
	/* Leading zeros change nothing, however many. */
	memset(digits, '0', 100);
	strcpy(digits + 100, "5");
	check_length(digits, 5);
	strcpy(digits + 100, "4611686018427387904");
	check_length(digits, HTTP_LENGTH_MAX);
	strcpy(digits + 100, "4611686018427387905");
	check_length_refused(digits);
	strcpy(digits + 100, "18446744073709551620");
	check_length_refused(digits);
}

/* The finding's request: its "4-byte body" and the request hidden after it
 * are never parsed; the head itself is refused. */
static void test_length_smuggling(void **state)
{
	const char *s = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551620\r\n\r\n"
			"ABCDGET /__shutdown HTTP/1.1\r\nHost: x\r\n\r\n";
	(void)state;

	assert_error(s, 413);
}

/* Parses s, a complete request, and routes it (no shutdown allowed). */
static void route(const char *s, struct http_response *resp)
{
	struct http_request req;

	assert_int_equal(parse(s, &req), HTTP_COMPLETE);
	http_route(&req, 0, false, resp);
}

static void test_route(void **state)
{
	struct http_request req;
	struct http_response resp;
	(void)state;

	route("GET / HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.body_len, 41);
	assert_true(resp.send_body);
	assert_true(resp.keep_alive);

	route("HEAD /?q HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 200);
	assert_false(resp.send_body);
	assert_int_equal(resp.body_len, 41);

	/* POST: answered as GET once its body is read. */
	parse("POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi", &req);
	assert_int_equal(req.method, HTTP_POST);
	http_route(&req, 0, false, &resp);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.body_len, 41);
	assert_true(resp.keep_alive);

	route("DELETE / HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 405);
	assert_true(resp.keep_alive);

	route("GET /nope HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 404);

	parse("GET /__shutdown HTTP/1.1\r\n\r\n", &req);
	http_route(&req, 0, false, &resp);
	assert_int_equal(resp.status, 404);
	assert_false(resp.shutdown);
	http_route(&req, 0, true, &resp);
	assert_int_equal(resp.status, 200);
	assert_true(resp.shutdown);
	assert_false(resp.keep_alive);

	http_route(NULL, 431, false, &resp);
	assert_int_equal(resp.status, 431);
	assert_false(resp.keep_alive);
	http_route(NULL, 408, false, &resp);
	assert_int_equal(resp.status, 408);
	assert_string_equal(resp.body, "request timeout\n");
	assert_false(resp.keep_alive);
}

static void test_route_bytes(void **state)
{
	struct http_response resp;
	(void)state;

	route("GET /bytes/0 HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 200);
	assert_null(resp.body);
	assert_true(resp.body_len == 0);
	route("GET /bytes/1073741824?x=1 HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 200);
	assert_null(resp.body);
	assert_true(resp.body_len == HTTP_BYTES_MAX);
	assert_true(resp.send_body);
	route("HEAD /bytes/007 HTTP/1.1\r\n\r\n", &resp);
	assert_int_equal(resp.status, 200);
	assert_true(resp.body_len == 7);
	assert_false(resp.send_body);
	route("POST /bytes/5 HTTP/1.1\r\nContent-Length: 1\r\n\r\nx", &resp);
	assert_int_equal(resp.status, 200);
	assert_true(resp.body_len == 5);
	/* Too large, not a number, empty, too many digits, a further path. */
	static const char *const not_found[] = {
		"GET /bytes/1073741825 HTTP/1.1\r\n\r\n", "GET /bytes/12a HTTP/1.1\r\n\r\n",
		"GET /bytes/ HTTP/1.1\r\n\r\n",           "GET /bytes/00000000001 HTTP/1.1\r\n\r\n",
		"GET /bytes/1/2 HTTP/1.1\r\n\r\n",        "GET /bytes HTTP/1.1\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof not_found / sizeof *not_found; i++) {
		route(not_found[i], &resp);
		if (resp.status != 404)
			fail_msg("%s: status %d, not 404", not_found[i], resp.status);
		assert_non_null(resp.body);
	}
}

/* How the body after a head is framed, and what is refused. */
static void test_framing(void **state)
{
	struct http_request req;
	(void)state;

	assert_int_equal(parse("GET / HTTP/1.1\r\n\r\n", &req), HTTP_COMPLETE);
	assert_int_equal(req.framing, HTTP_BODY_NONE);
	assert_int_equal(parse("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &req), HTTP_COMPLETE);
	assert_int_equal(req.framing, HTTP_BODY_NONE);
	assert_int_equal(parse("POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n", &req), HTTP_COMPLETE);
	assert_int_equal(req.framing, HTTP_BODY_LENGTH);
	assert_true(req.content_length == 12);
	assert_int_equal(parse("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &req),
			 HTTP_COMPLETE);
	assert_int_equal(req.framing, HTTP_BODY_CHUNKED);
	assert_int_equal(parse("POST / HTTP/1.1\r\nTransfer-Encoding: \r\nTransfer-Encoding: chunked\r\n\r\n",
			       &req), HTTP_COMPLETE);
	assert_int_equal(req.framing, HTTP_BODY_CHUNKED);
	/* Both framings at once (a smuggling vector), chunked twice or not
	 * last, none given: 400. Codings we do not know: 501. */
	assert_error("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nTransfer-Encoding: \r\n\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501);
	assert_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", 501);
	/* HTTP/1.0 has no transfer codings. */
	assert_error("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
}

static void test_expect(void **state)
{
	struct http_request req;
	(void)state;

	assert_int_equal(parse("POST / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 5\r\n\r\n", &req),
			 HTTP_COMPLETE);
	assert_true(req.expect_continue);
	/* Without a body there is nothing to wait for. */
	assert_int_equal(parse("GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n", &req), HTTP_COMPLETE);
	assert_false(req.expect_continue);
	/* An HTTP/1.0 client cannot mean it: ignored (RFC 9110 10.1.1). */
	assert_int_equal(parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", &req),
			 HTTP_COMPLETE);
	assert_false(req.expect_continue);
	assert_int_equal(parse("GET / HTTP/1.0\r\nExpect: something\r\n\r\n", &req), HTTP_COMPLETE);
	assert_error("GET / HTTP/1.1\r\nExpect: something\r\n\r\n", 417);
}

/* Feeds body bytes `piece` at a time; returns the last result and sets
 * *end to where the body ended (or failed). */
static enum http_body_result feed_pieces(const char *head, const char *body, size_t len, size_t piece,
					 size_t *end, int *status)
{
	struct http_request req;
	struct http_body b;
	size_t off = 0;
	enum http_body_result r = HTTP_BODY_MORE;

	assert_int_equal(parse(head, &req), HTTP_COMPLETE);
	http_body_start(&b, &req);
	*status = 0;
	while (off < len && r == HTTP_BODY_MORE) {
		size_t n = len - off < piece ? len - off : piece, used;

		r = http_body_feed(&b, body + off, n, &used, status);
		assert_true(used <= n);
		if (r == HTTP_BODY_MORE)
			assert_int_equal(used, n);
		off += used;
	}
	*end = off;
	return r;
}

/* Every piece size from 1 byte up: the body ends at the same place. */
static void check_body(const char *head, const char *body, size_t body_len)
{
	char buf[512];
	size_t len = strlen(body), piece, end;
	int status;

	/* Something after the body (a next request) must not be eaten. */
	assert_true(len + 4 < sizeof(buf));
	memcpy(buf, body, len);
	memcpy(buf + len, "GET ", 4);
	for (piece = 1; piece <= len + 4; piece++) {
		assert_int_equal(feed_pieces(head, buf, len + 4, piece, &end, &status), HTTP_BODY_DONE);
		assert_int_equal(end, body_len);
	}
}

static void check_bad_body(const char *head, const char *body, int want)
{
	size_t len = strlen(body), piece, end;
	int status;

	for (piece = 1; piece <= len; piece++) {
		assert_int_equal(feed_pieces(head, body, len, piece, &end, &status), HTTP_BODY_BAD);
		assert_int_equal(status, want);
	}
}

static void test_body_length(void **state)
{
	const char *head = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n";
	(void)state;

	check_body(head, "0123456789", 10);
	/* Short: more is wanted, all of it taken. */
	{
		size_t end;
		int status;
		assert_int_equal(feed_pieces(head, "01234", 5, 2, &end, &status), HTTP_BODY_MORE);
		assert_int_equal(end, 5);
	}
}

static void test_body_chunked(void **state)
{
	const char *head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
	const char *body;
	(void)state;

	body = "5\r\nhello\r\n0\r\n\r\n";
	check_body(head, body, strlen(body));
	/* Hex sizes either case, leading zeros, extensions, trailers, bare LF. */
	body = "A;name=\"v\";x\r\n0123456789\r\n00f \r\n0123456789abcde\r\n"
	       "0;last\r\nTrailer: x\r\nAnother: y\r\n\r\n";
	check_body(head, body, strlen(body));
	body = "3\nabc\n0\n\n";
	check_body(head, body, strlen(body));
	/* A zero-length body. */
	body = "0\r\n\r\n";
	check_body(head, body, strlen(body));
}

static void test_body_chunked_bad(void **state)
{
	const char *head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
	char big[12000];
	(void)state;

	check_bad_body(head, "x\r\n", 400);                    /* no size */
	check_bad_body(head, "\r\n", 400);                     /* empty size */
	check_bad_body(head, "5\r\nhelloX", 400);              /* no CRLF after data */
	check_bad_body(head, "5\r\nhello\rX", 400);
	check_bad_body(head, "5\rX", 400);                      /* CR not followed by LF */
	check_bad_body(head, "5g\r\n", 400);                   /* junk after the size */
	check_bad_body(head, "0\r\n\rX", 400);                /* the final CRLF */
	/* Sizes past HTTP_LENGTH_MAX: 413, before any overflow. */
	check_bad_body(head, "4000000000000001\r\n", 413);
	check_bad_body(head, "ffffffffffffffffffff\r\n", 413);
	/* Leading zeros are bounded too, and long extensions and trailers. */
	memset(big, '0', 40);
	strcpy(big + 40, "1\r\n");
	check_bad_body(head, big, 400);
	/* An extension past 4 KiB: 400; trailers past 8 KiB in all: 431. */
	memset(big, 'e', sizeof(big));
	memcpy(big, "1;", 2);
	big[sizeof(big) - 1] = '\0';
	{
		size_t end;
		int status;
		assert_int_equal(feed_pieces(head, big, strlen(big), 700, &end, &status), HTTP_BODY_BAD);
		assert_int_equal(status, 400);
		memcpy(big, "0\r\nT: ", 6);
		for (size_t i = 6; i + 1 < sizeof(big); i += 100)
			big[i] = '\n';
		assert_int_equal(feed_pieces(head, big, strlen(big), 700, &end, &status), HTTP_BODY_BAD);
		assert_int_equal(status, 431);
	}
}

/* Feeds `line`, the size line of a first chunk: the decoder must then wait
 * for exactly `want` bytes of chunk data. */
static void chunk_size_taken(const char *line, uint64_t want)
{
	struct http_request req;
	struct http_body b;
	size_t used;
	int status;

	assert_int_equal(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &req), HTTP_COMPLETE);
	http_body_start(&b, &req);
	assert_int_equal(http_body_feed(&b, line, strlen(line), &used, &status), HTTP_BODY_MORE);
	assert_int_equal(used, strlen(line));
	assert_true(b.left == want);
	/* and its data is data: a byte of it is taken and counted */
	assert_int_equal(http_body_feed(&b, "x", 1, &used, &status), HTTP_BODY_MORE);
	assert_int_equal(used, 1);
	assert_true(b.left == want - 1);
}

/*
 * Chunk sizes around 2^62 (HTTP_LENGTH_MAX) and 2^64: taken exactly or
 * refused, never taken modulo 2^64 (40000000000000000, 2^66, read as 0 would
 * end the body there; 10000000000000005 read as 5 would end it after 5 bytes,
 * and what follows would be parsed as requests).
 */
static void test_chunk_size_bounds(void **state)
{
	const char *head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
	char line[128];
	(void)state;

	chunk_size_taken("4000000000000000\r\n", HTTP_LENGTH_MAX);
	chunk_size_taken("3fffffffffffffff\r\n", HTTP_LENGTH_MAX - 1);
	check_bad_body(head, "4000000000000001\r\n", 413);
	check_bad_body(head, "ffffffffffffffff\r\n", 413);                /* 2^64 - 1 */
	check_bad_body(head, "10000000000000000\r\n\r\n", 413);           /* 2^64: 0 */
	check_bad_body(head, "10000000000000005\r\nhello\r\n0\r\n\r\n", 413); /* 2^64 + 5 */
	check_bad_body(head, "14000000000000000\r\n", 413);               /* 2^64 + 2^62 */
	check_bad_body(head, "40000000000000000\r\n\r\n", 413);           /* 2^66 */
	check_bad_body(head, "10000000000000000000000000000000\r\n", 413); /* 32 digits */
	/* Leading zeros count towards SIZE_DIGITS_MAX (32 digits) and change
	 * nothing else: 32 digits are taken, 33 are not. */
	memset(line, '0', 31);
	strcpy(line + 31, "5\r\nhello\r\n0\r\n\r\n");
	check_body(head, line, strlen(line));
	memset(line, '0', 16);
	strcpy(line + 16, "4000000000000000\r\n");
	chunk_size_taken(line, HTTP_LENGTH_MAX);
	memset(line, '0', 32);
	strcpy(line + 32, "5\r\nhello\r\n0\r\n\r\n");
	check_bad_body(head, line, 400);
	memset(line, '0', 15);
	strcpy(line + 15, "10000000000000005\r\nhello\r\n0\r\n\r\n");
	check_bad_body(head, line, 413);
}

/* The /bytes pattern: the documented lines, and any slice is the same
 * bytes as that part of the whole. */
static void test_pattern(void **state)
{
	static char whole[70000], part[5000];
	size_t off;
	(void)state;

	http_pattern(0, whole, sizeof(whole));
	assert_memory_equal(whole, "000000000000000\n000000000000010\n000000000000020\n", 48);
	assert_memory_equal(whole + 0xa0, "0000000000000a0\n", 16);
	assert_memory_equal(whole + 0xff0, "000000000000ff0\n000000000001000\n", 32);
	assert_memory_equal(whole + 69984, "000000000011160\n", 16);
	for (off = 0; off < sizeof(whole) - sizeof(part); off += 4093) {
		size_t len = (off * 7) % sizeof(part) + 1;
		http_pattern(off, part, len);
		assert_memory_equal(part, whole + off, len);
	}
	/* Far out: the 15 digits carry. */
	http_pattern(0xffffff0, part, 32);
	assert_memory_equal(part, "00000000ffffff0\n000000010000000\n", 32);
	http_pattern(HTTP_BYTES_MAX - 3, part, 3);
	assert_memory_equal(part, "f0\n", 3);
}

static void check_head(const struct http_response *resp, int minor, const char *want)
{
	char out[HTTP_HEAD_MAX];
	size_t n = http_head(resp, minor, out);

	assert_int_equal(n, strlen(want));
	assert_memory_equal(out, want, n);
}

static void test_head_bytes(void **state)
{
	struct http_response resp;
	(void)state;

	route("GET / HTTP/1.1\r\n\r\n", &resp);
	check_head(&resp, 1, "HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 41\r\n\r\n");
	check_head(&resp, 0, "HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 41\r\nConnection: keep-alive\r\n\r\n");
	resp.keep_alive = false;
	check_head(&resp, 0, "HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 41\r\nConnection: close\r\n\r\n");
	route("DELETE / HTTP/1.1\r\n\r\n", &resp);
	check_head(&resp, 1, "HTTP/1.1 405 Method Not Allowed\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 19\r\nAllow: GET, HEAD, POST\r\n\r\n");
	route("GET /bytes/1073741824 HTTP/1.1\r\n\r\n", &resp);
	check_head(&resp, 1, "HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 1073741824\r\n\r\n");
	http_route(NULL, 408, false, &resp);
	check_head(&resp, 1, "HTTP/1.1 408 Request Timeout\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 16\r\nConnection: close\r\n\r\n");
	/* The longest head fits in HTTP_HEAD_MAX with room to spare. */
	http_route(NULL, 431, false, &resp);
	resp.body_len = UINT64_MAX;
	{
		char out[HTTP_HEAD_MAX];
		assert_true(http_head(&resp, 1, out) < HTTP_HEAD_MAX);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body_is_41_bytes),
		cmocka_unit_test(test_simple_get),
		cmocka_unit_test(test_keep_alive_rules),
		cmocka_unit_test(test_split_everywhere),
		cmocka_unit_test(test_bare_lf),
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_garbage_early),
		cmocka_unit_test(test_over_long),
		cmocka_unit_test(test_length_bounds),
		cmocka_unit_test(test_length_smuggling),
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_route_bytes),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_expect),
		cmocka_unit_test(test_body_length),
		cmocka_unit_test(test_body_chunked),
		cmocka_unit_test(test_body_chunked_bad),
		cmocka_unit_test(test_chunk_size_bounds),
		cmocka_unit_test(test_pattern),
		cmocka_unit_test(test_head_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
