/*
 * test.c: one iperf3 test's sockets (see test.h).
 *
 * The data move as iperf3's own server moves them, so both guests run the
 * same pattern of calls: a receiving stream reads up to one block (len bytes)
 * per turn, read after read until the block is whole or the socket is empty;
 * a sending stream writes up to MULTISEND blocks per turn, each in writes of
 * at most the rest of that block. With -n (or -k) the sender stops at exactly
 * that many bytes over all streams.
 *
 * Counts are exact: after TEST_END the client sends its own count of every
 * stream, and a receiving stream is read on until it has them all (or the
 * client closes it, or nothing moves for the idle timeout). Our results
 * then report what arrived, which the client prints beside what it sent.
 */
#define _POSIX_C_SOURCE 200809L

#include "test.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Blocks a sending stream writes per turn: iperf3's multisend. */
#define MULTISEND 10

static bool would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

bool test_begin(struct test *t, int fd, const char *cookie, const char *peer, int64_t now)
{
	int one = 1;

	t->sess = malloc(sizeof(*t->sess));
	if (t->sess == NULL)
		return false;
	session_start(t->sess, cookie);
	t->ctl_fd = fd;
	t->ctl_eof = false;
	t->number++;
	snprintf(t->peer, sizeof(t->peer), "%s", peer);
	t->nstreams = 0;
	t->buf = NULL;
	t->limit = UINT64_MAX;
	t->sent = t->received = t->peer_sent = 0;
	t->start_ns = t->end_ns = 0;
	t->progress_ns = now;
	t->paced = false;
	/* Control messages are single bytes: Nagle would hold them back. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return true;
}

bool test_wants_stream(const struct test *t, const char *cookie)
{
	return t->sess && t->sess->phase == SESSION_STREAMS && t->nstreams < t->sess->params.parallel &&
	       memcmp(cookie, t->sess->cookie, IPERF_COOKIE_LEN) == 0;
}

void test_add_stream(struct test *t, int fd, int64_t now)
{
	const struct iperf_params *p = &t->sess->params;
	struct stream *st = &t->streams[t->nstreams];

	assert(t->sess->phase == SESSION_STREAMS && t->nstreams < p->parallel);
	/* iperf3 numbers its streams 1, 3, 4, 5, ... (the first is special
	 * in its iperf_add_stream), on both sides in connection order. */
	st->id = t->nstreams == 0 ? 1 : t->nstreams + 2;
	st->fd = fd;
	st->bytes = 0;
	st->last_ns = 0;
	st->block_left = 0;
	t->nstreams++;
	if (p->nodelay) {
		int one = 1;
		if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
			perror("iperf: TCP_NODELAY");
	}
	if (p->window) {
		int w = (int)p->window;
		/* Set on the connection, not the listener: this server keeps one
		 * listener for every test. */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &w, sizeof(w)) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &w, sizeof(w)) < 0)
			perror("iperf: socket buffer size");
	}
	t->progress_ns = now;
	if (t->nstreams == p->parallel) {
		session_streams_ready(t->sess);
		t->start_ns = now;
		t->cpu0 = clock();
		times(&t->tms0);
	}
}

static void close_stream(struct stream *st)
{
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
}

/* The parameters are in: the block the streams move, the sending limit. */
static bool prepare(struct test *t)
{
	const struct iperf_params *p = &t->sess->params;
	uint32_t x = 2463534242u;

	t->buf = malloc(p->len);
	if (t->buf == NULL)
		return false;
	/* Not all zeros, so nothing on the way can shrink it (xorshift32). */
	for (size_t i = 0; i < p->len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		t->buf[i] = (char)x;
	}
	t->limit = UINT64_MAX;
	if (p->bytes)
		t->limit = p->bytes;
	else if (p->blocks)
		t->limit = p->blocks > UINT64_MAX / p->len ? UINT64_MAX : p->blocks * p->len;
	if (!t->quiet) {
		printf("iperf: test %d from %s: %s, %d stream%s, len %zu, num %llu, blocks %llu, time %lld s%s%s\n",
		       t->number, t->peer, p->reverse ? "download (-R)" : "upload", p->parallel,
		       p->parallel == 1 ? "" : "s", p->len, (unsigned long long)p->bytes,
		       (unsigned long long)p->blocks, (long long)p->time_secs, p->nodelay ? ", nodelay" : "",
		       p->bandwidth ? ", paced" : "");
		fflush(stdout);
	}
	return true;
}

