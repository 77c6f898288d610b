/*
 * iperf.c: an iperf3 server (TCP), for Debian's unmodified `iperf3 -c`.
 *
 * One test at a time, as iperf3's own server: a single-threaded poll() loop
 * over non-blocking sockets, like httpd. Every connection to the port opens
 * with a 37-byte cookie; until it is read the connection waits here, among
 * the pending ones. Then it is the control connection of a new test (no test
 * running), a data connection of the running one (its cookie), or turned away
 * with ACCESS_DENIED (a test is running). test.c runs the test; session.c
 * speaks the control protocol; proto.c and json.c read and write its
 * messages.
 *
 *   iperf [-a ADDR] [-p PORT] [-b BACKLOG] [-I IDLE_SECS] [-1] [-s] [-q]
 *     -a ADDR       IPv4 address to listen on (default 0.0.0.0)
 *     -p PORT       TCP port (default 5201, iperf3's; 0 picks one and prints it)
 *     -b BACKLOG    listen() backlog (default 64)
 *     -I SECS       drop a test, or a connection that has not sent its cookie,
 *                   when nothing moved for SECS (default 30)
 *     -1            serve one test, then exit (iperf3 -s -1)
 *     -s            a connection sending IPERF_SHUTDOWN_COOKIE stops the
 *                   server (exit 0): for the tests, which stop it over the
 *                   network; any client can send it, so it is off unless
 *                   asked for
 *     -q            quiet: print only failures and the counters at exit
 * SIGTERM and SIGINT stop it too (exit 0); in the unikernel, Ctrl-C on the
 * console raises SIGINT (tools/serve, make run).
 *
 * Each test ends with one line giving the server's own byte counts ("test N
 * done: received|sent BYTES bytes ... on N streams: ID:BYTES ..."), or the
 * reason it failed; at exit a line of counters, bad input included. Malformed
 * input (a bad cookie, bad JSON, a state out of order, a huge length) closes
 * that connection and is counted; the server serves the next client.
 *
 * Plain POSIX, no #ifdef for either guest: glibc on Linux, newlib and the
 * unikernel's socket layer there.
 */
#define _POSIX_C_SOURCE 200809L

#include "test.h"
#include "apps/common/common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Connections whose cookie is still coming, at most; more wait in the
 * backlog. Each that sends nothing is dropped after the idle timeout. */
#define PENDING_MAX 64

/* A connection before its cookie is whole. */
struct pending {
	int fd;                        /* its socket, non-blocking */
	size_t got;                    /* cookie bytes read */
	int64_t since_ns;              /* accepted at */
	char peer[32];                 /* its address, for the log */
	char cookie[IPERF_COOKIE_LEN]; /* what came of it */
};

/* What went wrong how often: tests that failed, connections turned away. */
struct counters {
	unsigned long done;              /* tests that ended as they should */
	unsigned long refused;           /* parameters we do not offer: SERVER_ERROR sent */
	unsigned long bad_cookie;        /* a first 37 bytes that are no iperf3 cookie */
	unsigned long bad_length;        /* a JSON length over IPERF_JSON_MAX */
	unsigned long bad_json;          /* a JSON message unreadable or without its fields */
	unsigned long bad_state;         /* a state byte out of order */
	unsigned long busy;              /* ACCESS_DENIED: another test was running */
	unsigned long timed_out;         /* nothing moved for the idle timeout */
	unsigned long closed_early;      /* the client left before the end */
	unsigned long client_terminated; /* CLIENT_TERMINATE (Ctrl-C at the client) */
	unsigned long io_errors;         /* a socket call failed, or memory ran out */
};

struct server {
	int listen_fd;                      /* the listening socket */
	struct pending pending[PENDING_MAX]; /* connections before their cookie */
	size_t npending;                    /* entries in use, packed at the front */
	struct test test;                   /* the running test (test.sess NULL: none) */
	struct counters cnt;                /* see struct counters */
	struct pollfd pfds[1 + PENDING_MAX + 1 + IPERF_MAX_STREAMS]; /* poll set, rebuilt each turn */
	int64_t idle_ns;                    /* -I */
	bool one_off;                       /* -1 */
	bool allow_shutdown;                /* -s */
	bool quiet;                         /* -q */
	const char *stopping;               /* why the server stops (-1 done, the shutdown
	                                       cookie); NULL while it serves */
};

static volatile sig_atomic_t got_signal; /* SIGTERM or SIGINT arrived */

static void on_signal(int sig)
{
	got_signal = sig;
}

