/*
 * httpd.c: a single-threaded HTTP/1.1 server around one readiness loop.
 *
 * The shape of a tokio current-thread server: non-blocking sockets, one loop
 * that waits for the listener and every connection to be ready and serves
 * what is ready. The wait is poll() (ready_poll.c), or epoll in the Linux
 * build httpd-epoll (ready_epoll.c): see ready.h. GET / answers a fixed 41-byte body, GET /bytes/N N generated
 * bytes (http.h says which), POST either after discarding the request body.
 * This file holds the options, the listener and the loop; conn.c does a
 * connection's I/O, guard.c the limits on slow clients, http.c and body.c
 * the parsing.
 *
 *   httpd [-a ADDR] [-p PORT] [-b BACKLOG] [-c MAXCONN] [-t IDLE_SECS]
 *         [-r HEAD_SECS] [-w STALL_SECS] [-s] [-q]
 *     -a ADDR     IPv4 address to listen on (default 0.0.0.0)
 *     -p PORT     TCP port (default 8080; 0 picks one and prints it)
 *     -b BACKLOG  listen() backlog (default 1024, as the reference app)
 *     -c MAXCONN  connections served at once (default 1024); past it, a
 *                 newcomer takes the place of the connection that made the
 *                 least progress (guard.c), or waits in the backlog
 *     -t SECS     close a connection that sent and took nothing for SECS
 *                 (default 60; 0: never)
 *     -r SECS     a request head must arrive whole within SECS of its first
 *                 byte, the first one within SECS of accept (default 20;
 *                 0: never): 408
 *     -w SECS     a request body or an answer that does not move for SECS
 *                 is ended (default 20; 0: never)
 *     -s          GET /__shutdown stops the server (exit 0): for the tests
 *                 and the benchmark, which stop it over the network; any
 *                 client can send it, so it is off unless asked for
 *     -q          quiet: print only errors
 * SIGTERM and SIGINT stop it cleanly too (exit 0); in the unikernel, Ctrl-C
 * on the console raises SIGINT (tools/serve, make run). It prints what the limits
 * did when it stops.
 *
 * Plain POSIX only, so it builds with glibc for Linux and with newlib plus
 * the unikernel's socket layer, without a single #ifdef for either (the
 * epoll wait is a file of its own, linked into the Linux build that uses it).
 */
#define _POSIX_C_SOURCE 200809L

#include "httpd.h"
#include "apps/common/common.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal; /* SIGTERM or SIGINT arrived */

static void on_signal(int sig)
{
	got_signal = sig;
}