/* The client's counts are in: how far the receiving streams must go. The
 * total, not each stream's: should two streams ever be numbered apart from
 * the client's order, the per-stream figures swap but nothing waits for ever. */
static void set_target(struct test *t)
{
	t->peer_sent = 0;
	for (size_t k = 0; k < t->sess->npeer; k++)
		t->peer_sent += t->sess->peer[k].bytes;
}

/* Acts on the control messages read so far. */
static void run_session(struct test *t, int64_t now)
{
	struct session *s = t->sess;

	for (;;) {
		switch (session_step(s)) {
		case SESSION_WAIT:
			if (s->in_len == SESSION_IN_MAX)
				session_fail(s, WHY_BAD_STATE); /* talking where it should listen */
			else if (t->ctl_eof)
				session_eof(s);
			return;
		case SESSION_PARAMS_OK:
			if (!prepare(t))
				session_fail(s, WHY_IO);
			break;
		case SESSION_TEST_END:
			t->end_ns = now;
			/* A sender's count is final now; close() still sends what
			 * the socket holds, then the FIN. */
			if (s->params.reverse)
				for (int i = 0; i < t->nstreams; i++)
					close_stream(&t->streams[i]);
			break;
		case SESSION_PEER_RESULTS:
			set_target(t);
			break;
		case SESSION_ENDED:
			return;
		}
	}
}

static void read_control(struct test *t, int64_t now)
{
	struct session *s = t->sess;

	while (!t->ctl_eof && s->in_len < SESSION_IN_MAX) {
		ssize_t n = read(t->ctl_fd, s->in + s->in_len, SESSION_IN_MAX - s->in_len);

		if (n > 0) {
			s->in_len += (size_t)n;
			t->progress_ns = now;
		} else if (n == 0) {
			t->ctl_eof = true;
		} else {
			if (!would_block())
				t->ctl_eof = true; /* a reset: the same as a close here */
			break;
		}
	}
}

static void flush_control(struct test *t)
{
	struct session *s = t->sess;

	while (s->out_len) {
		ssize_t n = write(t->ctl_fd, s->out, s->out_len);

		if (n < 0) {
			if (!would_block())
				session_fail(s, WHY_IO);
			return;
		}
		session_sent(s, (size_t)n);
	}
}

/* Bytes each stream may have sent by now under -b (UINT64_MAX: no pace). */
static uint64_t paced_allowance(const struct test *t, int64_t now)
{
	uint64_t bits = t->sess->params.bandwidth;
	uint64_t ms = (uint64_t)(now - t->start_ns) / 1000000;

	/* A rate so high the product overflows is no pace at all. */
	if (bits == 0 || (ms && bits > UINT64_MAX / ms))
		return UINT64_MAX;
	return bits * ms / 8000;
}

static void send_stream(struct test *t, struct stream *st, int64_t now)
{
	size_t len = t->sess->params.len;
	uint64_t allowed = paced_allowance(t, now);

	for (int blocks = 0; blocks < MULTISEND && t->sent < t->limit && st->bytes < allowed;) {
		size_t n;
		ssize_t w;

		if (st->block_left == 0)
			st->block_left = len;
		n = st->block_left;
		if (n > t->limit - t->sent)
			n = (size_t)(t->limit - t->sent);
		w = write(st->fd, t->buf + (len - st->block_left), n);
		if (w <= 0) {
			if (w < 0 && !would_block())
				close_stream(st); /* the client went: its count stays */
			return;
		}
		assert((size_t)w <= n);
		st->bytes += (uint64_t)w;
		t->sent += (uint64_t)w;
		st->block_left -= (size_t)w;
		assert(t->sent <= t->limit && st->block_left < len);
		st->last_ns = t->progress_ns = now;
		if (st->block_left == 0)
			blocks++;
		if ((size_t)w < n)
			return; /* the socket is full */
	}
}

