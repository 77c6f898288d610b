/*
 * conn.c: one connection's I/O: read request heads and bodies, answer them,
 * linger on the way out.
 *
 * Offers conn_new(), conn_events(), conn_sending(), conn_service() and
 * conn_fail() (see httpd.h). Sockets are non-blocking and nothing here ever
 * waits: what a write cannot take stays in out[] (at most a head and a fixed
 * body) or, for the generated /bytes body, is simply made again from its
 * offset when the socket is writable (the pattern is a function of the
 * offset, so nothing is buffered per connection). A fixed answer's head and
 * body leave in ONE writev of two iovecs (the call the unikernel turns into
 * one TCP send). While an answer is pending, nothing more is read: a client
 * that pipelines faster than it reads is held back by its own TCP window.
 * Request bodies are read and thrown away as they come, through their
 * framing (body.c); the answer follows the whole body.
 */
#define _POSIX_C_SOURCE 200809L

#include "httpd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* Bytes of a body one connection may read, or of a generated answer write,
 * in one loop turn: one fast client must not hold up the others. */
#define TURN_BUDGET (256 * 1024)

static bool would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

struct conn *conn_new(int fd, int64_t now)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->fd = fd;
	c->phase = PHASE_WAIT;
	c->fresh = true;
	c->accepted_at = c->last_active = c->head_start = c->progress_at = now;
	return c;
}

bool conn_sending(const struct conn *c)
{
	return c->out_off < c->out_len || c->gen_off < c->gen_end;
}

/* Whether c takes input now. Bodies are read even while a 100 Continue is
 * still on its way; requests are not read while an answer is. */
static bool can_read(const struct conn *c)
{
	if (c->peer_eof || c->close_after)
		return false;
	return c->phase == PHASE_BODY || (!conn_sending(c) && c->phase != PHASE_LINGER);
}

short conn_events(const struct conn *c)
{
	short ev = 0;

	if (c->phase == PHASE_LINGER)
		return POLLIN;
	if (conn_sending(c))
		ev |= POLLOUT;
	if (can_read(c))
		ev |= POLLIN;
	return ev;
}

/* n more bytes of the body or the answer went through. */
static void progressed(struct server *srv, struct conn *c, size_t n)
{
	c->progress_bytes += n;
	if (c->progress_bytes >= PROGRESS_BYTES) {
		c->progress_at = srv->now;
		c->progress_bytes = 0;
	}
}

/* Enters a phase whose progress the stall deadline watches. */
static void begin_moving(struct server *srv, struct conn *c, enum conn_phase phase)
{
	c->phase = phase;
	c->progress_at = srv->now;
	c->progress_bytes = 0;
}

/* Drops the first n bytes of in[]. */
static void consume(struct conn *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

/*
 * Puts bytes behind what out[] already holds. What is queued (the rest of a
 * 100 Continue, a head of at most HTTP_HEAD_MAX, a fixed body) fits in
 * PENDING_MAX by the sizes http.h and httpd.h set; the check holds in every
 * build so that a change to one of them cannot write past out[]. false: the
 * bytes do not fit, and the caller ends the connection.
 */
static bool queue_out(struct conn *c, const char *p, size_t n)
{
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_len > PENDING_MAX || n > PENDING_MAX - c->out_len) {
		fprintf(stderr, "httpd: %zu bytes of answer do not fit behind %zu pending: "
			"connection closed\n", n, c->out_len);
		return false;
	}
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
	return true;
}

/* Wrote n bytes. */
static void wrote(struct server *srv, struct conn *c, size_t n)
{
	c->last_active = srv->now;
	progressed(srv, c, n);
}

/* Sends what is pending: out[], then the generated body, until the socket
 * takes no more or the turn's budget is spent. -1: the connection broke. */
static int flush_output(struct server *srv, struct conn *c)
{
	size_t budget = TURN_BUDGET;

	while (c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

		if (n < 0)
			return would_block() ? 0 : -1;
		c->out_off += (size_t)n;
		wrote(srv, c, (size_t)n);
	}
	c->out_off = c->out_len = 0;
	while (c->gen_off < c->gen_end && budget) {
		uint64_t left = c->gen_end - c->gen_off;
		size_t len = left < SCRATCH_LEN ? (size_t)left : SCRATCH_LEN;
		ssize_t n;

		if (len > budget)
			len = budget;
		http_pattern(c->gen_off, srv->scratch, len);
		n = write(c->fd, srv->scratch, len);
		if (n < 0)
			return would_block() ? 0 : -1;
		c->gen_off += (uint64_t)n;
		budget -= (size_t)n;
		wrote(srv, c, (size_t)n);
		if ((size_t)n < len)
			break; /* the socket is full: POLLOUT says when to go on */
	}
	return 0;
}

