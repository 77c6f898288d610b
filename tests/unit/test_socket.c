/*
 * test_socket.c: the socket layer (net/socket.c) with its default switches,
 * over real lwIP on an in-memory loopback interface (tests/unit/socket/):
 * connect/accept and addresses, partial reads and writes, writev as one
 * segment, backlog overflow, end of stream and resets, poll readiness and
 * its interruption by a signal, the
 * egress list's invariants, TCP_NODELAY, the exit's drain. Time is fake: it
 * moves only when a blocking call parks or a test lets it pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <cmocka.h>
#include "kernel/kernel.h"
#include "kernel/percpu.h"
#include "lwip/tcp.h"
#include "net/net_internal.h"
#include "tests/unit/socket/harness.h"

/* Write `len` bytes of the pattern stream from offset `from`, all of it. */
static void write_pattern(int fd, size_t from, size_t len)
{
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(from + i);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	free(buf);
}

/* Non-blocking writes of the pattern stream from `*off` until EAGAIN; returns
 * whether some write took only part of what it was given. */
static bool write_until_full(int fd, size_t *off)
{
	uint8_t buf[5000];
	bool partial = false;
	for (;;) {
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = pattern(*off + i);
		ssize_t n = write(fd, buf, sizeof buf);
		if (n < 0) {
			assert_int_equal(errno, EAGAIN);
			return partial;
		}
		assert_true(n > 0);
		partial |= (size_t)n < sizeof buf;
		*off += (size_t)n;
		assert_true(*off < 1024 * 1024); /* the window must close some time */
	}
}

static short poll_one(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r = poll(&p, 1, 0);
	assert_true(r == 0 || r == 1);
	return p.revents;
}

static void abort_peer(int fd)
{
	struct tcp_pcb *pcb = probe_pcb(fd);
	assert_non_null(pcb);
	tcp_abort(pcb); /* sends a RST; the socket learns of it through on_err */
}

/* 1. connect/accept, data both ways, local and peer addresses. */
static void test_connect_accept(void **state)
{
	(void)state;
	int l = listen_on(7001, 4);
	int c = connect_to(7001);
	struct sockaddr_in from;
	socklen_t fromlen = sizeof from;
	int s = accept(l, (struct sockaddr *)&from, &fromlen);
	assert_true(s >= 0);
	assert_int_equal(fromlen, sizeof from);

	struct sockaddr_in cl, cp, sl, sp;
	socklen_t len = sizeof cl;
	assert_int_equal(getsockname(c, (struct sockaddr *)&cl, &len), 0);
	len = sizeof cp;
	assert_int_equal(getpeername(c, (struct sockaddr *)&cp, &len), 0);
	len = sizeof sl;
	assert_int_equal(getsockname(s, (struct sockaddr *)&sl, &len), 0);
	len = sizeof sp;
	assert_int_equal(getpeername(s, (struct sockaddr *)&sp, &len), 0);
	in_addr_t me = inet_addr(LOOPNET_ADDR);
	assert_int_equal(cl.sin_family, AF_INET);
	assert_int_equal(cp.sin_addr.s_addr, me);
	assert_int_equal(ntohs(cp.sin_port), 7001);
	assert_int_equal(ntohs(sl.sin_port), 7001);
	assert_int_equal(sl.sin_addr.s_addr, me);
	assert_int_equal(sp.sin_addr.s_addr, cl.sin_addr.s_addr);
	assert_int_equal(sp.sin_port, cl.sin_port);
	assert_int_equal(from.sin_port, cl.sin_port); /* accept's address is the peer's */
	assert_int_not_equal(ntohs(cl.sin_port), 7001);
	/* A listener has no peer. */
	len = sizeof sp;
	assert_int_equal(getpeername(l, (struct sockaddr *)&sp, &len), -1);
	assert_int_equal(errno, ENOTCONN);

	write_pattern(c, 0, 3000);
	read_pattern(s, 0, 3000);
	/* More than a window: a blocking write that fits the buffers returns
	 * (nothing else could make it return in one thread). */
	write_pattern(s, 3000, 40000);
	read_pattern(c, 3000, 40000);
	write_pattern(c, 43000, 10);
	read_pattern(s, 43000, 10);
}

