/*
 * test.h: one running iperf3 test: its control connection (driven by
 * session.c) and its data connections, the bytes that move on them, and the
 * server's counts at the end.
 *
 * iperf.c owns the listener and hands a test its control connection
 * (test_begin) and then each data connection that carries its cookie
 * (test_add_stream). Each turn of the poll loop the test adds its sockets to
 * the poll set (test_pollset) and serves what is ready (test_service) until
 * test_over(); test_end() closes everything and prints the outcome.
 */
#ifndef IPERF_TEST_H
#define IPERF_TEST_H

#include "session.h"

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/times.h>
#include <time.h>

/* One data connection. */
struct stream {
	int fd;            /* its socket (non-blocking); -1 once closed */
	int id;            /* iperf3's stream id: 1, 3, 4, 5, ... as the client numbers them */
	uint64_t bytes;    /* data bytes moved on it (the cookie not counted) */
	int64_t last_ns;   /* when its last byte moved (monotonic clock) */
	size_t block_left; /* sending: bytes left of the len-byte block being written */
};

struct test {
	struct session *sess;  /* the control state machine; NULL when no test runs */
	int ctl_fd;            /* the control connection (non-blocking) */
	bool ctl_eof;          /* the client closed its side of it */
	int number;            /* tests begun since the server started, for the log */
	bool quiet;            /* -q: print only failures */
	int64_t idle_ns;       /* a test with nothing moving this long is dropped */
	char peer[32];         /* the client's address, for the log */
	struct stream streams[IPERF_MAX_STREAMS]; /* the data connections, in arrival order */
	int nstreams;          /* entries of streams[] */
	char *buf;             /* one block (params.len bytes): what we send, where we read to */
	uint64_t limit;        /* sending: bytes to send over all streams (-n, or -k blocks) */
	uint64_t sent;         /* sending: bytes sent over all streams */
	uint64_t received;     /* receiving: bytes received over all streams */
	uint64_t peer_sent;    /* receiving: what the client says it sent, once it said */
	int64_t start_ns;      /* TEST_RUNNING queued: the test's zero */
	int64_t end_ns;        /* TEST_END arrived */
	int64_t progress_ns;   /* the last time anything moved */
	clock_t cpu0;          /* clock() at the start: our CPU time */
	struct tms tms0;       /* times() at the start: its user/system split */
	size_t poll_base;      /* where test_pollset put the control connection */
	bool paced;            /* a sending stream waits for its -b pace this turn */
};

/* Starts a test on control connection fd, whose valid cookie was read.
 * False (fd not taken) when memory runs out. */
bool test_begin(struct test *t, int fd, const char *cookie, const char *peer, int64_t now);

/* Whether a connection with this cookie is a data connection the test
 * waits for. */
bool test_wants_stream(const struct test *t, const char *cookie);

/* Takes data connection fd (test_wants_stream said yes). */
void test_add_stream(struct test *t, int fd, int64_t now);

/* Adds the test's sockets to pfds (room for 1 + IPERF_MAX_STREAMS) and
 * returns how many; lowers *timeout_ms to when the test needs waking. */
size_t test_pollset(struct test *t, struct pollfd *pfds, int64_t now, int *timeout_ms);

/* Serves what poll found ready in the entries test_pollset made. */
void test_service(struct test *t, const struct pollfd *pfds, int64_t now);

/* Whether the test has ended (test_end must follow). */
bool test_over(const struct test *t);

/* Ends the test for a reason from outside (the server stops). */
void test_abort(struct test *t, enum session_why why);

/* Sends what it can of the last words, closes every socket, prints the
 * outcome and frees the test; returns how it ended. */
enum session_why test_end(struct test *t);

#endif