/*
 * Starts sending resp: its head and the start of its body in one writev
 * (the whole of a fixed body). What the socket does not take waits in out[],
 * or, of a generated body, in gen_off. -1: the connection broke.
 */
static int start_answer(struct server *srv, struct conn *c, const struct http_response *resp,
			int minor)
{
	char head[HTTP_HEAD_MAX];
	struct iovec iov[2];
	size_t hlen = http_head(resp, minor, head), blen = 0, sent;
	bool generated = resp->send_body && resp->body == NULL;
	ssize_t n;
	int cnt = 1;

	begin_moving(srv, c, PHASE_SEND);
	if (!resp->keep_alive)
		c->close_after = true;
	if (resp->shutdown)
		srv->stopping = true; /* once this answer is out (httpd.c) */
	c->gen_off = c->gen_end = 0;
	if (generated)
		c->gen_end = resp->body_len;
	if (resp->send_body)
		blen = generated ? (resp->body_len < SCRATCH_LEN ? (size_t)resp->body_len : SCRATCH_LEN)
				 : (size_t)resp->body_len;
	if (conn_sending(c) && c->out_len) {
		/* A 100 Continue is still going out: queue behind it. */
		if (!queue_out(c, head, hlen))
			return -1;
		if (blen && !generated && !queue_out(c, resp->body, blen))
			return -1;
		return flush_output(srv, c);
	}
	iov[0].iov_base = head;
	iov[0].iov_len = hlen;
	if (blen) {
		if (generated)
			http_pattern(0, srv->scratch, blen);
		iov[1].iov_base = generated ? srv->scratch : (void *)resp->body;
		iov[1].iov_len = blen;
		cnt = 2;
	}
	n = writev(c->fd, iov, cnt);
	if (n < 0) {
		if (!would_block())
			return -1;
		n = 0;
	}
	sent = (size_t)n;
	if (sent)
		wrote(srv, c, sent);
	if (sent < hlen) {
		if (!queue_out(c, head + sent, hlen - sent))
			return -1;
		sent = 0;
	} else {
		sent -= hlen;
	}
	if (generated)
		c->gen_off = sent; /* the rest is made again from there */
	else if (sent < blen && !queue_out(c, resp->body + sent, blen - sent))
		return -1;
	if (c->gen_off < c->gen_end && sent == blen && blen)
		return flush_output(srv, c); /* a long body: go on while the socket takes it */
	return 0;
}

/* Answers an error (or a timeout) in place of the request and closes after:
 * what follows in in[] cannot be framed, so it is dropped. */
static int fail_request(struct server *srv, struct conn *c, int status)
{
	struct http_response resp;

	http_route(NULL, status, false, &resp);
	c->in_len = 0;
	c->must_linger = true;
	return start_answer(srv, c, &resp, 1);
}

/* One complete head at the front of in[]: its answer, or its body first. */
static int take_request(struct server *srv, struct conn *c, const struct http_request *req)
{
	struct http_response resp;

	c->fresh = false;
	http_route(req, 0, srv->allow_shutdown, &resp);
	consume(c, req->length);
	if (req->framing == HTTP_BODY_NONE)
		return start_answer(srv, c, &resp, req->minor);
	c->resp = resp;
	c->minor = req->minor;
	http_body_start(&c->body, req);
	begin_moving(srv, c, PHASE_BODY);
	/* The client waits (about a second, for curl) unless told to go on;
	 * when body bytes came already, it did not wait (RFC 9110 10.1.1). */
	if (req->expect_continue && c->in_len == 0) {
		if (!queue_out(c, HTTP_CONTINUE, HTTP_CONTINUE_LEN))
			return -1;
		return flush_output(srv, c);
	}
	return 0;
}

/* Passes in[] through the body's framing. 1: the body ended and its answer
 * started; 0: more to come; -1: broken. */
