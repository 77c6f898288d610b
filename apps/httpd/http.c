/*
 * http.c: parse HTTP/1.0 and HTTP/1.1 requests and build response heads.
 *
 * Offers http_parse(), http_route(), http_head() and http_reason() (see
 * http.h). The parser is strict where leniency would hide a broken client
 * (single spaces in the request line, no header folding, no bare CR) and
 * lenient where RFC 9112 asks for it (leading blank lines, bare LF line
 * ends). It re-reads the buffer from its start on each call: a request is at
 * most `max` bytes, so a request split across many reads costs little.
 */
#include "http.h"

#include <string.h>

/* A tchar of RFC 9110: the characters of a method or a header name. */
static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static unsigned char to_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

/* Whether s[0..n) equals the lower-case literal `lit`, ignoring case. */
static bool equals_nocase(const char *s, size_t n, const char *lit)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (lit[i] == '\0' || to_lower((unsigned char)s[i]) != (unsigned char)lit[i])
			return false;
	return lit[n] == '\0';
}

static bool equals(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Index of the first '\n' in buf[from..to), or `to` when there is none. */
static size_t find_newline(const char *buf, size_t from, size_t to)
{
	const char *nl = memchr(buf + from, '\n', to - from);

	return nl ? (size_t)(nl - buf) : to;
}

static enum http_parse_result fail(struct http_request *req, int status)
{
	req->status = status;
	return HTTP_ERROR;
}

/*
 * The request line, without its line end: METHOD SP TARGET SP HTTP/1.x.
 * Returns 0 or the error status.
 */
static int parse_request_line(const char *line, size_t n, struct http_request *req)
{
	size_t i = 0, start;

	while (i < n && is_tchar((unsigned char)line[i]))
		i++;
	if (i == 0 || i == n || line[i] != ' ')
		return 400;
	if (equals(line, i, "GET"))
		req->method = HTTP_GET;
	else if (equals(line, i, "HEAD"))
		req->method = HTTP_HEAD;
	else
		req->method = HTTP_OTHER;

	start = ++i;
	while (i < n && (unsigned char)line[i] > ' ' && line[i] != 0x7f)
		i++;
	if (i == start || i == n || line[i] != ' ')
		return 400;
	/* Origin form ("/path?query") only; "*" is for OPTIONS, which gets 405. */
	if (line[start] != '/' && !(i - start == 1 && line[start] == '*'))
		return 400;
	req->path = line + start;
	req->path_len = i - start;
	{
		const char *q = memchr(req->path, '?', req->path_len);
		if (q)
			req->path_len = (size_t)(q - req->path);
	}

	i++;
	if (equals(line + i, n - i, "HTTP/1.1"))
		req->minor = 1;
	else if (equals(line + i, n - i, "HTTP/1.0"))
		req->minor = 0;
	else
		return 400;
	return 0;
}

/* Header state gathered while reading the head. */
struct head_state {
	bool conn_close;       /* "Connection: close" seen */
	bool conn_keep_alive;  /* "Connection: keep-alive" seen */
	bool have_length;      /* a Content-Length header was seen */
	size_t content_length; /* its value */
};

/* The Connection header's comma-separated options. */
static void parse_connection(const char *v, size_t n, struct head_state *st)
{
	size_t i = 0;

	while (i < n) {
		size_t start, end;

		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		start = i;
		while (i < n && v[i] != ',')
			i++;
		end = i;
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		if (equals_nocase(v + start, end - start, "close"))
			st->conn_close = true;
		else if (equals_nocase(v + start, end - start, "keep-alive"))
			st->conn_keep_alive = true;
	}
}

/* One header line (no line end). Returns 0 or the error status. */
static int parse_header(const char *line, size_t n, size_t max, struct head_state *st)
{
	size_t i = 0, vs, ve;

	while (i < n && is_tchar((unsigned char)line[i]))
		i++;
	/* No name, a space before the colon, or folding: all rejected (RFC 9112 5). */
	if (i == 0 || i == n || line[i] != ':')
		return 400;
	vs = i + 1;
	while (vs < n && (line[vs] == ' ' || line[vs] == '\t'))
		vs++;
	ve = n;
	while (ve > vs && (line[ve - 1] == ' ' || line[ve - 1] == '\t'))
		ve--;

	if (equals_nocase(line, i, "connection")) {
		parse_connection(line + vs, ve - vs, st);
	} else if (equals_nocase(line, i, "content-length")) {
		size_t value = 0, k;

		if (ve == vs)
			return 400;
		for (k = vs; k < ve; k++) {
			if (line[k] < '0' || line[k] > '9')
				return 400;
			value = value * 10 + (size_t)(line[k] - '0');
			if (value > max) /* also keeps the sum below from overflowing */
				return 413;
		}
		if (st->have_length && st->content_length != value)
			return 400;
		st->have_length = true;
		st->content_length = value;
	} else if (equals_nocase(line, i, "transfer-encoding")) {
		/* Chunked request bodies are not supported; a GET has no body. */
		return 400;
	}
	return 0;
}

enum http_parse_result http_parse(const char *buf, size_t len, size_t max,
				  struct http_request *req)
{
	struct head_state st = { 0 };
	size_t pos = 0, limit = len < max ? len : max, line_no = 0;

	memset(req, 0, sizeof(*req));

	/* Blank lines before a request are ignored (RFC 9112 2.2). */
	for (;;) {
		if (pos < limit && buf[pos] == '\n')
			pos++;
		else if (pos + 1 < limit && buf[pos] == '\r' && buf[pos + 1] == '\n')
			pos += 2;
		else
			break;
	}

	for (;;) {
		size_t nl = find_newline(buf, pos, limit);
		size_t end = nl;
		int err;

		if (nl == limit) {
			if (len >= max)
				return fail(req, 431);
			/* A partial request line can already be told to be garbage. */
			if (line_no == 0) {
				size_t i = pos;
				while (i < limit && is_tchar((unsigned char)buf[i]))
					i++;
				/* (a CR last may be half of a CRLF still on its way) */
				if (i < limit && buf[i] != ' ' && !(buf[i] == '\r' && i + 1 == limit))
					return fail(req, 400);
			}
			return HTTP_INCOMPLETE;
		}
		if (end > pos && buf[end - 1] == '\r')
			end--;
		if (memchr(buf + pos, '\r', end - pos))
			return fail(req, 400); /* a bare CR inside a line */

		if (line_no == 0) {
			err = parse_request_line(buf + pos, end - pos, req);
		} else if (end == pos) {
			pos = nl + 1;
			break; /* the blank line that ends the head */
		} else {
			err = parse_header(buf + pos, end - pos, max, &st);
		}
		if (err)
			return fail(req, err);
		pos = nl + 1;
		line_no++;
	}

	if (st.have_length) {
		if (pos + st.content_length > max)
			return fail(req, 413);
		if (pos + st.content_length > len)
			return HTTP_INCOMPLETE;
		pos += st.content_length;
	}
	req->length = pos;
	if (req->minor == 1)
		req->keep_alive = !st.conn_close;
	else
		req->keep_alive = st.conn_keep_alive && !st.conn_close;
	return HTTP_COMPLETE;
}

void http_route(const struct http_request *req, int status, bool allow_shutdown,
		struct http_response *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->send_body = true;
	if (req == NULL) {
		resp->status = status;
		resp->keep_alive = false;
	} else {
		resp->keep_alive = req->keep_alive;
		resp->send_body = req->method != HTTP_HEAD;
		if (req->method == HTTP_OTHER)
			resp->status = 405;
		else if (equals(req->path, req->path_len, "/"))
			resp->status = 200;
		else if (allow_shutdown && equals(req->path, req->path_len, HTTP_SHUTDOWN_PATH)) {
			resp->status = 200;
			resp->shutdown = true;
			resp->keep_alive = false;
		} else
			resp->status = 404;
	}

	if (resp->status == 200 && !resp->shutdown) {
		resp->body = HTTP_HELLO_BODY;
		resp->body_len = HTTP_HELLO_LEN;
	} else if (resp->shutdown) {
		resp->body = "shutting down\n";
		resp->body_len = strlen(resp->body);
	} else {
		switch (resp->status) {
		case 400: resp->body = "bad request\n"; break;
		case 404: resp->body = "not found\n"; break;
		case 405: resp->body = "method not allowed\n"; break;
		case 413: resp->body = "request body too large\n"; break;
		case 431: resp->body = "request header too large\n"; break;
		default: resp->body = "error\n"; break;
		}
		resp->body_len = strlen(resp->body);
	}
}

const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Content Too Large";
	case 431: return "Request Header Fields Too Large";
	default: return "Error";
	}
}

/* Appends a string; the caller's head is bounded by HTTP_HEAD_MAX. */
static size_t put(char *out, size_t at, const char *s)
{
	size_t n = strlen(s);

	memcpy(out + at, s, n);
	return at + n;
}

static size_t put_uint(char *out, size_t at, size_t v)
{
	char digits[24];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		out[at++] = digits[--n];
	return at;
}

size_t http_head(const struct http_response *resp, int minor, char *out)
{
	size_t at = 0;
	int status = resp->status >= 100 && resp->status <= 999 ? resp->status : 500;

	/* No Date header: the unikernel may have no wall clock (RFC 9110 6.6.1). */
	at = put(out, at, "HTTP/1.1 ");
	at = put_uint(out, at, (size_t)status);
	at = put(out, at, " ");
	at = put(out, at, http_reason(status));
	at = put(out, at, "\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: ");
	at = put_uint(out, at, resp->body_len);
	at = put(out, at, "\r\n");
	if (status == 405)
		at = put(out, at, "Allow: GET, HEAD\r\n");
	if (!resp->keep_alive)
		at = put(out, at, "Connection: close\r\n");
	else if (minor == 0)
		at = put(out, at, "Connection: keep-alive\r\n");
	at = put(out, at, "\r\n");
	return at;
}
