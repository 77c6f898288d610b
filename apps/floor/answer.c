/*
 * answer.c: the floor's answer to one request segment (floor.c says what the
 * floor is), made by httpd's own parser and response builder
 * (apps/httpd/http.c: http_parse, http_route, http_head), so its bytes are
 * httpd's by construction: GET / gets the 41-byte hello with httpd's status
 * line and headers, "Connection: keep-alive" for an HTTP/1.0 client that
 * keeps the connection (ab -k), "Connection: close" for one that does not;
 * HTTP/1.1 keeps it unless told to close. Every other request gets what
 * httpd would answer (404, 405, HEAD's head, /bytes/N up to the answer
 * limit, /__shutdown with -s, 400 and the other errors with the connection
 * closed), as long as the answer fits one segment (FLOOR_ANSWER_MAX).
 *
 * The three answers to GET / are made once at start with their checksum
 * sums; any other answer is made per request in one scratch buffer. What
 * httpd would have to wait for more bytes to answer (a head not yet whole, a
 * body) the floor refuses: it has no state to wait in.
 */
#include <string.h>
#include "kernel/kernel.h"
#include "apps/httpd/http.h"
#include "floor.h"

/* The longest head http_parse takes: httpd's REQUEST_MAX (apps/httpd/httpd.h).
 * A segment's payload is shorter (one receive buffer). */
#define HEAD_MAX 8192

/* One answer, made once. */
struct canned {
	uint8_t bytes[FLOOR_ANSWER_MAX]; /* head and body */
	size_t len;                      /* their length */
	uint32_t sum;                    /* csum_partial() of them */
	bool close;                      /* the connection closes after it */
};

/* GET / in the three forms its answer takes. */
enum { HELLO_CLOSE, HELLO_KEEP_11, HELLO_KEEP_10, NHELLO };
static struct canned hello[NHELLO];
/* The hello body as http_route() hands it out (its own string in http.c):
 * an answer with this body pointer is one of the canned ones. */
static const char *hello_body;
/* Any other answer, made where the request is answered (one at a time). */
static uint8_t scratch[FLOOR_ANSWER_MAX];

/* Head and body of `resp` (to an HTTP/1.`minor` request) in out[]; their
 * length, 0 when longer than FLOOR_ANSWER_MAX. */
static size_t make(const struct http_response *resp, int minor, uint8_t *out)
{
	char head[HTTP_HEAD_MAX];
	size_t n = http_head(resp, minor, head);
	uint64_t body = resp->send_body ? resp->body_len : 0;
	if (n > FLOOR_ANSWER_MAX || body > FLOOR_ANSWER_MAX - n)
		return 0;
	memcpy(out, head, n);
	if (body && resp->body)
		memcpy(out + n, resp->body, (size_t)body);
	else if (body)
		http_pattern(0, (char *)out + n, (size_t)body); /* GET /bytes/N */
	return n + (size_t)body;
}

void answer_init(void)
{
	static const char *const request[NHELLO] = {
		[HELLO_CLOSE] = "GET / HTTP/1.1\r\nConnection: close\r\n\r\n",
		[HELLO_KEEP_11] = "GET / HTTP/1.1\r\n\r\n",
		[HELLO_KEEP_10] = "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	};
	for (int i = 0; i < NHELLO; i++) {
		struct http_request req;
		struct http_response resp;
		enum http_parse_result r = http_parse(request[i], strlen(request[i]), HEAD_MAX, &req);
		KCHECK(r == HTTP_COMPLETE);
		http_route(&req, 0, false, &resp);
		hello[i].len = make(&resp, req.minor, hello[i].bytes);
		KCHECK(hello[i].len > 0 && resp.body_len == HTTP_HELLO_LEN &&
		       memcmp(resp.body, HTTP_HELLO_BODY, HTTP_HELLO_LEN) == 0);
		hello_body = resp.body;
		hello[i].sum = csum_partial(hello[i].bytes, hello[i].len, 0);
		hello[i].close = !resp.keep_alive;
	}
}

/* Which canned answer GET / gets, by how the connection goes on. */
static const struct canned *hello_for(const struct http_request *req, const struct http_response *resp)
{
	if (!resp->keep_alive)
		return &hello[HELLO_CLOSE];
	return &hello[req->minor == 0 ? HELLO_KEEP_10 : HELLO_KEEP_11];
}

enum answer_kind answer_for(const uint8_t *payload, size_t len, struct answer *a)
{
	struct http_request req;
	struct http_response resp;
	int minor = 1; /* httpd answers a request it cannot parse as HTTP/1.1 */
	enum http_parse_result r = http_parse((const char *)payload, len, HEAD_MAX, &req);
	if (r == HTTP_INCOMPLETE)
		return ANSWER_SPLIT;
	if (r == HTTP_ERROR) {
		http_route(NULL, req.status, false, &resp); /* closes, as httpd's fail_request */
	} else {
		if (req.framing != HTTP_BODY_NONE)
			return ANSWER_BODY;
		if (req.length != len)
			return ANSWER_EXTRA;
		http_route(&req, 0, floor_cfg.allow_shutdown, &resp);
		minor = req.minor;
	}
	*a = (struct answer){ .close = !resp.keep_alive, .shutdown = resp.shutdown };
	if (r == HTTP_COMPLETE && resp.body == hello_body && resp.send_body) {
		const struct canned *c = hello_for(&req, &resp);
		a->bytes = c->bytes, a->len = c->len, a->sum = c->sum;
		return ANSWER_SEND;
	}
	a->len = make(&resp, minor, scratch);
	if (a->len == 0)
		return ANSWER_TOO_LONG;
	a->bytes = scratch;
	a->sum = csum_partial(scratch, a->len, 0);
	return ANSWER_SEND;
}