static void receive_stream(struct test *t, struct stream *st, int64_t now)
{
	size_t len = t->sess->params.len, got = 0;

	while (got < len) {
		ssize_t r = read(st->fd, t->buf, len - got);

		if (r > 0) {
			got += (size_t)r;
			st->bytes += (uint64_t)r;
			t->received += (uint64_t)r;
			st->last_ns = t->progress_ns = now;
		} else if (r == 0 || !would_block()) {
			close_stream(st); /* the client closed it (or reset it): all in */
			return;
		} else {
			return;
		}
	}
}

/* Poll events a stream waits for now; *paced when only its pace holds it. */
static short stream_events(const struct test *t, const struct stream *st, int64_t now, bool *paced)
{
	enum session_phase ph = t->sess->phase;

	if (st->fd < 0)
		return 0;
	if (t->sess->params.reverse) {
		if (ph != SESSION_RUNNING || t->sent >= t->limit)
			return 0;
		if (st->bytes >= paced_allowance(t, now)) {
			*paced = true;
			return 0;
		}
		return POLLOUT;
	}
	if (ph == SESSION_RUNNING || ph == SESSION_RESULTS || (ph == SESSION_DRAIN && t->received < t->peer_sent))
		return POLLIN;
	return 0;
}

size_t test_pollset(struct test *t, struct pollfd *pfds, int64_t now, int *timeout_ms)
{
	struct session *s = t->sess;
	int64_t idle_left = t->idle_ns - (now - t->progress_ns);
	int ms = idle_left <= 0 ? 0 : (int)(idle_left / 1000000) + 1;
	size_t n = 0;

	t->paced = false;
	pfds[n].fd = t->ctl_fd;
	pfds[n].events = (short)((s->out_len ? POLLOUT : 0) |
				 (!t->ctl_eof && s->in_len < SESSION_IN_MAX ? POLLIN : 0));
	n++;
	for (int i = 0; i < t->nstreams; i++, n++) {
		pfds[n].fd = t->streams[i].fd;
		pfds[n].events = stream_events(t, &t->streams[i], now, &t->paced);
	}
	if (t->paced && ms > 1)
		ms = 1; /* iperf3's pacing timer ticks every millisecond too */
	if (*timeout_ms < 0 || ms < *timeout_ms)
		*timeout_ms = ms;
	return n;
}

/* Whether the receiving streams have all the client says it sent (or are
 * all closed: then nothing more can come). */
static bool drained(const struct test *t)
{
	if (t->sess->params.reverse || t->received >= t->peer_sent)
		return true;
	for (int i = 0; i < t->nstreams; i++)
		if (t->streams[i].fd >= 0)
			return false;
	return true;
}

/* CPU use since the start as % x 10^6 of the time since, split by times(). */
static void cpu_use(const struct test *t, int64_t now, struct iperf_report *r)
{
	struct tms tms1;
	clock_t c1 = clock();
	int64_t wall_ms = (now - t->start_ns) / 1000000;
	int64_t cpu_ns = (int64_t)(c1 - t->cpu0) * (1000000000 / CLOCKS_PER_SEC);
	long du, ds;

	times(&tms1);
	r->cpu_total_micro = wall_ms > 0 ? cpu_ns * 100 / wall_ms : 0;
	du = (long)(tms1.tms_utime - t->tms0.tms_utime);
	ds = (long)(tms1.tms_stime - t->tms0.tms_stime);
	r->cpu_user_micro = du + ds > 0 ? r->cpu_total_micro * du / (du + ds) : r->cpu_total_micro;
	r->cpu_system_micro = r->cpu_total_micro - r->cpu_user_micro;
}