/* 1b. a non-blocking connect completes through poll; a port nobody listens
 * on refuses. */
static void test_connect_nonblocking_and_refused(void **state)
{
	(void)state;
	int l = listen_on(7015, 4);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(c >= 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7015),
				   .sin_addr.s_addr = inet_addr(LOOPNET_ADDR) };
	assert_int_equal(connect(c, (struct sockaddr *)&sin, sizeof sin), -1);
	assert_int_equal(errno, EINPROGRESS);
	struct pollfd p = { .fd = c, .events = POLLOUT };
	assert_int_equal(poll(&p, 1, 1000), 1);
	assert_int_equal(p.revents, POLLOUT);
	int err = -1;
	socklen_t len = sizeof err;
	assert_int_equal(getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len), 0);
	assert_int_equal(err, 0);
	assert_true(accept(l, NULL, NULL) >= 0);

	int r = socket(AF_INET, SOCK_STREAM, 0);
	sin.sin_port = htons(7016);
	assert_int_equal(connect(r, (struct sockaddr *)&sin, sizeof sin), -1);
	assert_int_equal(errno, ECONNREFUSED);
}

/* 2. partial reads; partial writes on a non-blocking socket whose buffers
 * fill, EAGAIN, then progress once the peer reads. */
static void test_partial_io(void **state)
{
	(void)state;
	int c, s;
	make_pair(7002, &c, &s);
	write_pattern(s, 0, 1000);
	pump();
	int avail = -1;
	assert_int_equal(ioctl(c, FIONREAD, &avail), 0);
	assert_int_equal(avail, 1000);
	uint8_t buf[300];
	size_t off = 0;
	for (int i = 0; i < 3; i++) { /* 3 x 300, then the last 100 */
		assert_int_equal(read(c, buf, sizeof buf), (ssize_t)sizeof buf);
		for (size_t j = 0; j < sizeof buf; j++)
			assert_int_equal(buf[j], pattern(off + j));
		off += sizeof buf;
		assert_int_equal(ioctl(c, FIONREAD, &avail), 0);
		assert_int_equal(avail, 1000 - (int)off);
	}
	assert_int_equal(read(c, buf, sizeof buf), 100);
	for (size_t j = 0; j < 100; j++)
		assert_int_equal(buf[j], pattern(off + j));
	set_nonblock(c);
	assert_int_equal(read(c, buf, sizeof buf), -1);
	assert_int_equal(errno, EAGAIN);

	/* The server does not read: the client's writes fill the peer's window,
	 * lwIP's send buffer and the socket's, then fail with EAGAIN. */
	size_t sent = 0;
	bool partial = write_until_full(c, &sent);
	assert_true(partial); /* 5000-byte writes do not divide the buffers */
	assert_true(sent > TCP_WND + 16 * 1024);
	pump();
	settle_ms(1000);
	assert_int_equal(write(c, buf, 1), -1);
	assert_int_equal(errno, EAGAIN);
	/* The server reads a window's worth: the client can write again. */
	read_pattern(s, 0, TCP_WND);
	settle_ms(500);
	size_t more = sent;
	write_until_full(c, &more);
	assert_true(more > sent);
	/* Everything arrives, in order. */
	set_nonblock(s);
	read_pattern(s, TCP_WND, more - TCP_WND);
	assert_int_equal(read(s, buf, sizeof buf), -1);
	assert_int_equal(errno, EAGAIN);
}

