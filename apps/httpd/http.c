/*
 * http.c: parse HTTP/1.0 and HTTP/1.1 request heads, route them and build
 * response heads; the /bytes pattern.
 *
 * Offers http_parse(), http_route(), http_head(), http_reason() and
 * http_pattern() (see http.h; body framing is in body.c). The parser is
 * strict where leniency would hide a broken client or let two parties frame
 * a message differently (single spaces in the request line, no header
 * folding, no bare CR, no Content-Length beside Transfer-Encoding) and
 * lenient where RFC 9112 asks for it (leading blank lines, bare LF line
 * ends). It re-reads the buffer from its start on each call: a head is at
 * most `max` bytes, so a head split across many reads costs little.
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
	else if (equals(line, i, "POST"))
		req->method = HTTP_POST;
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
	bool conn_close;         /* "Connection: close" seen */
	bool conn_keep_alive;    /* "Connection: keep-alive" seen */
	bool have_length;        /* a Content-Length header was seen */
	uint64_t content_length; /* its value */
	unsigned chunked;        /* "chunked" codings in Transfer-Encoding */
	bool other_coding;       /* a transfer coding other than chunked */
	bool have_coding;        /* a Transfer-Encoding header was seen */
	bool expect_continue;    /* "Expect: 100-continue" */
	bool expect_other;       /* an expectation we cannot meet */
};

/* Calls `element` on each element of a comma-separated header value, with
 * the spaces around it trimmed; empty elements are skipped (RFC 9110 5.6.1). */
static void each_element(const char *v, size_t n, struct head_state *st,
			 void (*element)(const char *e, size_t len, struct head_state *st))
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
		if (end > start)
			element(v + start, end - start, st);
	}
}

/* One option of the Connection header. */
static void connection_option(const char *e, size_t n, struct head_state *st)
{
	if (equals_nocase(e, n, "close"))
		st->conn_close = true;
	else if (equals_nocase(e, n, "keep-alive"))
		st->conn_keep_alive = true;
}

/* One transfer coding of Transfer-Encoding (parameters make it unknown). */
static void transfer_coding(const char *e, size_t n, struct head_state *st)
{
	if (equals_nocase(e, n, "chunked"))
		st->chunked++;
	else
		st->other_coding = true;
}

/* One header line (no line end). Returns 0 or the error status. */
static int parse_header(const char *line, size_t n, struct head_state *st)
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
		each_element(line + vs, ve - vs, st, connection_option);
	} else if (equals_nocase(line, i, "content-length")) {
		uint64_t value = 0;
		size_t k;

		if (ve == vs)
			return 400;
		for (k = vs; k < ve; k++) {
			uint64_t digit;

			if (line[k] < '0' || line[k] > '9')
				return 400;
			digit = (uint64_t)(line[k] - '0');
			/* Refused before the arithmetic, which could otherwise
			 * wrap past 2^64 to a small length: the body would end
			 * early and its rest be read as requests. */
			if (value > (HTTP_LENGTH_MAX - digit) / 10)
				return 413;
			value = value * 10 + digit;
		}
		if (st->have_length && st->content_length != value)
			return 400;
		st->have_length = true;
		st->content_length = value;
	} else if (equals_nocase(line, i, "transfer-encoding")) {
		st->have_coding = true;
		each_element(line + vs, ve - vs, st, transfer_coding);
	} else if (equals_nocase(line, i, "expect")) {
		if (equals_nocase(line + vs, ve - vs, "100-continue"))
			st->expect_continue = true;
		else
			st->expect_other = true;
	}
	return 0;
}

/*
 * The body's framing from the headers (RFC 9112 6.1-6.3). Returns 0 or the
 * error status. Content-Length beside Transfer-Encoding is refused: the two
 * let a proxy and a server disagree on where the message ends.
 */
static int framing(const struct head_state *st, struct http_request *req)
{
	if (st->have_coding) {
		if (req->minor == 0 || st->have_length)
			return 400; /* HTTP/1.0 has no transfer codings */
		if (st->other_coding)
			return 501;
		if (st->chunked != 1)
			return 400; /* chunked twice, or an empty list */
		req->framing = HTTP_BODY_CHUNKED;
	} else if (st->have_length && st->content_length > 0) {
		req->framing = HTTP_BODY_LENGTH;
		req->content_length = st->content_length;
	}
	/* An HTTP/1.0 client does not know 100 (RFC 9110 10.1.1): ignored. */
	if (st->expect_other && req->minor == 1)
		return 417;
	req->expect_continue = st->expect_continue && req->minor == 1 &&
			       req->framing != HTTP_BODY_NONE;
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
			err = parse_header(buf + pos, end - pos, &st);
		}
		if (err)
			return fail(req, err);
		pos = nl + 1;
		line_no++;
	}

	{
		int err = framing(&st, req);
		if (err)
			return fail(req, err);
	}
	req->length = pos;
	if (req->minor == 1)
		req->keep_alive = !st.conn_close;
	else
		req->keep_alive = st.conn_keep_alive && !st.conn_close;
	return HTTP_COMPLETE;
}