static void finish(struct test *t, int64_t now)
{
	struct iperf_stream_result res[IPERF_MAX_STREAMS];
	struct iperf_report r;
	bool reverse = t->sess->params.reverse;

	for (int i = 0; i < t->nstreams; i++) {
		const struct stream *st = &t->streams[i];

		res[i].id = st->id;
		res[i].bytes = st->bytes;
		/* The sender's time ends at TEST_END, the receiver's with its last byte. */
		res[i].end_ns = reverse ? t->end_ns - t->start_ns : st->last_ns ? st->last_ns - t->start_ns : 0;
	}
	memset(&r, 0, sizeof(r));
	r.sender = reverse;
	r.nstreams = (size_t)t->nstreams;
	r.streams = res;
	cpu_use(t, now, &r);
	session_finish(t->sess, &r);
}

void test_service(struct test *t, const struct pollfd *pfds, int64_t now)
{
	const struct pollfd *ctl = &pfds[0];

	if (ctl->revents & (POLLIN | POLLHUP | POLLERR))
		read_control(t, now);
	run_session(t, now);
	for (int i = 0; i < t->nstreams && !session_ended(t->sess); i++) {
		struct stream *st = &t->streams[i];
		short re = pfds[1 + i].revents;

		if (st->fd < 0 || !re)
			continue;
		if (re & POLLNVAL)
			st->fd = -1;
		else if (!t->sess->params.reverse)
			receive_stream(t, st, now); /* data, end of file or an error: read says which */
		else if (re & POLLOUT)
			send_stream(t, st, now);
		else
			close_stream(st); /* a sender hung up on: its count stays */
	}
	if (t->sess->phase == SESSION_DRAIN && drained(t))
		finish(t, now);
	if (!session_ended(t->sess) && now - t->progress_ns >= t->idle_ns)
		session_fail(t->sess, WHY_TIMEOUT);
	flush_control(t);
}

bool test_over(const struct test *t)
{
	return t->sess && session_ended(t->sess);
}

void test_abort(struct test *t, enum session_why why)
{
	if (t->sess)
		session_fail(t->sess, why);
}

enum session_why test_end(struct test *t)
{
	struct session *s = t->sess;
	enum session_why why = s->phase == SESSION_OVER ? WHY_NONE : s->why;

	flush_control(t); /* a SERVER_ERROR, or our last byte: best effort */
	if (why == WHY_NONE) {
		const char *dir = s->params.reverse ? "sent" : "received";
		uint64_t total = 0;

		for (int i = 0; i < t->nstreams; i++)
			total += t->streams[i].bytes;
		if (!t->quiet) {
			int64_t last = s->params.reverse ? t->end_ns : t->start_ns, ns;

			if (!s->params.reverse) /* the receiver's time ends with its last byte */
				for (int i = 0; i < t->nstreams; i++)
					last = t->streams[i].last_ns > last ? t->streams[i].last_ns : last;
			ns = last - t->start_ns;

			printf("iperf: test %d done: %s %llu bytes in %lld.%03lld s on %d stream%s:", t->number, dir,
			       (unsigned long long)total, (long long)(ns / 1000000000),
			       (long long)(ns % 1000000000 / 1000000), t->nstreams, t->nstreams == 1 ? "" : "s");
			for (int i = 0; i < t->nstreams; i++)
				printf(" %d:%llu", t->streams[i].id, (unsigned long long)t->streams[i].bytes);
			printf("\n");
		}
	} else {
		printf("iperf: test %d from %s ended: %s", t->number, t->peer, session_why_name(why));
		if (why == WHY_REFUSED)
			printf(" (iperf3 error %d sent)", s->error);
		printf("\n");
	}
	fflush(stdout);
	for (int i = 0; i < t->nstreams; i++)
		close_stream(&t->streams[i]);
	close(t->ctl_fd);
	free(t->buf);
	free(s);
	t->sess = NULL;
	t->buf = NULL;
	t->nstreams = 0;
	return why;
}