/* 3. writev of a head and a body leaves as one TCP segment. */
static void test_writev_one_segment(void **state)
{
	(void)state;
	int c, s;
	make_pair(7003, &c, &s);
	uint8_t head[120], body[700];
	fill_pattern(head, sizeof head, 0);
	fill_pattern(body, sizeof body, sizeof head);
	struct iovec iov[2] = { { head, sizeof head }, { body, sizeof body } };
	seglog_clear();
	assert_int_equal(writev(c, iov, 2), (ssize_t)(sizeof head + sizeof body));
	settle_ms(1000); /* delayed ACKs, Nagle: whatever would follow has followed */
	uint16_t port = local_port_of(c);
	assert_int_equal(seglog_data_from(port), 1);
	for (size_t i = 0; i < seglog_count(); i++)
		if (seglog_get(i)->src_port == port && seglog_get(i)->payload_len)
			assert_int_equal(seglog_get(i)->payload_len, sizeof head + sizeof body);
	read_pattern(s, 0, sizeof head + sizeof body);
}

/* 3b. A write and the close right after it leave as one segment: the write
 * is sent at the app's next call into the network, which is the close, so
 * the FIN rides on the data. */
static void test_write_then_close_one_segment(void **state)
{
	(void)state;
	int c, s;
	make_pair(7018, &c, &s);
	uint16_t port = local_port_of(s);
	seglog_clear();
	write_pattern(s, 0, 200);
	assert_int_equal(seglog_data_from(port), 0); /* nothing left yet */
	assert_int_equal(close(s), 0);
	assert_int_equal(seglog_data_from(port), 1);
	assert_int_equal(seglog_flags_from(port, 0x01 /* FIN */), 1);
	for (size_t i = 0; i < seglog_count(); i++)
		if (seglog_get(i)->src_port == port && seglog_get(i)->payload_len)
			assert_true(seglog_get(i)->flags & 0x01);
	read_pattern(c, 0, 200);
	uint8_t b;
	assert_int_equal(read(c, &b, 1), 0);
	close(c);
}

/* 4. backlog overflow: a connection beyond the backlog is not reset. The
 * segment that would complete its handshake is dropped (counted) while every
 * entry is taken, its client's request with it; once accept() frees entries,
 * the copies the client and lwIP send again complete it, and its request is
 * read whole. Nothing is reset. */
