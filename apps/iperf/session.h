/*
 * session.h: one iperf3 test as its control connection sees it.
 *
 * A state machine over the bytes the client sends there (proto.h shows the
 * exchange): it takes the input the I/O layer read into in[], queues what to
 * answer in out[], and tells the I/O layer (iperf.c) by an event what to do
 * with the data connections. No I/O and no clock, so the fuzzer drives it
 * exactly as the server does (tests/fuzz/fuzz_iperf.c).
 *
 * Every input either moves the test one step along or ends it: a message out
 * of order, a JSON message that does not parse or lacks its fields, a length
 * over IPERF_JSON_MAX end it as SESSION_FAILED with the reason in .why.
 */
#ifndef IPERF_SESSION_H
#define IPERF_SESSION_H

#include "proto.h"

#define SESSION_IN_MAX (4 + IPERF_JSON_MAX) /* a whole JSON frame fits */
#define SESSION_OUT_MAX (32 * 1024)         /* our results for IPERF_MAX_STREAMS streams fit */

enum session_phase {
	SESSION_PARAMS,  /* PARAM_EXCHANGE sent; the parameters come next */
	SESSION_STREAMS, /* CREATE_STREAMS sent; the data connections come */
	SESSION_RUNNING, /* TEST_START, TEST_RUNNING sent; data flows until TEST_END */
	SESSION_RESULTS, /* EXCHANGE_RESULTS sent; the client's results come next */
	SESSION_DRAIN,   /* those are in: the I/O layer ends the data, then session_finish() */
	SESSION_DONE,    /* our results and DISPLAY_RESULTS sent; IPERF_DONE comes next */
	SESSION_OVER,    /* the test ended as it should */
	SESSION_FAILED,  /* the test ended early: .why says how */
};

/* Why a session failed. */
enum session_why {
	WHY_NONE,             /* it did not */
	WHY_BAD_LENGTH,       /* a JSON frame longer than IPERF_JSON_MAX */
	WHY_BAD_JSON,         /* a JSON message unreadable, or without the fields it must have */
	WHY_BAD_STATE,        /* a state byte that does not belong where it came */
	WHY_REFUSED,          /* parameters we do not offer: SERVER_ERROR queued */
	WHY_CLIENT_TERMINATE, /* the client sent CLIENT_TERMINATE (Ctrl-C there) */
	WHY_CLOSED_EARLY,     /* the client closed the control connection before the end */
	WHY_TIMEOUT,          /* nothing moved for the server's idle timeout */
	WHY_IO,               /* a socket call failed, or memory ran out */
	WHY_STOPPED,          /* the server stopped (a signal) while it ran */
};

/* What session_step() found. */
enum session_event {
	SESSION_WAIT,         /* nothing complete in in[]: read more */
	SESSION_PARAMS_OK,    /* .params is the test; CREATE_STREAMS queued: take the connections */
	SESSION_TEST_END,     /* the client ended the test; EXCHANGE_RESULTS queued */
	SESSION_PEER_RESULTS, /* .peer[] holds the client's counts: end the data, then finish */
	SESSION_ENDED,        /* phase OVER or FAILED: send what out[] holds, then close */
};

struct session {
	enum session_phase phase;      /* where the test is */
	enum session_why why;          /* on SESSION_FAILED: why */
	int error;                     /* on WHY_REFUSED: the iperf3 error code we sent */
	char cookie[IPERF_COOKIE_LEN]; /* the client's; its data connections carry it too */
	struct iperf_params params;    /* the test, once past SESSION_PARAMS */
	struct iperf_stream_result peer[IPERF_MAX_STREAMS]; /* the client's results (ids, bytes) */
	size_t npeer;                  /* entries of peer[] */
	size_t in_len;                 /* bytes of in[] not yet consumed */
	size_t out_len;                /* bytes of out[] not yet sent */
	unsigned char in[SESSION_IN_MAX];   /* received on the control connection */
	unsigned char out[SESSION_OUT_MAX]; /* to send on it */
};

/* A new session for a control connection whose (valid) cookie was read:
 * PARAM_EXCHANGE is queued. */
void session_start(struct session *s, const char *cookie);

/* Consumes at most one message from in[]; call until SESSION_WAIT or ENDED. */
enum session_event session_step(struct session *s);

/* All params.parallel data connections are in: queues TEST_START and
 * TEST_RUNNING. Only in SESSION_STREAMS. */
void session_streams_ready(struct session *s);

/* The data are over: queues our results and DISPLAY_RESULTS. Only in
 * SESSION_DRAIN. False (and the session failed, WHY_IO) if they do not fit. */
bool session_finish(struct session *s, const struct iperf_report *r);

/* The client closed its side (after every byte of in[] was stepped through). */
void session_eof(struct session *s);

/* Ends the session for a reason found outside it (timeout, a socket error). */
void session_fail(struct session *s, enum session_why why);

/* n bytes of out[] were sent. */
void session_sent(struct session *s, size_t n);

/* Whether the session has ended. */
bool session_ended(const struct session *s);

/* A word or two for the reason, for the log ("bad cookie" is the listener's). */
const char *session_why_name(enum session_why why);

#endif
