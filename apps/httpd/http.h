/*
 * http.h: the HTTP/1.x request parser and response builder of httpd.
 *
 * Pure functions over byte buffers: no I/O, no allocation, no global state, so
 * the same code runs on Linux, in the unikernel and under the unit tests.
 *
 *   http_parse()    reads one request from the front of a buffer: complete,
 *                   incomplete (wait for more bytes) or an error that carries
 *                   the HTTP status to answer with (400, 413, 431).
 *   http_route()    decides the answer to a parsed request (200/404/405...).
 *   http_head()     writes the response head (status line and headers).
 *
 * The caller sends head and body together (httpd uses one writev).
 */
#ifndef HTTPD_HTTP_H
#define HTTPD_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* The fixed body of `GET /`: 41 bytes, like the reference app's. */
#define HTTP_HELLO_BODY "Hello from httpd, a poll()-based server.\n"
#define HTTP_HELLO_LEN (sizeof(HTTP_HELLO_BODY) - 1)

/* The path that stops the server, when it was started with that allowed. */
#define HTTP_SHUTDOWN_PATH "/__shutdown"

/* Room a response head can take; http_head() never writes more. */
#define HTTP_HEAD_MAX 256

enum http_method {
	HTTP_GET,   /* GET */
	HTTP_HEAD,  /* HEAD: as GET, without the body */
	HTTP_OTHER, /* any other well-formed method token: answered 405 */
};

enum http_parse_result {
	HTTP_INCOMPLETE, /* no full request yet: read more and call again */
	HTTP_COMPLETE,   /* one request parsed; req->length bytes consumed */
	HTTP_ERROR,      /* unusable request: answer req->status and close */
};

/* One parsed request. Pointers point into the caller's buffer. */
struct http_request {
	enum http_method method; /* the method, classified */
	const char *path;        /* request target, up to (not including) '?' */
	size_t path_len;         /* its length in bytes */
	int minor;               /* HTTP/1.<minor>: 0 or 1 */
	bool keep_alive;         /* the connection stays open after the answer */
	size_t length;           /* bytes of the buffer the request occupies
	                            (leading blank lines, head and body) */
	int status;              /* on HTTP_ERROR: the status to answer */
};

/* What to answer to one request. */
struct http_response {
	int status;       /* 200, 400, 404, 405, 413 or 431 */
	const char *body; /* the body (static storage) */
	size_t body_len;  /* its length; sent as Content-Length */
	bool send_body;   /* false for HEAD: the head announces body_len anyway */
	bool keep_alive;  /* false: close the connection after sending */
	bool shutdown;    /* the server stops after sending this */
};

/*
 * Parses the request at the front of buf[0..len). `max` bounds a request: a
 * head (or head plus body) that does not fit in `max` bytes is an error
 * (431, or 413 for a body), never a buffer the caller must grow.
 */
enum http_parse_result http_parse(const char *buf, size_t len, size_t max,
				  struct http_request *req);

/*
 * The answer to a request. `req` is NULL for a parse error, then `status` is
 * that error. `allow_shutdown` lets GET HTTP_SHUTDOWN_PATH stop the server.
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

#endif
