/*
 * httpd.h: what httpd's three files share: a connection, the server, and
 * the calls between them.
 *
 *   httpd.c  options, the listener, the readiness loop, accepting and closing
 *   conn.c   one connection's I/O: reading requests and bodies, answering
 *            (fixed bodies and the generated /bytes body), lingering
 *   guard.c  the limits on slow clients: per-connection deadlines, eviction
 *            of the connection that made the least progress when the
 *            connection limit is reached, and the counters of both
 *   ready_poll.c or ready_epoll.c (ready.h)  the loop's wait: poll(), or
 *            Linux's epoll in the httpd-epoll build
 *
 * A connection goes through phases (enum conn_phase). Its clocks are
 * CLOCK_MONOTONIC milliseconds, read once per loop turn (server.now).
 */
#ifndef HTTPD_HTTPD_H
#define HTTPD_HTTPD_H

#include "http.h"
#include "ready.h"

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest request head a connection buffers. */
#define REQUEST_MAX 8192
/* Room for the unsent rest of a 100 Continue, one response head and a fixed
 * body (error and hello bodies are under 64 bytes). */
#define PENDING_MAX 512
/* How long a closing connection may take to send us its FIN. */
#define LINGER_MS 5000
/* A body or an answer has moved when this many more of its bytes went
 * through (or it ended): trickling a few bytes is not progress. */
#define PROGRESS_BYTES 8192

/* Where a connection is. */
enum conn_phase {
	PHASE_WAIT,   /* no byte of a request yet: just accepted, or between requests */
	PHASE_HEAD,   /* part of a request head is in in[] */
	PHASE_BODY,   /* the head is parsed; its body is read and discarded */
	PHASE_SEND,   /* the answer is going out (out[], then the generated body) */
	PHASE_LINGER, /* our side is shut; input is discarded until the client's FIN */
};

/* One client connection. */
struct conn {
	int fd;                   /* its socket, non-blocking */
	enum conn_phase phase;    /* see above */
	bool fresh;               /* no request has started on it yet */
	bool peer_eof;            /* the client shut its sending side */
	bool close_after;         /* close once the answer is sent */
	bool must_linger;         /* input may be left unread when we close */
	int64_t accepted_at;      /* ms: accept() */
	int64_t last_active;      /* ms: last byte read or written (idle timeout) */
	int64_t head_start;       /* ms: the current head began (PHASE_HEAD); the
	                             first one counts from accept */
	int64_t progress_at;      /* ms: the body or answer last moved (PHASE_BODY,
	                             PHASE_SEND): began, or PROGRESS_BYTES more went */
	uint64_t progress_bytes;  /* bytes moved since progress_at */
	int64_t linger_until;     /* ms: a lingering connection is dropped then */
	struct http_response resp;/* PHASE_BODY: the answer once the body is read */
	int minor;                /* that request's HTTP minor version */
	struct http_body body;    /* PHASE_BODY: the body's framing */
	uint64_t gen_off;         /* PHASE_SEND: next byte of the generated body */
	uint64_t gen_end;         /* its length; gen_off == gen_end: none left */
	size_t in_len;            /* bytes of in[] holding unparsed input */
	size_t out_off;           /* first unsent byte of out[] */
	size_t out_len;           /* end of the unsent bytes of out[] */
	char in[REQUEST_MAX];     /* received, not yet answered requests */
	char out[PENDING_MAX];    /* what a write could not send at once */
};

/* What the slow-client limits did (guard.c prints them). */
struct guard_counters {
	unsigned long accepted;       /* connections taken */
	unsigned long peak;           /* most open at once */
	unsigned long idle_closed;    /* closed by the idle timeout (-t) */
	unsigned long head_timeouts;  /* heads that missed the head deadline (-r) */
	unsigned long head_408;       /* ... of which had begun and were answered 408 */
	unsigned long body_stalled;   /* request bodies that stopped moving (-w): 408 */
	unsigned long answer_stalled; /* answers the client stopped taking (-w): reset */
	unsigned long evicted_head;   /* evicted for a newcomer: a head under way */
	unsigned long evicted_silent; /* ... nothing sent since accept or the last answer */
	unsigned long evicted_body;   /* ... a body not moving */
	unsigned long evicted_answer; /* ... an answer not moving */
	unsigned long evicted_linger; /* ... closing already */
	unsigned long no_descriptors; /* accept() failed for want of descriptors */
};

/* The server's options and state. */
struct server {
	int listen_fd;              /* the listening socket */
	struct conn **conns;        /* the open connections, max_conns slots */
	size_t nconns;              /* slots in use, packed at the front */
	size_t max_conns;           /* -c */
	size_t fd_cap;              /* connections at which descriptors ran out
	                               (SIZE_MAX until they do) */
	struct ready *ready;        /* what the loop waits on: listener, connections */
	bool allow_shutdown;        /* -s */
	bool quiet;                 /* -q */
	bool stopping;              /* a shutdown request was answered */
	int64_t now;                /* ms, CLOCK_MONOTONIC, read once per turn */
	int64_t idle_ms;            /* -t: silence that ends a connection (0: never) */
	int64_t head_ms;            /* -r: time a whole head may take (0: never) */
	int64_t stall_ms;           /* -w: time a body or answer may stand still (0: never) */
	char *scratch;              /* SCRATCH_LEN bytes the generated body is made in */
	struct guard_counters cnt;  /* what the limits did */
};

/* The generated body is written in pieces this large. */
#define SCRATCH_LEN 16384

/* ---- httpd.c ---- */
int64_t now_ms(void);
/* Whether no more connections fit (the limit, or the descriptors). */
bool server_full(const struct server *srv);
/* Closes connection i and frees its slot; `reset`: abortively (RST). */
void conn_drop(struct server *srv, size_t i, bool reset);

/* ---- conn.c ---- */
/* A connection for a just-accepted socket; NULL if out of memory. */
struct conn *conn_new(int fd, int64_t now);
/* The events (POLLIN, POLLOUT) connection c waits for. */
short conn_events(const struct conn *c);
/* Whether c has an answer still to send. */
bool conn_sending(const struct conn *c);
/* Handles c's readiness. false: it is finished, drop it (gracefully). */
bool conn_service(struct server *srv, struct conn *c, short revents);
/* Answers `status` (408) in place of what c was reading, then closes. */
bool conn_fail(struct server *srv, struct conn *c, int status);

/* ---- guard.c ---- */
/* When connection c's next deadline falls (INT64_MAX: none). */
int64_t guard_deadline(const struct server *srv, const struct conn *c);
/* Acts on every connection whose deadline has passed. */
void guard_expire(struct server *srv);
/* When c may be evicted for a newcomer (INT64_MAX: never). */
int64_t guard_evictable_at(const struct conn *c);
/* The connection that made the least progress, if one may be evicted now;
 * SIZE_MAX if none. */
size_t guard_victim(const struct server *srv);
/* Evicts connection i (a reset), counted by what it was doing. */
void guard_evict(struct server *srv, size_t i);
/* Prints the counters (at exit). */
void guard_print(const struct server *srv);

#endif