static void usage(void)
{
	fprintf(stderr, "usage: iperf [-a ADDR] [-p PORT] [-b BACKLOG] [-I IDLE_SECS] [-1] [-s] [-q]\n");
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Counts how a test ended. */
static void count_end(struct server *srv, enum session_why why)
{
	struct counters *c = &srv->cnt;

	switch (why) {
	case WHY_NONE: c->done++; break;
	case WHY_BAD_LENGTH: c->bad_length++; break;
	case WHY_BAD_JSON: c->bad_json++; break;
	case WHY_BAD_STATE: c->bad_state++; break;
	case WHY_REFUSED: c->refused++; break;
	case WHY_CLIENT_TERMINATE: c->client_terminated++; break;
	case WHY_CLOSED_EARLY: c->closed_early++; break;
	case WHY_TIMEOUT: c->timed_out++; break;
	case WHY_IO: c->io_errors++; break;
	case WHY_STOPPED: break; /* the server's own doing */
	}
}

static void end_test(struct server *srv)
{
	count_end(srv, test_end(&srv->test));
	if (srv->one_off)
		srv->stopping = "one test";
}

/* Removes entry i, keeping the others in the order they were accepted: a
 * test's data connections must reach it in the order the client made them,
 * for both sides number the streams by that order. */
static void drop_pending(struct server *srv, size_t i, bool close_it)
{
	if (close_it)
		close(srv->pending[i].fd);
	memmove(&srv->pending[i], &srv->pending[i + 1], (srv->npending - i - 1) * sizeof(srv->pending[0]));
	srv->npending--;
}

/* Accepts every connection waiting, while there is room for them. */
static void accept_all(struct server *srv, int64_t now)
{
	while (srv->npending < PENDING_MAX) {
		struct sockaddr_in sa;
		socklen_t salen = sizeof(sa);
		struct pending *p;
		int fd = accept(srv->listen_fd, (struct sockaddr *)&sa, &salen);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
				perror("iperf: accept");
			return;
		}
		if (set_nonblocking(fd) < 0) {
			perror("iperf: O_NONBLOCK");
			close(fd);
			srv->cnt.io_errors++;
			continue;
		}
		p = &srv->pending[srv->npending++];
		memset(p, 0, sizeof(*p));
		p->fd = fd;
		p->since_ns = now;
		if (!inet_ntop(AF_INET, &sa.sin_addr, p->peer, sizeof(p->peer)))
			snprintf(p->peer, sizeof(p->peer), "?");
	}
}

/* Tells a connection a test is running, and closes it. */
static void deny(struct server *srv, int fd)
{
	signed char b = IPERF_ACCESS_DENIED;

	if (write(fd, &b, 1) < 0) {
		/* It may be gone already: nothing to tell it then. */
	}
	close(fd);
	srv->cnt.busy++;
}

/* A pending connection's cookie is whole: decide what it is. */
static void classify(struct server *srv, size_t i, int64_t now)
{
	struct pending *p = &srv->pending[i];
	struct test *t = &srv->test;

	if (srv->allow_shutdown && iperf_cookie_is_shutdown(p->cookie)) {
		if (!srv->quiet)
			printf("iperf: shutdown requested by %s\n", p->peer);
		srv->stopping = "shutdown request";
		drop_pending(srv, i, true);
		return;
	}
	if (!iperf_cookie_valid(p->cookie)) {
		printf("iperf: connection from %s closed: bad cookie\n", p->peer);
		srv->cnt.bad_cookie++;
		drop_pending(srv, i, true);
		return;
	}
	if (test_wants_stream(t, p->cookie)) {
		test_add_stream(t, p->fd, now);
		drop_pending(srv, i, false);
		return;
	}
	if (t->sess || srv->stopping) {
		deny(srv, p->fd);
		drop_pending(srv, i, false);
		return;
	}
	if (!test_begin(t, p->fd, p->cookie, p->peer, now)) {
		fprintf(stderr, "iperf: out of memory for a test\n");
		srv->cnt.io_errors++;
		drop_pending(srv, i, true);
		return;
	}
	drop_pending(srv, i, false);
}

/* Reads what came of a pending connection's cookie; true when the entry
 * left the list (gone before its cookie was whole). */
