/*
 * httpd.c: a single-threaded HTTP/1.1 server around one poll() loop.
 *
 * The shape of a tokio current-thread server: non-blocking sockets, one loop
 * that polls the listener and every connection for readiness and serves what
 * is ready. GET / answers a fixed 41-byte body; the head and the body leave in
 * ONE writev of two iovecs (the call the unikernel turns into one TCP send).
 * Parsing and routing live in http.c; this file does only the I/O.
 *
 *   httpd [-a ADDR] [-p PORT] [-b BACKLOG] [-c MAXCONN] [-t IDLE_SECS] [-s] [-q]
 *     -a ADDR     IPv4 address to listen on (default 0.0.0.0)
 *     -p PORT     TCP port (default 8080; 0 picks one and prints it)
 *     -b BACKLOG  listen() backlog (default 1024, as the reference app)
 *     -c MAXCONN  connections served at once (default 1024); more wait
 *                 in the backlog
 *     -t SECS     close a connection that sent and took nothing for SECS
 *                 (default 60; 0: never), so slow clients cannot hold slots
 *     -s          GET /__shutdown stops the server (exit 0): the unikernel
 *                 has no signals
 *     -q          quiet: print only errors
 * SIGTERM and SIGINT stop it cleanly too (exit 0).
 *
 * Plain POSIX only, so it builds with glibc for Linux and with newlib plus
 * the unikernel's socket layer, without a single #ifdef for either.
 */
#define _POSIX_C_SOURCE 200809L

#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The largest request (head plus body) a connection buffers. */
#define REQUEST_MAX 8192
/* Room for the unsent rest of one response: a head and a small body. */
#define PENDING_MAX 512
/* How long a closing connection may take to send us its FIN. */
#define LINGER_SECS 5

/* One client connection. */
struct conn {
	int fd;                  /* its socket, non-blocking */
	size_t in_len;           /* bytes of in[] holding unparsed request data */
	size_t out_off;          /* first unsent byte of out[] */
	size_t out_len;          /* end of the unsent bytes of out[] */
	bool peer_eof;           /* the client shut its sending side */
	bool close_after;        /* close once out[] is sent */
	bool must_linger;        /* input may be left unread when we close */
	bool lingering;          /* our side is shut; discarding until its FIN */
	time_t linger_until;     /* when a lingering connection is dropped */
	time_t last_active;      /* last read or write: the idle timeout counts from here */
	char in[REQUEST_MAX];    /* received, not yet answered requests */
	char out[PENDING_MAX];   /* a response writev could not send at once */
};

/* The server's options and state. */
struct server {
	int listen_fd;          /* the listening socket */
	struct conn **conns;    /* the open connections, max_conns slots */
	size_t nconns;          /* slots in use, packed at the front */
	size_t max_conns;       /* -c */
	struct pollfd *pfds;    /* poll set, rebuilt each turn: listener + conns */
	bool allow_shutdown;    /* -s */
	bool quiet;             /* -q */
	bool stopping;          /* a shutdown request was answered */
	long idle_secs;         /* -t: close a connection silent this long (0: never) */
	unsigned long idle_closed; /* connections closed by the idle timeout */
};

static volatile sig_atomic_t got_signal; /* SIGTERM or SIGINT arrived */

static void on_signal(int sig)
{
	got_signal = sig;
}

static void usage(void)
{
	fprintf(stderr, "usage: httpd [-a ADDR] [-p PORT] [-b BACKLOG] [-c MAXCONN] [-t IDLE_SECS] [-s] [-q]\n");
}

/* A whole decimal number in [lo, hi], or -1. */
static long parse_number(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	return v;
}

static int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL, 0);

	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static int open_listener(const char *addr, int port, int backlog, bool quiet)
{
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	int fd, one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "httpd: not an IPv4 address: %s\n", addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		perror("httpd: socket");
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		perror("httpd: SO_REUSEADDR"); /* not fatal: only restarts suffer */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "httpd: bind %s:%d: %s\n", addr, port, strerror(errno));
		close(fd);
		return -1;
	}
	if (listen(fd, backlog) < 0 || set_nonblocking(fd) < 0) {
		perror("httpd: listen");
		close(fd);
		return -1;
	}
	if (!quiet) {
		if (getsockname(fd, (struct sockaddr *)&sa, &salen) == 0)
			port = ntohs(sa.sin_port);
		printf("httpd: listening on %s:%d\n", addr, port);
		fflush(stdout);
	}
	return fd;
}

static void drop_conn(struct server *srv, size_t i)
{
	close(srv->conns[i]->fd);
	free(srv->conns[i]);
	srv->conns[i] = srv->conns[--srv->nconns];
}