static void test_backlog_overflow(void **state)
{
	(void)state;
	int l = listen_on(7004, 2);
	uint64_t overflows = net_socket_counters.backlog_overflows, accepted = net_socket_counters.accepted;
	uint64_t deferred = net_counters.tcp_handshake_deferred;
	int c[4];
	for (int i = 0; i < 4; i++)
		c[i] = connect_to(7004); /* the client's side completes at the SYN-ACK */
	pump();
	assert_int_equal(net_socket_counters.accepted - accepted, 2);
	assert_true(net_counters.tcp_handshake_deferred - deferred >= 2);
	for (int i = 2; i < 4; i++) {
		assert_false(poll_one(c[i], POLLIN) & (POLLHUP | POLLERR));
		write_pattern(c[i], 0, 500); /* sent into a handshake that waits */
	}
	pump();
	for (int i = 0; i < 2; i++) {
		int s = accept(l, NULL, NULL);
		assert_true(s >= 0);
		write_pattern(c[i], 0, 500);
		read_pattern(s, 0, 500);
		write_pattern(s, 500, 500);
		read_pattern(c[i], 500, 500);
		close(s);
	}
	settle_ms(10000); /* retransmissions: the waiting handshakes complete */
	assert_int_equal(net_socket_counters.accepted - accepted, 4);
	int late[2]; /* in the order their handshakes completed, which may not be c[2], c[3] */
	for (int k = 0; k < 2; k++) {
		late[k] = accept(l, NULL, NULL);
		assert_true(late[k] >= 0);
		read_pattern(late[k], 0, 500);
		write_pattern(late[k], 500, 500);
	}
	for (int i = 2; i < 4; i++)
		read_pattern(c[i], 500, 500);
	for (int k = 0; k < 2; k++)
		close(late[k]);
	assert_int_equal(net_socket_counters.backlog_overflows - overflows, 0);
	set_nonblock(l);
	assert_int_equal(accept(l, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
}

/* 5a. the peer closes: the rest of the data, then end of file. */
static void test_peer_close_eof(void **state)
{
	(void)state;
	int c, s;
	make_pair(7005, &c, &s);
	write_pattern(s, 0, 2000);
	assert_int_equal(close(s), 0);
	pump();
	read_pattern(c, 0, 2000);
	char b;
	assert_int_equal(read(c, &b, 1), 0);
	assert_int_equal(read(c, &b, 1), 0);
}

/* 5b. the peer aborts: read reports ECONNRESET once, then end of file, and
 * writes fail with EPIPE; a write that comes first gets the ECONNRESET. */
static void test_peer_reset(void **state)
{
	(void)state;
	int c, s;
	make_pair(7006, &c, &s);
	uint64_t resets = net_socket_counters.resets;
	abort_peer(s);
	pump();
	assert_true(net_socket_counters.resets - resets >= 1);
	char b = 'x';
	assert_int_equal(read(c, &b, 1), -1);
	assert_int_equal(errno, ECONNRESET);
	assert_int_equal(read(c, &b, 1), 0);
	assert_int_equal(write(c, &b, 1), -1);
	assert_int_equal(errno, EPIPE);

	int c2, s2;
	make_pair(7007, &c2, &s2);
	abort_peer(s2);
	pump();
	assert_int_equal(write(c2, &b, 1), -1);
	assert_int_equal(errno, ECONNRESET);
	assert_int_equal(write(c2, &b, 1), -1);
	assert_int_equal(errno, EPIPE);
	int err = -1;
	socklen_t len = sizeof err;
	assert_int_equal(getsockopt(c2, SOL_SOCKET, SO_ERROR, &err, &len), 0);
	assert_int_equal(err, 0); /* reported once */
}

/* 5b'. SO_LINGER on with a zero timeout: close() resets at once and frees
 * the socket, whatever is queued; also when the peer's window is shut and
 * zero-window probes have gone out (lwIP would reset one past what such a
 * peer accepts, and the peer would keep the connection). Only the zero
 * timeout is offered. */
static void test_linger_zero_resets(void **state)
{
	(void)state;
	int c, s;
	make_pair(7009, &c, &s);
	uint16_t port = local_port_of(s);
	struct linger lg = { 1, 5 };
	socklen_t len = sizeof lg;
	assert_int_equal(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), -1);
	assert_int_equal(errno, EINVAL);
	lg.l_linger = 0;
	assert_int_equal(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
	memset(&lg, 0, sizeof lg);
	assert_int_equal(getsockopt(s, SOL_SOCKET, SO_LINGER, &lg, &len), 0);
	assert_int_equal(lg.l_onoff, 1);
	assert_int_equal(lg.l_linger, 0);
	/* The client reads nothing: its window shuts, our side probes it. */
	set_nonblock(s);
	size_t sent = 0;
	write_until_full(s, &sent);
	settle_ms(8000);
	uint64_t open_before = probe_sockets_open(), resets = net_socket_counters.resets;
	seglog_clear();
	assert_int_equal(close(s), 0);
	assert_int_equal(probe_sockets_open(), open_before - 1); /* freed now */
	pump();
	assert_int_equal(seglog_flags_from(port, SEG_RST), 1);
	assert_int_equal(seglog_flags_from(port, SEG_FIN), 0);
	assert_true(net_socket_counters.resets - resets >= 1); /* the client took it */
	assert_null(probe_pcb(c));
}

/* 5c'. The peer closes first, and our answer, written just before our
 * close(), is lost on the wire, and so is its first retransmission. The
 * closing connection (LAST_ACK) lives until a retransmission gets through,
 * however long lwIP's own LAST_ACK limit (2 * TCP_MSL) is, and then ends. */
static void test_last_ack_retransmits(void **state)
{
	(void)state;
	int c, s;
	make_pair(7090, &c, &s);
	uint16_t port = local_port_of(s);
	assert_int_equal(shutdown(c, SHUT_WR), 0);
	pump();
	char b;
	assert_int_equal(read(s, &b, 1), 0); /* the client's FIN */
	uint64_t renewed = net_counters.tcp_last_ack_renewed;
	loopnet_lose_data_from(port, 2);
	write_pattern(s, 0, 100);
	assert_int_equal(close(s), 0);
	settle_ms(20000);
	assert_int_equal(seglog_data_from(port), 3); /* sent, lost twice, then through */
	assert_true(net_counters.tcp_last_ack_renewed > renewed);
	set_nonblock(c);
	read_pattern(c, 0, 100);
	assert_int_equal(read(c, &b, 1), 0);
	assert_null(probe_pcb(c));
}

/* 5c. close() with output still buffered (the peer's window is shut):
 * everything is delivered, then the FIN, and the socket is freed. */
static void test_close_delivers_buffered(void **state)
{
	(void)state;
	int c, s;
	make_pair(7008, &c, &s);
	uint16_t port = local_port_of(c);
	set_nonblock(c);
	size_t sent = 0;
	write_until_full(c, &sent);
	assert_true(probe_tx_len(c) > 0); /* some of it is still in our buffer */
	uint64_t open_before = probe_sockets_open();
	seglog_clear();
	assert_int_equal(close(c), 0);
	pump();
	assert_int_equal(probe_sockets_open(), open_before); /* kept until it drains */
	assert_int_equal(seglog_flags_from(port, SEG_FIN | SEG_RST), 0);
	read_pattern(s, 0, sent);
	char b;
	assert_int_equal(read(s, &b, 1), 0);
	assert_int_equal(seglog_flags_from(port, SEG_FIN), 1);
	assert_int_equal(seglog_flags_from(port, SEG_RST), 0);
	/* The FIN comes after the last data. */
	size_t last_data = 0, fin = 0;
	for (size_t i = 0; i < seglog_count(); i++) {
		const struct seg_rec *r = seglog_get(i);
		if (r->src_port != port)
			continue;
		if (r->payload_len)
			last_data = i;
		if (r->flags & SEG_FIN)
			fin = i;
	}
	assert_true(fin >= last_data);
	assert_int_equal(probe_sockets_open(), open_before - 1);
}

/* 6a. a listener is readable exactly while connections are pending. */
static void test_poll_listener(void **state)
{
	(void)state;
	int l = listen_on(7009, 4);
	assert_int_equal(poll_one(l, POLLIN), 0);
	int c1 = connect_to(7009);
	pump();
	assert_int_equal(poll_one(l, POLLIN), POLLIN);
	int c2 = connect_to(7009);
	pump();
	assert_int_equal(poll_one(l, POLLIN), POLLIN);
	int s1 = accept(l, NULL, NULL);
	assert_true(s1 >= 0);
	assert_int_equal(poll_one(l, POLLIN), POLLIN); /* c2 still waits */
	int s2 = accept(l, NULL, NULL);
	assert_true(s2 >= 0);
	assert_int_equal(poll_one(l, POLLIN), 0);
	(void)c1;
	(void)c2;
}

/* 6b. a connection: POLLOUT when connected, POLLIN with data or end of file,
 * POLLHUP once reset; a poll with a timeout returns 0 when the time passes. */
static void test_poll_connection(void **state)
{
	(void)state;
	int c, s;
	make_pair(7010, &c, &s);
	short ev = POLLIN | POLLOUT | POLLRDHUP;
	assert_int_equal(poll_one(c, ev), POLLOUT);
	write_pattern(s, 0, 10);
	pump();
	assert_int_equal(poll_one(c, ev), POLLIN | POLLOUT);
	assert_int_equal(poll_one(c, POLLOUT), POLLOUT); /* only what was asked */
	read_pattern(c, 0, 10);
	assert_int_equal(poll_one(c, ev), POLLOUT);

	uint64_t t0 = fake_now_ns;
	struct pollfd p = { .fd = c, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 250), 0);
	assert_int_equal(p.revents, 0);
	assert_true(fake_now_ns - t0 >= 250 * 1000000ULL);
	assert_true(fake_now_ns - t0 < 1000 * 1000000ULL);

	assert_int_equal(shutdown(s, SHUT_WR), 0);
	pump();
	assert_int_equal(poll_one(c, ev), POLLIN | POLLOUT | POLLRDHUP);
	assert_int_equal(poll_one(c, POLLIN) & POLLHUP, 0);
	abort_peer(s);
	pump();
	assert_true(poll_one(c, POLLIN) & POLLHUP);
	assert_true(poll_one(c, 0) & POLLHUP); /* reported even when not asked */
	assert_int_equal(poll_one(c, POLLOUT) & POLLOUT, 0);
}

/* 6c. a signal whose handler runs while poll() waits ends it with EINTR
 * (how the console's Ctrl-C stops httpd); one that comes with readiness
 * leaves the readiness to report, and a zero timeout runs the handler and
 * reports as usual. */
static void test_poll_interrupted(void **state)
{
	(void)state;
	int c, s;
	make_pair(7016, &c, &s);
	struct pollfd p = { .fd = c, .events = POLLIN };
	uint64_t t0 = fake_now_ns;
	fake_wake_at_ns = t0 + 100 * 1000000ULL; /* the UART's interrupt */
	fake_signal_at_ns = fake_wake_at_ns;
	errno = 0;
	assert_int_equal(poll(&p, 1, 1000), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(fake_signals_run, 1);
	assert_true(fake_now_ns - t0 >= 100 * 1000000ULL);
	assert_true(fake_now_ns - t0 < 1000 * 1000000ULL);

	write_pattern(s, 0, 10);
	pump();
	fake_signal_at_ns = fake_now_ns;
	assert_int_equal(poll(&p, 1, 1000), 1);
	assert_int_equal(p.revents, POLLIN);
	assert_int_equal(fake_signals_run, 2);
	read_pattern(c, 0, 10);

	fake_signal_at_ns = fake_now_ns;
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(fake_signals_run, 3);
}

/* 7a. a send blocked on the window leaves the egress list legitimately and
 * on_sent brings it back when the peer reads (pump() checks after every step
 * that no socket with bytes to send is off the list otherwise). */
static void test_egress_relisted_by_ack(void **state)
{
	(void)state;
	int c, s;
	make_pair(7011, &c, &s);
	set_nonblock(c);
	size_t sent = 0;
	write_until_full(c, &sent);
	pump();
	assert_true(probe_tx_len(c) > 0);
	assert_false(probe_on_egress(c)); /* waiting for the window, not listed */
	uint64_t marks = net_socket_counters.egress_marks;
	read_pattern(s, 0, sent); /* each read opens the window; ACKs re-list c */
	assert_true(net_socket_counters.egress_marks > marks);
	assert_int_equal(probe_tx_len(c), 0);
}

/* Stream `total` bytes of the pattern from c to s, non-blocking on both
 * sides, the writer giving `wchunk` bytes a turn, the reader taking at most
 * `rchunk`; checks every byte. */
static void stream(int c, int s, size_t total, size_t wchunk, size_t rchunk)
{
	static uint8_t buf[64 * 1024];
	size_t sent = 0, got = 0;
	assert_true(wchunk <= sizeof buf && rchunk <= sizeof buf);
	set_nonblock(c);
	set_nonblock(s);
	for (int turns = 0; got < total; turns++) {
		assert_true(turns < 100000);
		bool moved = false;
		if (sent < total) {
			size_t n = total - sent < wchunk ? total - sent : wchunk;
			fill_pattern(buf, n, sent);
			ssize_t w = write(c, buf, n);
			assert_true(w > 0 || errno == EAGAIN);
			if (w > 0)
				sent += (size_t)w, moved = true;
		}
		pump();
		ssize_t r = read(s, buf, rchunk);
		assert_true(r > 0 || errno == EAGAIN);
		for (ssize_t i = 0; i < r; i++)
			assert_int_equal(buf[i], pattern(got + (size_t)i));
		if (r > 0)
			got += (size_t)r, moved = true;
		if (!moved)
			settle_ms(10); /* a delayed ACK */
	}
}

static void close_pair(int c, int s)
{
	assert_int_equal(close(c), 0);
	assert_int_equal(close(s), 0);
	settle_ms(1000);
}

/* 7c. a full send buffer doubles while lwIP could take all of it, up to
 * SO_SNDBUF's maximum; not once the application chose its size, nor on a
 * machine short of memory. */
static int sndbuf_of(int fd)
{
	int v = 0;
	socklen_t len = sizeof v;
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &len), 0);
	return v;
}

