/*
 * test_http.c: unit tests of httpd's request parser and response builder
 * (apps/httpd/http.c): whole, split, pipelined, malformed and over-long
 * requests, keep-alive rules, routing and the exact bytes of response heads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

	for (cut = 0; cut < n; cut++)
		assert_int_equal(http_parse(s, cut, MAX, &req), HTTP_INCOMPLETE);
	assert_int_equal(http_parse(s, n, MAX, &req), HTTP_COMPLETE);
	assert_int_equal(req.length, n);
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
	assert_error("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
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
	/* A body that cannot fit: 413 at once, even for a huge length. */
	assert_error("GET / HTTP/1.1\r\nContent-Length: 8190\r\n\r\n", 413);
	assert_error("GET / HTTP/1.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n", 413);
	/* Blank lines alone fill the buffer: 431 too. */
	memset(buf, '\n', MAX);
	assert_int_equal(http_parse(buf, MAX, MAX, &req), HTTP_ERROR);
	assert_int_equal(req.status, 431);
	free(buf);
}

static void test_route(void **state)
{
	struct http_request req;
	struct http_response resp;
	(void)state;

	parse("GET / HTTP/1.1\r\n\r\n", &req);
	http_route(&req, 0, false, &resp);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.body_len, 41);
	assert_true(resp.send_body);
	assert_true(resp.keep_alive);

	parse("HEAD /?q HTTP/1.1\r\n\r\n", &req);
	http_route(&req, 0, false, &resp);
	assert_int_equal(resp.status, 200);
	assert_false(resp.send_body);
	assert_int_equal(resp.body_len, 41);

	parse("POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi", &req);
	http_route(&req, 0, false, &resp);
	assert_int_equal(resp.status, 405);
	assert_true(resp.keep_alive);

	parse("GET /nope HTTP/1.1\r\n\r\n", &req);
	http_route(&req, 0, false, &resp);
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
	struct http_request req;
	struct http_response resp;
	(void)state;

	parse("GET / HTTP/1.1\r\n\r\n", &req);
	http_route(&req, 0, false, &resp);
	check_head(&resp, 1, "HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 41\r\n\r\n");
	check_head(&resp, 0, "HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 41\r\nConnection: keep-alive\r\n\r\n");
	resp.keep_alive = false;
	check_head(&resp, 0, "HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 41\r\nConnection: close\r\n\r\n");
	parse("DELETE / HTTP/1.1\r\n\r\n", &req);
	http_route(&req, 0, false, &resp);
	check_head(&resp, 1, "HTTP/1.1 405 Method Not Allowed\r\nServer: httpd\r\nContent-Type: text/plain\r\n"
			     "Content-Length: 19\r\nAllow: GET, HEAD\r\n\r\n");
	/* The longest head fits in HTTP_HEAD_MAX with room to spare. */
	http_route(NULL, 431, false, &resp);
	resp.body_len = (size_t)-1;
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
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_head_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