/* Accepts every connection waiting, up to the connection limit. */
static void accept_all(struct server *srv)
{
	while (srv->nconns < srv->max_conns) {
		struct conn *c;
		int one = 1;
		int fd = accept(srv->listen_fd, NULL, NULL);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				perror("httpd: accept");
			return;
		}
		c = calloc(1, sizeof(*c));
		if (c == NULL || set_nonblocking(fd) < 0) {
			fprintf(stderr, "httpd: cannot take a connection\n");
			free(c);
			close(fd);
			continue;
		}
		/* Responses are whole messages: don't let Nagle hold them back. */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
		c->last_active = time(NULL);
		srv->conns[srv->nconns++] = c;
	}
}

/* Sends what is left in out[]. Returns -1 when the connection broke. */
static int flush_pending(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

		if (n < 0)
			return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
		c->out_off += (size_t)n;
	}
	c->out_off = c->out_len = 0;
	return 0;
}

/* Sends one response: head and body in one writev. -1: connection broke. */
static int send_response(struct conn *c, const struct http_response *resp, int minor)
{
	char head[HTTP_HEAD_MAX];
	struct iovec iov[2];
	size_t total, sent;
	ssize_t n;
	int cnt = 1;

	iov[0].iov_base = head;
	iov[0].iov_len = http_head(resp, minor, head);
	total = iov[0].iov_len;
	if (resp->send_body && resp->body_len) {
		iov[1].iov_base = (void *)resp->body;
		iov[1].iov_len = resp->body_len;
		total += resp->body_len;
		cnt = 2;
	}
	n = writev(c->fd, iov, cnt);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		n = 0;
	}
	sent = (size_t)n;
	if (sent < total) {
		/* Keep the rest; the loop sends it when the socket is writable. */
		size_t k;
		c->out_off = c->out_len = 0;
		for (k = 0; k < (size_t)cnt; k++) {
			size_t len = iov[k].iov_len, skip = sent < len ? sent : len;
			memcpy(c->out + c->out_len, (char *)iov[k].iov_base + skip, len - skip);
			c->out_len += len - skip;
			sent -= skip;
		}
	}
	return 0;
}

/* Answers every complete request in in[] while nothing is pending. */
static int serve_requests(struct server *srv, struct conn *c)
{
	while (!c->close_after && c->out_len == 0 && c->in_len > 0) {
		struct http_request req;
		struct http_response resp;
		enum http_parse_result r = http_parse(c->in, c->in_len, REQUEST_MAX, &req);

		if (r == HTTP_INCOMPLETE)
			break;
		if (r == HTTP_ERROR) {
			http_route(NULL, req.status, srv->allow_shutdown, &resp);
			c->in_len = 0; /* the rest cannot be framed: drop it */
			c->close_after = true;
			c->must_linger = true;
			return send_response(c, &resp, 1);
		}
		http_route(&req, 0, srv->allow_shutdown, &resp);
		memmove(c->in, c->in + req.length, c->in_len - req.length);
		c->in_len -= req.length;
		if (!resp.keep_alive) {
			c->close_after = true;
			c->must_linger = c->in_len > 0; /* pipelined past a close */
		}
		if (resp.shutdown)
			srv->stopping = true;
		if (send_response(c, &resp, req.minor) < 0)
			return -1;
	}
	/* A client that stopped sending gets no more answers after these. */
	if (c->peer_eof && c->out_len == 0)
		c->close_after = true;
	return 0;
}

/*
 * Handles readiness of connection i. Returns false when it was dropped.
 * A connection closed with unread input would answer the client with a reset
 * that can destroy our last response in flight, so such a close first shuts
 * our side and reads until the client's FIN (bounded by LINGER_SECS).
 */
static bool service_conn(struct server *srv, size_t i, short revents)
{
	struct conn *c = srv->conns[i];

	if (c->lingering) {
		char sink[512];
		ssize_t n = read(c->fd, sink, sizeof(sink));

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ||
		    time(NULL) >= c->linger_until) {
			drop_conn(srv, i);
			return false;
		}
		return true;
	}
	if (revents & (POLLERR | POLLNVAL)) {
		drop_conn(srv, i);
		return false;
	}
	if (revents & (POLLIN | POLLOUT))
		c->last_active = time(NULL);
	if (c->out_len) {
		if (flush_pending(c) < 0) {
			drop_conn(srv, i);
			return false;
		}
	}
	if (c->out_len == 0 && !c->close_after && !c->peer_eof &&
	    (revents & (POLLIN | POLLHUP)) && c->in_len < REQUEST_MAX) {
		ssize_t n = read(c->fd, c->in + c->in_len, REQUEST_MAX - c->in_len);

		if (n > 0)
			c->in_len += (size_t)n;
		else if (n == 0)
			c->peer_eof = true;
		else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			drop_conn(srv, i);
			return false;
		}
	}
	if (serve_requests(srv, c) < 0) {
		drop_conn(srv, i);
		return false;
	}
	if (c->close_after && c->out_len == 0) {
		/* Nothing unread (the usual case): a plain close sends a FIN. */
		if (c->must_linger && !c->peer_eof) {
			c->lingering = true;
			c->linger_until = time(NULL) + LINGER_SECS;
			shutdown(c->fd, SHUT_WR);
		} else {
			drop_conn(srv, i);
			return false;
		}
	}
	return true;
}