/* N of a /bytes/N path (the part after HTTP_BYTES_PATH): decimal digits
 * only, at most HTTP_BYTES_MAX; false otherwise. */
static bool bytes_size(const char *s, size_t n, uint64_t *size)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 10)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*size = v;
	return v <= HTTP_BYTES_MAX;
}

/* The fixed body that goes with an error status. */
static const char *error_body(int status)
{
	switch (status) {
	case 400: return "bad request\n";
	case 404: return "not found\n";
	case 405: return "method not allowed\n";
	case 408: return "request timeout\n";
	case 413: return "request body too large\n";
	case 417: return "expectation failed\n";
	case 431: return "request header too large\n";
	case 501: return "transfer coding not implemented\n";
	default: return "error\n";
	}
}

void http_route(const struct http_request *req, int status, bool allow_shutdown,
		struct http_response *resp)
{
	const size_t bytes_len = sizeof(HTTP_BYTES_PATH) - 1;
	uint64_t size;

	memset(resp, 0, sizeof(*resp));
	resp->send_body = true;
	if (req == NULL) {
		resp->status = status;
		resp->body = error_body(status);
		resp->body_len = strlen(resp->body);
		return;
	}
	resp->keep_alive = req->keep_alive;
	resp->send_body = req->method != HTTP_HEAD;
	resp->status = 200;
	if (req->method == HTTP_OTHER) {
		resp->status = 405;
	} else if (equals(req->path, req->path_len, "/")) {
		resp->body = HTTP_HELLO_BODY;
		resp->body_len = HTTP_HELLO_LEN;
	} else if (req->path_len > bytes_len && memcmp(req->path, HTTP_BYTES_PATH, bytes_len) == 0 &&
		   bytes_size(req->path + bytes_len, req->path_len - bytes_len, &size)) {
		resp->body = NULL; /* http_pattern() */
		resp->body_len = size;
	} else if (allow_shutdown && equals(req->path, req->path_len, HTTP_SHUTDOWN_PATH)) {
		resp->body = "shutting down\n";
		resp->body_len = strlen(resp->body);
		resp->shutdown = true;
		resp->keep_alive = false;
	} else {
		resp->status = 404;
	}
	if (resp->status != 200) {
		resp->body = error_body(resp->status);
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
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 417: return "Expectation Failed";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
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

static size_t put_uint(char *out, size_t at, uint64_t v)
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
	at = put_uint(out, at, (uint64_t)status);
	at = put(out, at, " ");
	at = put(out, at, http_reason(status));
	at = put(out, at, "\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: ");
	at = put_uint(out, at, resp->body_len);
	at = put(out, at, "\r\n");
	if (status == 405)
		at = put(out, at, "Allow: GET, HEAD, POST\r\n");
	if (!resp->keep_alive)
		at = put(out, at, "Connection: close\r\n");
	else if (minor == 0)
		at = put(out, at, "Connection: keep-alive\r\n");
	at = put(out, at, "\r\n");
	return at;
}

/* ---- the /bytes pattern ------------------------------------------------------ */

/* The 16 bytes of line `line`: its offset (line * 16) in 15 hex digits, '\n'. */
static void pattern_line(uint64_t line, char text[16])
{
	static const char hex[] = "0123456789abcdef";
	uint64_t offset = line * 16;
	int i;

	for (i = 14; i >= 0; i--) {
		text[i] = hex[offset & 15];
		offset >>= 4;
	}
	text[15] = '\n';
}

/* The next line's text from this one's: the offset grows by 0x10, so the
 * count starts at the second digit from the right (the last is always 0). */
static void pattern_next(char text[16])
{
	int i;

	for (i = 13; i >= 0; i--) {
		if (text[i] == 'f') {
			text[i] = '0'; /* and carry */
		} else {
			text[i] = text[i] == '9' ? 'a' : (char)(text[i] + 1);
			return;
		}
	}
}

void http_pattern(uint64_t offset, char *out, size_t len)
{
	size_t skip = (size_t)(offset % 16);
	char text[16];

	pattern_line(offset / 16, text);
	while (len) {
		size_t n = 16 - skip < len ? 16 - skip : len;

		memcpy(out, text + skip, n);
		out += n;
		len -= n;
		skip = 0;
		pattern_next(text);
	}
}