static bool read_pending(struct server *srv, size_t i)
{
	struct pending *p = &srv->pending[i];
	ssize_t n = read(p->fd, p->cookie + p->got, IPERF_COOKIE_LEN - p->got);

	if (n > 0) {
		p->got += (size_t)n;
		return false;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return false;
	/* A port scan, a probe, a client that changed its mind. */
	if (p->got)
		srv->cnt.closed_early++;
	drop_pending(srv, i, true);
	return true;
}

/*
 * Classifies the connections whose cookie is whole, oldest first. A data
 * connection of the running test waits while an older connection's cookie
 * is still coming: that one may be the test's previous stream, delayed (a
 * lost segment), and both sides number the streams in connection order.
 */
static void classify_ready(struct server *srv, int64_t now)
{
	bool older_incomplete = false;

	for (size_t i = 0; i < srv->npending;) {
		struct pending *p = &srv->pending[i];

		if (p->got < IPERF_COOKIE_LEN) {
			older_incomplete = true;
			i++;
		} else if (older_incomplete && test_wants_stream(&srv->test, p->cookie)) {
			i++;
		} else {
			classify(srv, i, now);
		}
	}
}

/* Drops pending connections that sent no whole cookie in time. */
static void expire_pending(struct server *srv, int64_t now)
{
	for (size_t i = srv->npending; i-- > 0;)
		if (now - srv->pending[i].since_ns >= srv->idle_ns) {
			srv->cnt.timed_out++;
			drop_pending(srv, i, true);
		}
}

static int run(struct server *srv)
{
	while (!got_signal && !(srv->stopping && srv->test.sess == NULL)) {
		struct test *t = &srv->test;
		int64_t now = now_ns();
		size_t nfds = 0, first_pending, npolled = srv->npending, test_base = 0;
		bool listening = srv->npending < PENDING_MAX && !srv->stopping;
		int timeout = -1, n;

		if (listening) {
			srv->pfds[nfds].fd = srv->listen_fd;
			srv->pfds[nfds].events = POLLIN;
			nfds++;
		}
		first_pending = nfds;
		for (size_t i = 0; i < srv->npending; i++, nfds++) {
			srv->pfds[nfds].fd = srv->pending[i].fd;
			srv->pfds[nfds].events = srv->pending[i].got < IPERF_COOKIE_LEN ? POLLIN : 0;
		}
		if (srv->npending)
			timeout = (int)(srv->idle_ns / 1000000 / 4) + 1; /* coarse: timeouts only */
		if (t->sess) {
			test_base = nfds;
			nfds += test_pollset(t, &srv->pfds[nfds], now, &timeout);
		}
		n = poll(srv->pfds, (nfds_t)nfds, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("iperf: poll");
			return 1;
		}
		now = now_ns();
		if (t->sess) {
			test_service(t, &srv->pfds[test_base], now);
			if (test_over(t))
				end_test(srv);
		}
		/* Entry i of the list goes with poll entry k; a dropped entry
		 * moves the rest down one. */
		for (size_t i = 0, k = first_pending; k < first_pending + npolled; k++)
			if (!srv->pfds[k].revents || srv->pending[i].got == IPERF_COOKIE_LEN ||
			    !read_pending(srv, i))
				i++;
		classify_ready(srv, now);
		expire_pending(srv, now);
		if (listening && (srv->pfds[0].revents & POLLIN))
			accept_all(srv, now);
	}
	return 0;
}

static void print_counters(const struct server *srv)
{
	const struct counters *c = &srv->cnt;

	printf("iperf: tests %d, done %lu, refused %lu, client terminated %lu; bad cookie %lu, bad length %lu, "
	       "bad json %lu, bad state %lu, busy %lu, timed out %lu, closed early %lu, socket errors %lu\n",
	       srv->test.number, c->done, c->refused, c->client_terminated, c->bad_cookie, c->bad_length,
	       c->bad_json, c->bad_state, c->busy, c->timed_out, c->closed_early, c->io_errors);
}

int main(int argc, char **argv)
{
	const char *addr = "0.0.0.0";
	long port = IPERF_PORT, backlog = 64, idle = 30;
	static struct server srv; /* large: not on the stack */
	struct sigaction sa;
	int opt, rc;

	while ((opt = getopt(argc, argv, "a:p:b:I:1sqh")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = parse_number(optarg, 0, 65535); break;
		case 'b': backlog = parse_number(optarg, 1, 65535); break;
		case 'I': idle = parse_number(optarg, 1, 86400); break;
		case '1': srv.one_off = true; break;
		case 's': srv.allow_shutdown = true; break;
		case 'q': srv.quiet = true; break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
		if (port < 0 || backlog < 0 || idle < 0) {
			fprintf(stderr, "iperf: bad value for -%c: %s\n", opt, optarg);
			return 2;
		}
	}
	if (optind != argc) {
		usage();
		return 2;
	}
	srv.idle_ns = (int64_t)idle * 1000000000;
	srv.test.idle_ns = srv.idle_ns;
	srv.test.quiet = srv.quiet;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN; /* a write to a closed peer is an error, not death */
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal; /* no SA_RESTART: poll() returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	srv.listen_fd = open_listener("iperf", addr, (int)port, (int)backlog, srv.quiet);
	if (srv.listen_fd < 0)
		return 1;

	rc = run(&srv);

	if (srv.test.sess) {
		test_abort(&srv.test, WHY_STOPPED);
		count_end(&srv, test_end(&srv.test));
	}
	while (srv.npending)
		drop_pending(&srv, srv.npending - 1, true);
	close(srv.listen_fd);
	print_counters(&srv);
	if (!srv.quiet)
		printf("iperf: stopped (%s)\n", got_signal ? "signal" : rc ? "error" : srv.stopping);
	fflush(stdout);
	return rc;
}