/* Slow or silent clients (half a request, then nothing) must not hold a
 * connection slot forever: drop those idle for srv->idle_secs. */
static void close_idle(struct server *srv)
{
	time_t now = time(NULL);
	for (size_t i = srv->nconns; i-- > 0;) {
		struct conn *c = srv->conns[i];
		if (!c->lingering && now - c->last_active >= srv->idle_secs) {
			drop_conn(srv, i);
			srv->idle_closed++;
		}
	}
}

static int run(struct server *srv)
{
	time_t stop_deadline = 0; /* set when a shutdown request was answered */

	while (!got_signal) {
		size_t i, nfds = 0, first_conn;
		bool lingering = false; /* some timer needs poll() to wake up */
		int n;

		if (srv->stopping) {
			/* Stop once every answer, the shutdown's included, has left,
			 * or after LINGER_SECS of clients that do not read them. */
			bool pending = false;
			if (stop_deadline == 0)
				stop_deadline = time(NULL) + LINGER_SECS;
			for (i = 0; i < srv->nconns; i++)
				if (srv->conns[i]->out_len && !srv->conns[i]->lingering)
					pending = true;
			if (!pending || time(NULL) >= stop_deadline)
				break;
			lingering = true; /* wake up to check the deadline */
		}
		if (srv->nconns < srv->max_conns && !srv->stopping) {
			srv->pfds[nfds].fd = srv->listen_fd;
			srv->pfds[nfds].events = POLLIN;
			nfds++;
		}
		first_conn = nfds;
		for (i = 0; i < srv->nconns; i++) {
			struct conn *c = srv->conns[i];
			srv->pfds[nfds].fd = c->fd;
			srv->pfds[nfds].events = c->out_len ? POLLOUT : c->peer_eof ? 0 : POLLIN;
			lingering = lingering || c->lingering;
			nfds++;
		}
		/* Timers (lingering closes, the idle timeout) need a wake-up each second. */
		bool timed = lingering || (srv->idle_secs && srv->nconns);
		n = poll(srv->pfds, (nfds_t)nfds, timed ? 1000 : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("httpd: poll");
			return 1;
		}
		/* Walk backwards: dropping slot i moves the last slot into it. */
		for (i = srv->nconns; i-- > 0;) {
			short re = srv->pfds[first_conn + i].revents;
			if (re || srv->conns[i]->lingering)
				service_conn(srv, i, re);
		}
		if (srv->idle_secs)
			close_idle(srv);
		if (first_conn && (srv->pfds[0].revents & POLLIN))
			accept_all(srv);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = "0.0.0.0";
	long port = 8080, backlog = 1024, max_conns = 1024;
	struct server srv;
	struct sigaction sa;
	int opt, rc;

	memset(&srv, 0, sizeof(srv));
	srv.idle_secs = 60;
	while ((opt = getopt(argc, argv, "a:p:b:c:t:sqh")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = parse_number(optarg, 0, 65535); break;
		case 'b': backlog = parse_number(optarg, 1, 65535); break;
		case 'c': max_conns = parse_number(optarg, 1, 65536); break;
		case 't': srv.idle_secs = parse_number(optarg, 0, 86400); break;
		case 's': srv.allow_shutdown = true; break;
		case 'q': srv.quiet = true; break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
		if (port < 0 || backlog < 0 || max_conns < 0 || srv.idle_secs < 0) {
			fprintf(stderr, "httpd: bad value for -%c: %s\n", opt, optarg);
			return 2;
		}
	}
	if (optind != argc) {
		usage();
		return 2;
	}

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN; /* a write to a closed peer is an error, not death */
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal; /* no SA_RESTART: poll() returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	srv.max_conns = (size_t)max_conns;
	srv.conns = calloc(srv.max_conns, sizeof(*srv.conns));
	srv.pfds = calloc(srv.max_conns + 1, sizeof(*srv.pfds));
	if (srv.conns == NULL || srv.pfds == NULL) {
		fprintf(stderr, "httpd: out of memory\n");
		return 1;
	}
	srv.listen_fd = open_listener(addr, (int)port, (int)backlog, srv.quiet);
	if (srv.listen_fd < 0)
		return 1;

	rc = run(&srv);

	while (srv.nconns)
		drop_conn(&srv, srv.nconns - 1);
	close(srv.listen_fd);
	free(srv.conns);
	free(srv.pfds);
	if (!srv.quiet) {
		if (srv.idle_closed)
			printf("httpd: %lu idle connections closed\n", srv.idle_closed);
		printf("httpd: stopped (%s)\n", got_signal ? "signal" : srv.stopping ? "shutdown request" : "error");
		fflush(stdout);
	}
	return rc;
}
