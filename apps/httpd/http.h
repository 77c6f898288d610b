/*
 * http.h: the HTTP/1.x request parser, body framing and response builder of
 * httpd.
 *
 * Pure functions over byte buffers: no I/O, no allocation, no global state, so
 * the same code runs on Linux, in the unikernel and under the unit tests.
 *
 *   http_parse()      reads one request head from the front of a buffer:
 *                     complete, incomplete (wait for more bytes) or an error
 *                     that carries the HTTP status to answer with.
 *   http_body_*()     (body.c) follow a request body's framing (Content-Length
 *                     or chunked) over bytes as they arrive; httpd discards
 *                     the body itself.
 *   http_route()      decides the answer to a parsed request (200/404/405...).
 *   http_head()       writes the response head (status line and headers).
 *   http_pattern()    the generated body of GET /bytes/N (see below).
 *
 * The caller sends head and body together (httpd uses one writev).
 */
#ifndef HTTPD_HTTP_H
#define HTTPD_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fixed body of `GET /`: 41 bytes, like the reference app's. */
#define HTTP_HELLO_BODY "Hello from httpd, a poll()-based server.\n"
#define HTTP_HELLO_LEN (sizeof(HTTP_HELLO_BODY) - 1)

/* The path that stops the server, when it was started with that allowed. */
#define HTTP_SHUTDOWN_PATH "/__shutdown"

/*
 * GET /bytes/N answers N bytes (0 <= N <= HTTP_BYTES_MAX) generated on the
 * fly: 16-byte lines, line k being the offset k*16 in 15 lower-case hex
 * digits and a newline ("000000000000000\n000000000000010\n..."), cut after
 * N bytes. Every line differs, so a lost, repeated or reordered piece shows
 * in the hash, and any byte says where it belongs. The same bytes, in
 * shell: awk 'BEGIN { for (i = 0; i < N; i += 16) printf "%015x\n", i }' |
 * head -c N.
 */
#define HTTP_BYTES_PATH "/bytes/"
#define HTTP_BYTES_MAX (1ULL << 30)

/* The largest Content-Length or chunk size taken (bodies are discarded, so
 * only the arithmetic bounds them): 2^62. Larger ones are answered 413, by
 * a test made before each digit is added, so no value wraps past 2^64. */
#define HTTP_LENGTH_MAX (1ULL << 62)

/* Room a response head can take; http_head() never writes more. */
#define HTTP_HEAD_MAX 256

/* What answers "Expect: 100-continue" before the body is read. */
#define HTTP_CONTINUE "HTTP/1.1 100 Continue\r\n\r\n"
#define HTTP_CONTINUE_LEN (sizeof(HTTP_CONTINUE) - 1)

enum http_method {
	HTTP_GET,   /* GET */
	HTTP_HEAD,  /* HEAD: as GET, without the body */
	HTTP_POST,  /* POST: its body is read and discarded, then as GET */
	HTTP_OTHER, /* any other well-formed method token: answered 405 */
};

enum http_parse_result {
	HTTP_INCOMPLETE, /* no full head yet: read more and call again */
	HTTP_COMPLETE,   /* one head parsed; req->length bytes consumed */
	HTTP_ERROR,      /* unusable request: answer req->status and close */
};

/* How the body after a head is delimited (RFC 9112 section 6). */
enum http_framing {
	HTTP_BODY_NONE,    /* no body */
	HTTP_BODY_LENGTH,  /* Content-Length bytes */
	HTTP_BODY_CHUNKED, /* Transfer-Encoding: chunked */
};

/* One parsed request head. Pointers point into the caller's buffer. */
struct http_request {
	enum http_method method;   /* the method, classified */
	const char *path;          /* request target, up to (not including) '?' */
	size_t path_len;           /* its length in bytes */
	int minor;                 /* HTTP/1.<minor>: 0 or 1 */
	bool keep_alive;           /* the connection stays open after the answer */
	bool expect_continue;      /* HTTP/1.1 "Expect: 100-continue": the client
	                              waits for HTTP_CONTINUE before its body */
	enum http_framing framing; /* the body that follows the head */
	uint64_t content_length;   /* HTTP_BODY_LENGTH: the body's length (> 0) */
	size_t length;             /* bytes of the buffer the head occupies
	                              (leading blank lines included); the body,
	                              if any, starts there */
	int status;                /* on HTTP_ERROR: the status to answer */
};

/* Follows one request body's framing; see body.c. */
struct http_body {
	enum http_framing framing; /* HTTP_BODY_LENGTH or HTTP_BODY_CHUNKED */
	int state;                 /* chunked: where in the framing (body.c) */
	uint64_t left;             /* data bytes still to come: of the whole body
	                              (length) or of the current chunk */
	unsigned digits;           /* chunked: hex digits of the size so far */
	size_t line_len;           /* chunked: bytes of the extension or trailer
	                              line being skipped */
	size_t trailer_len;        /* chunked: bytes of trailer fields so far */
};

enum http_body_result {
	HTTP_BODY_MORE, /* every byte given belonged to the body; more to come */
	HTTP_BODY_DONE, /* the body ended after *used bytes */
	HTTP_BODY_BAD,  /* malformed framing: answer *status and close */
};

/* What to answer to one request. */
struct http_response {
	int status;        /* 200, 400, 404, 405, 408, 413, 417, 431 or 501 */
	const char *body;  /* a fixed body (static storage), or NULL when the
	                      body is http_pattern()'s */
	uint64_t body_len; /* its length; sent as Content-Length */
	bool send_body;    /* false for HEAD: the head announces body_len anyway */
	bool keep_alive;   /* false: close the connection after sending */
	bool shutdown;     /* the server stops after sending this */
};

/*
 * Parses the request head at the front of buf[0..len). `max` bounds a head: a
 * head that does not fit in `max` bytes is an error (431), never a buffer the
 * caller must grow. The body, if any, is not part of req->length.
 */
enum http_parse_result http_parse(const char *buf, size_t len, size_t max,
				  struct http_request *req);

/* Starts following the body of `req` (whose framing is not HTTP_BODY_NONE). */
void http_body_start(struct http_body *b, const struct http_request *req);

/*
 * Takes the bytes buf[0..len) that follow what the body has seen so far.
 * *used: how many of them belong to the body (all of them unless DONE or
 * BAD); on BAD, *status is the error to answer (400, 413 or 431).
 */
enum http_body_result http_body_feed(struct http_body *b, const char *buf, size_t len,
				     size_t *used, int *status);

/*
 * The answer to a request. `req` is NULL for a parse error or a timeout,
 * then `status` is that error. `allow_shutdown` lets GET HTTP_SHUTDOWN_PATH
 * stop the server.
 */
void http_route(const struct http_request *req, int status, bool allow_shutdown,
		struct http_response *resp);

/*
 * Writes the response head for `resp` into out (at least HTTP_HEAD_MAX bytes)
 * and returns its length. `minor` is the request's HTTP minor version: an
 * HTTP/1.0 client that keeps the connection is told so explicitly.
 */
size_t http_head(const struct http_response *resp, int minor, char *out);

/* The reason phrase of a status ("OK", "Not Found", ...). */
const char *http_reason(int status);

/* Writes bytes [offset, offset + len) of the /bytes pattern into out. */
void http_pattern(uint64_t offset, char *out, size_t len);

#endif