static int read_body(struct server *srv, struct conn *c)
{
	size_t used;
	int status;
	enum http_body_result r = http_body_feed(&c->body, c->in, c->in_len, &used, &status);

	consume(c, used);
	progressed(srv, c, used);
	if (r == HTTP_BODY_BAD)
		return fail_request(srv, c, status) < 0 ? -1 : 1;
	if (r == HTTP_BODY_MORE)
		return c->peer_eof ? -1 : 0; /* a body cut short cannot be answered */
	return start_answer(srv, c, &c->resp, c->minor) < 0 ? -1 : 1;
}

/* Works through in[]: heads, bodies and answers, as far as the output lets
 * (one answer at a time). -1: the connection broke. */
static int serve(struct server *srv, struct conn *c)
{
	for (;;) {
		struct http_request req;
		enum http_parse_result r;

		if (c->phase == PHASE_SEND) {
			if (conn_sending(c) || c->close_after)
				break;
			c->phase = PHASE_WAIT; /* the answer is out: next request */
		}
		if (c->phase == PHASE_BODY) {
			int done = read_body(srv, c);
			if (done <= 0)
				return done;
			continue;
		}
		if (c->in_len == 0)
			break;
		if (c->phase == PHASE_WAIT) {
			c->phase = PHASE_HEAD;
			c->head_start = c->fresh ? c->accepted_at : srv->now;
		}
		r = http_parse(c->in, c->in_len, REQUEST_MAX, &req);
		if (r == HTTP_INCOMPLETE)
			break;
		if ((r == HTTP_ERROR ? fail_request(srv, c, req.status) : take_request(srv, c, &req)) < 0)
			return -1;
	}
	/* A client that stopped sending gets no more answers after these. */
	if (c->peer_eof && !conn_sending(c))
		c->close_after = true;
	return 0;
}

/* Reads what fits into in[]. >0: bytes read; 0: none (end of file or
 * nothing there yet); -1: the connection broke. */
static ssize_t read_some(struct server *srv, struct conn *c)
{
	ssize_t n;

	if (c->in_len == REQUEST_MAX)
		return 0; /* a full buffer holds a complete head or an error */
	n = read(c->fd, c->in + c->in_len, REQUEST_MAX - c->in_len);
	if (n > 0) {
		c->in_len += (size_t)n;
		c->last_active = srv->now;
		return n;
	}
	if (n == 0)
		c->peer_eof = true;
	else if (!would_block())
		return -1;
	return 0;
}

/* A closing connection: throw input away until the client's FIN. false:
 * done (FIN, error), drop it. Its deadline is guard.c's. */
static bool linger(struct conn *c)
{
	char sink[4096];
	ssize_t n = read(c->fd, sink, sizeof(sink));

	return n > 0 || (n < 0 && would_block());
}

/*
 * After any work on c: once an answer that ends the connection is out,
 * close. A close with input still unread would answer the client with a
 * reset that can destroy our last answer in flight, so such a close first
 * shuts our side and reads until the client's FIN (bounded by LINGER_MS).
 * false: drop it now.
 */
static bool settle(struct server *srv, struct conn *c)
{
	if (!c->close_after || conn_sending(c) || c->phase == PHASE_BODY)
		return true;
	if ((c->must_linger || c->in_len) && !c->peer_eof) {
		c->phase = PHASE_LINGER;
		c->linger_until = srv->now + LINGER_MS;
		c->in_len = 0;
		shutdown(c->fd, SHUT_WR);
		return true;
	}
	return false;
}

bool conn_service(struct server *srv, struct conn *c, short revents)
{
	size_t budget = TURN_BUDGET;

	if (c->phase == PHASE_LINGER)
		return linger(c);
	if (revents & (POLLERR | POLLNVAL))
		return false;
	if (conn_sending(c) && flush_output(srv, c) < 0)
		return false;
	if (can_read(c) && (revents & (POLLIN | POLLHUP))) {
		/* Bodies are read on while the socket has more, within a budget. */
		for (;;) {
			ssize_t n = read_some(srv, c);

			if (n < 0 || serve(srv, c) < 0)
				return false;
			if (n == 0 || c->phase != PHASE_BODY || (size_t)n >= budget || !can_read(c))
				break;
			budget -= (size_t)n;
		}
	} else if (serve(srv, c) < 0) {
		return false;
	}
	return settle(srv, c);
}

bool conn_fail(struct server *srv, struct conn *c, int status)
{
	if (fail_request(srv, c, status) < 0)
		return false;
	return settle(srv, c);
}