static void usage(void)
{
	fprintf(stderr, "usage: httpd [-a ADDR] [-p PORT] [-b BACKLOG] [-c MAXCONN] [-t IDLE_SECS] "
		"[-r HEAD_SECS] [-w STALL_SECS] [-s] [-q]\n");
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool server_full(const struct server *srv)
{
	return srv->nconns >= srv->max_conns || srv->nconns >= srv->fd_cap;
}

void conn_drop(struct server *srv, size_t i, bool reset)
{
	struct conn *c;

	/* Slots come from this loop's own walks; a wrong one would free and
	 * move what is not there, so it is refused in every build. */
	if (i >= srv->nconns) {
		fprintf(stderr, "httpd: no connection in slot %zu of %zu to close\n", i, srv->nconns);
		return;
	}
	c = srv->conns[i];

	if (reset) {
		/* Linger on with a zero timeout: close() resets the connection
		 * and frees it now, whatever is unsent. If the stack cannot, it
		 * is an ordinary close. */
		struct linger lg = { 1, 0 };
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	ready_del(srv->ready, c->fd);
	close(c->fd);
	free(c);
	srv->conns[i] = srv->conns[--srv->nconns];
}

/* Takes a just-accepted socket. */
static void add_conn(struct server *srv, int fd)
{
	struct conn *c;
	int one = 1;

	/* A victim, if any, went first (accept_all), so there is a slot; were
	 * there none, the newcomer is refused rather than written past conns[]. */
	if (srv->nconns >= srv->max_conns) {
		fprintf(stderr, "httpd: no slot for a connection (%zu open): refused\n", srv->nconns);
		close(fd);
		return;
	}
	c = conn_new(fd, srv->now);
	if (c == NULL || set_nonblocking(fd) < 0 || ready_add(srv->ready, fd, conn_events(c)) < 0) {
		fprintf(stderr, "httpd: cannot take a connection\n");
		free(c);
		close(fd);
		return;
	}
	/* Responses are whole messages: don't let Nagle hold them back. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	srv->conns[srv->nconns++] = c;
	srv->cnt.accepted++;
	if (srv->nconns > srv->cnt.peak)
		srv->cnt.peak = srv->nconns;
}

/*
 * Accepts every connection waiting. Past the limit, each newcomer takes the
 * place of the connection that made the least progress, found before the
 * accept and evicted after it (so a newcomer that vanished costs nobody its
 * place); with none to evict, the rest wait in the backlog. When the
 * descriptors are the limit, the eviction must come first: it frees the
 * descriptor the accept needs.
 */
static void accept_all(struct server *srv)
{
	for (;;) {
		size_t victim = SIZE_MAX;
		bool made_room = false;
		int fd;

		if (server_full(srv)) {
			victim = guard_victim(srv);
			if (victim == SIZE_MAX)
				return;
			if (srv->nconns >= srv->fd_cap) {
				guard_evict(srv, victim);
				victim = SIZE_MAX;
				made_room = true;
			}
		}
		fd = accept(srv->listen_fd, NULL, NULL);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/* Serve at most this many from now on (a loop that kept
			 * trying would spin on the listener). */
			if (srv->fd_cap == SIZE_MAX)
				fprintf(stderr, "httpd: out of descriptors at %zu connections: "
					"serving at most that many\n", srv->nconns);
			srv->fd_cap = srv->nconns;
			srv->cnt.no_descriptors++;
			if (made_room)
				return; /* evicting did not help: try again next turn */
			continue;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				perror("httpd: accept");
			return;
		}
		if (victim != SIZE_MAX)
			guard_evict(srv, victim);
		add_conn(srv, fd);
	}
}

/* The wait's timeout that wakes the loop at `wake` (INT64_MAX: never). */
static int timeout_until(int64_t wake, int64_t now)
{
	if (wake == INT64_MAX)
		return -1;
	if (wake <= now)
		return 0;
	return wake - now > INT_MAX ? INT_MAX : (int)(wake - now);
}

static int run(struct server *srv)
{
	int64_t stop_deadline = 0; /* set when a shutdown request was answered */

	while (!got_signal) {
		int64_t wake = INT64_MAX;
		bool full, evictable = false, accepting;
		size_t i;
		int n;

		srv->now = now_ms();
		if (srv->stopping) {
			/* Stop once every answer, the shutdown's included, has left,
			 * or after LINGER_MS of clients that do not read them. */
			bool pending = false;
			if (stop_deadline == 0)
				stop_deadline = srv->now + LINGER_MS;
			for (i = 0; i < srv->nconns; i++)
				if (srv->conns[i]->phase == PHASE_SEND && conn_sending(srv->conns[i]))
					pending = true;
			if (!pending || srv->now >= stop_deadline)
				break;
			wake = stop_deadline;
		}
		/* What each connection waits for, the next deadline, and
		 * whether a newcomer could have a place if the limit is reached. */
		full = server_full(srv);
		for (i = 0; i < srv->nconns; i++) {
			struct conn *c = srv->conns[i];
			int64_t at = guard_deadline(srv, c);

			if (ready_want(srv->ready, c->fd, conn_events(c)) < 0) {
				perror("httpd: readiness");
				return 1;
			}
			if (at < wake)
				wake = at;
			if (full) {
				at = guard_evictable_at(c);
				if (at <= srv->now)
					evictable = true;
				else if (at < wake)
					wake = at;
			}
		}
		accepting = !srv->stopping && (!full || evictable);
		if (ready_want(srv->ready, srv->listen_fd, accepting ? POLLIN : 0) < 0) {
			perror("httpd: readiness");
			return 1;
		}
		n = ready_wait(srv->ready, timeout_until(wake, srv->now));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("httpd: wait");
			return 1;
		}
		srv->now = now_ms();
		/* Walk backwards: dropping slot i moves the last slot into it. */
		for (i = srv->nconns; i-- > 0;) {
			short re = ready_revents(srv->ready, srv->conns[i]->fd);
			if (re && !conn_service(srv, srv->conns[i], re))
				conn_drop(srv, i, false);
		}
		if (srv->now >= wake)
			guard_expire(srv);
		if (accepting && (ready_revents(srv->ready, srv->listen_fd) & POLLIN))
			accept_all(srv);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = "0.0.0.0";
	long port = 8080, backlog = 1024, max_conns = 1024;
	long idle = 60, head = 20, stall = 20; /* seconds */
	struct server srv;
	struct sigaction sa;
	int opt, rc;

	memset(&srv, 0, sizeof(srv));
	while ((opt = getopt(argc, argv, "a:p:b:c:t:r:w:sqh")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = parse_number(optarg, 0, 65535); break;
		case 'b': backlog = parse_number(optarg, 1, 65535); break;
		case 'c': max_conns = parse_number(optarg, 1, 65536); break;
		case 't': idle = parse_number(optarg, 0, 86400); break;
		case 'r': head = parse_number(optarg, 0, 86400); break;
		case 'w': stall = parse_number(optarg, 0, 86400); break;
		case 's': srv.allow_shutdown = true; break;
		case 'q': srv.quiet = true; break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
		if (port < 0 || backlog < 0 || max_conns < 0 || idle < 0 || head < 0 || stall < 0) {
			fprintf(stderr, "httpd: bad value for -%c: %s\n", opt, optarg);
			return 2;
		}
	}
	if (optind != argc) {
		usage();
		return 2;
	}
	srv.idle_ms = idle * 1000;
	srv.head_ms = head * 1000;
	srv.stall_ms = stall * 1000;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN; /* a write to a closed peer is an error, not death */
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal; /* no SA_RESTART: the wait returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	srv.max_conns = (size_t)max_conns;
	srv.fd_cap = SIZE_MAX;
	srv.conns = calloc(srv.max_conns, sizeof(*srv.conns));
	srv.ready = ready_new(srv.max_conns + 1); /* listener + connections */
	srv.scratch = malloc(SCRATCH_LEN);
	if (srv.conns == NULL || srv.ready == NULL || srv.scratch == NULL) {
		fprintf(stderr, "httpd: out of memory\n");
		return 1;
	}
	srv.listen_fd = open_listener("httpd", addr, (int)port, (int)backlog, srv.quiet);
	if (srv.listen_fd < 0)
		return 1;
	if (ready_add(srv.ready, srv.listen_fd, POLLIN) < 0) {
		perror("httpd: readiness");
		return 1;
	}

	rc = run(&srv);

	while (srv.nconns)
		conn_drop(&srv, srv.nconns - 1, false);
	ready_del(srv.ready, srv.listen_fd);
	close(srv.listen_fd);
	ready_free(srv.ready);
	free(srv.conns);
	free(srv.scratch);
	if (!srv.quiet) {
		guard_print(&srv);
		printf("httpd: stopped (%s)\n", got_signal ? "signal" : srv.stopping ? "shutdown request" : "error");
		fflush(stdout);
	}
	return rc;
}