static void test_send_buffer_grows(void **state)
{
	(void)state;
	int c, s, start;
	make_pair(7015, &c, &s);
	start = sndbuf_of(c);
	uint64_t grown = net_socket_counters.tx_grown;
	stream(c, s, 512 * 1024, 65536, 8192); /* the writer hands over more than the buffer */
	assert_true(sndbuf_of(c) > start);
	assert_true(sndbuf_of(c) <= 256 * 1024);
	assert_true(net_socket_counters.tx_grown > grown);
	close_pair(c, s);

	make_pair(7016, &c, &s); /* the application's choice stands */
	assert_int_equal(setsockopt(c, SOL_SOCKET, SO_SNDBUF, &start, sizeof start), 0);
	grown = net_socket_counters.tx_grown;
	stream(c, s, 512 * 1024, 65536, 8192); /* the writer hands over more than the buffer */
	assert_int_equal(sndbuf_of(c), start);
	close_pair(c, s);

	host_heap_free = 64 * 1024; /* a small machine */
	make_pair(7017, &c, &s);
	stream(c, s, 512 * 1024, 65536, 8192); /* the writer hands over more than the buffer */
	assert_int_equal(sndbuf_of(c), start);
	assert_int_equal(net_socket_counters.tx_grown, grown);
	close_pair(c, s);
	host_heap_free = 1ULL << 30;
}

/* 7b. reading and polling never mark a socket for egress. */
static void test_read_poll_no_mark(void **state)
{
	(void)state;
	int l = listen_on(7012, 4);
	int c = connect_to(7012);
	int s = accept(l, NULL, NULL);
	write_pattern(s, 0, 100);
	pump();
	uint64_t marks = net_socket_counters.egress_marks;
	int avail;
	for (int i = 0; i < 5; i++) {
		poll_one(c, POLLIN | POLLOUT);
		poll_one(l, POLLIN);
		poll_one(s, POLLIN);
	}
	assert_int_equal(ioctl(c, FIONREAD, &avail), 0);
	read_pattern(c, 0, 100);
	struct pollfd p = { .fd = c, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 50), 0);
	pump();
	assert_int_equal(net_socket_counters.egress_marks, marks);
	assert_false(probe_on_egress(c));
	assert_false(probe_on_egress(s));
	/* Writing does mark (so the counter can move at all). */
	write_pattern(c, 0, 1);
	assert_int_equal(net_socket_counters.egress_marks, marks + 1);
	read_pattern(s, 0, 1);
}

/* 8. TCP_NODELAY round trip, and it reaches the pcb (Nagle off/on). */
static void test_nodelay(void **state)
{
	(void)state;
	int c, s;
	make_pair(7013, &c, &s);
	int v = -1;
	socklen_t len = sizeof v;
	assert_int_equal(getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
	assert_int_equal(v, 0);
	assert_false(tcp_nagle_disabled(probe_pcb(c)));
	v = 1;
	assert_int_equal(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v), 0);
	v = -1;
	len = sizeof v;
	assert_int_equal(getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
	assert_int_equal(v, 1);
	assert_int_equal(len, sizeof v);
	assert_true(tcp_nagle_disabled(probe_pcb(c)));
	v = 0;
	assert_int_equal(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v), 0);
	v = -1;
	assert_int_equal(getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
	assert_int_equal(v, 0);
	assert_false(tcp_nagle_disabled(probe_pcb(c)));

	/* Set on a listener, inherited by what it accepts. */
	int l = listen_on(7014, 4);
	v = 1;
	assert_int_equal(setsockopt(l, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v), 0);
	v = -1;
	assert_int_equal(getsockopt(l, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
	assert_int_equal(v, 1);
	int c2 = connect_to(7014);
	int s2 = accept(l, NULL, NULL);
	assert_true(s2 >= 0);
	assert_true(tcp_nagle_disabled(probe_pcb(s2)));
	v = -1;
	assert_int_equal(getsockopt(s2, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
	assert_int_equal(v, 1);
	(void)c2;
}

/* 9. With Nagle on, a second small write behind unacknowledged data waits for
 * the peer's ACK and is counted as a Nagle hold; with TCP_NODELAY it leaves at
 * once. Both arrive in the end. */
static void test_nagle_hold_counted(void **state)
{
	(void)state;
	int c, s;
	make_pair(7015, &c, &s);
	uint64_t holds = net_socket_counters.nagle_holds;
	write_pattern(c, 0, 10);
	executor_poll(); /* the app's next call into the network: it leaves */
	write_pattern(c, 10, 10);
	executor_poll();
	assert_int_equal(net_socket_counters.nagle_holds, holds + 1);
	read_pattern(s, 0, 20);

	int v = 1;
	assert_int_equal(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v), 0);
	holds = net_socket_counters.nagle_holds;
	write_pattern(c, 20, 10);
	executor_poll();
	write_pattern(c, 30, 10);
	executor_poll();
	assert_int_equal(net_socket_counters.nagle_holds, holds);
	read_pattern(s, 20, 20);
}

/* 10. exit() drains: it polls until the device has taken every frame it was
 * given; a device that takes nothing holds the exit for the bound (200 ms),
 * no more, and is counted; with nothing outstanding it does not poll. */
static void test_exit_drain(void **state)
{
	(void)state;
	int c, s;
	make_pair(7014, &c, &s); /* the network is up: the executor has its source */
	uint64_t polls = percpu_host.stats.exit_drain_polls, gave_up = percpu_host.stats.exit_drain_gave_up;
	uint64_t t0 = fake_now_ns;
	fake_tx_busy_looks = 3;
	executor_drain();
	assert_int_equal(percpu_host.stats.exit_drain_polls - polls, 3);
	assert_int_equal(percpu_host.stats.exit_drain_gave_up, gave_up);
	assert_int_equal(fake_now_ns - t0, 3 * 1000000ULL);

	fake_tx_busy_looks = UINT64_MAX;
	t0 = fake_now_ns;
	polls = percpu_host.stats.exit_drain_polls;
	executor_drain();
	assert_int_equal(percpu_host.stats.exit_drain_gave_up, gave_up + 1);
	assert_int_equal(fake_now_ns - t0, 200 * 1000000ULL); /* one look per fake ms */
	assert_int_equal(percpu_host.stats.exit_drain_polls - polls, 199);

	fake_tx_busy_looks = 0;
	polls = percpu_host.stats.exit_drain_polls;
	executor_drain();
	assert_int_equal(percpu_host.stats.exit_drain_polls, polls);
	assert_int_equal(percpu_host.stats.exit_drain_gave_up, gave_up + 1);
	(void)c, (void)s;
}

#define T(f) cmocka_unit_test_setup_teardown(f, socket_test_setup, socket_test_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_connect_accept),
		T(test_nagle_hold_counted),
		T(test_connect_nonblocking_and_refused),
		T(test_partial_io),
		T(test_writev_one_segment),
		T(test_write_then_close_one_segment),
		T(test_backlog_overflow),
		T(test_peer_close_eof),
		T(test_peer_reset),
		T(test_last_ack_retransmits),
		T(test_close_delivers_buffered),
		T(test_linger_zero_resets),
		T(test_poll_listener),
		T(test_poll_connection),
		T(test_poll_interrupted),
		T(test_egress_relisted_by_ack),
		T(test_send_buffer_grows),
		T(test_read_poll_no_mark),
		T(test_nodelay),
		T(test_exit_drain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
