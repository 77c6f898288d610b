/*
 * proto.h: iperf3's control protocol, as far as a TCP server needs it.
 *
 * A test runs over one control connection and N data connections to the
 * same port. Every connection opens with the client's 37-byte cookie (36
 * characters of [a-z2-7] and a NUL). On the control connection the server
 * then drives the test with one-byte states, and both sides exchange JSON
 * messages, each framed by a 4-byte big-endian length:
 *
 *   client                                server
 *   cookie                     ->
 *                              <-         PARAM_EXCHANGE
 *   {parameters}               ->
 *                              <-         CREATE_STREAMS
 *   N data connections, each: cookie
 *                              <-         TEST_START, TEST_RUNNING
 *   ... data flows (client to server, or back with -R) ...
 *   TEST_END                   ->
 *                              <-         EXCHANGE_RESULTS
 *   {client results}           ->
 *                              <-         {server results}, DISPLAY_RESULTS
 *   IPERF_DONE                 ->         (and both close)
 *
 * Parameters the server cannot honour are answered with SERVER_ERROR and two
 * 4-byte big-endian numbers, iperf3's error code and an errno, which the
 * client prints. A connection that arrives while a test runs and is not one
 * of its data connections gets ACCESS_DENIED.
 *
 * This file offers the pure parts: cookie checks, the parameter and result
 * messages. Nothing here does I/O. Numbers and field names follow iperf3 3.x
 * (src/iperf_api.h, iperf_api.c), read for the protocol only.
 */
#ifndef IPERF_PROTO_H
#define IPERF_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPERF_PORT 5201
#define IPERF_COOKIE_LEN 37        /* 36 characters and a NUL */
#define IPERF_JSON_MAX (64 * 1024) /* longest JSON message taken; iperf3's are < 4 KiB */
#define IPERF_MAX_STREAMS 128      /* iperf3's MAX_STREAMS */
#define IPERF_MAX_BLOCK (1024 * 1024)      /* iperf3's MAX_BLOCKSIZE */
#define IPERF_DEFAULT_BLOCK (128 * 1024)   /* iperf3's DEFAULT_TCP_BLKSIZE */
#define IPERF_MAX_TIME 86400               /* iperf3's MAX_TIME, seconds */
#define IPERF_MAX_WINDOW (512 * 1024 * 1024) /* iperf3's MAX_TCP_BUFFER */

/*
 * A cookie no iperf3 client can send ('-' is outside its alphabet): with
 * iperf -s it stops the server, as GET /__shutdown stops httpd -s.
 */
#define IPERF_SHUTDOWN_COOKIE "----------shutdown-iperf------------"

/* The state bytes (signed char on the wire). */
enum iperf_state {
	IPERF_TEST_START = 1,
	IPERF_TEST_RUNNING = 2,
	IPERF_TEST_END = 4,
	IPERF_PARAM_EXCHANGE = 9,
	IPERF_CREATE_STREAMS = 10,
	IPERF_SERVER_TERMINATE = 11,
	IPERF_CLIENT_TERMINATE = 12,
	IPERF_EXCHANGE_RESULTS = 13,
	IPERF_DISPLAY_RESULTS = 14,
	IPERF_DONE = 16,
	IPERF_ACCESS_DENIED = -1,
	IPERF_SERVER_ERROR = -2,
};

/* iperf3's error codes (i_errno) this server answers with. */
enum iperf_error {
	IPERF_IEDURATION = 5,   /* "test duration too long" */
	IPERF_IENUMSTREAMS = 6, /* "number of parallel streams too large" */
	IPERF_IEBLOCKSIZE = 7,  /* "block size too large" */
	IPERF_IEBUFSIZE = 8,    /* "socket buffer size too large" */
	IPERF_IEUNIMP = 13,     /* "not implemented yet": UDP, SCTP, --bidir, -O, -M, ... */
};

/* What the client asked for (its "parameters" message). */
struct iperf_params {
	int64_t time_secs;  /* "time": -t; 0 when -n or -k ends the test */
	uint64_t bytes;     /* "num": -n, bytes over all streams; 0: no such limit */
	uint64_t blocks;    /* "blockcount": -k, writes of len bytes; 0: no limit */
	int parallel;       /* "parallel": -P, data connections (1..IPERF_MAX_STREAMS) */
	bool reverse;       /* "reverse": -R, the server sends */
	bool nodelay;       /* "nodelay": -N, TCP_NODELAY on the data connections */
	size_t len;         /* "len": -l, bytes per read or write (1..IPERF_MAX_BLOCK) */
	int64_t window;     /* "window": -w, SO_SNDBUF/SO_RCVBUF; 0: the default */
	uint64_t bandwidth; /* "bandwidth": -b, bits/s per stream; the sender paces */
};

/* Results of one stream, as either side reports them. */
struct iperf_stream_result {
	int id;             /* iperf3's stream id (1, 3, 4, 5, ...: see iperf.c) */
	uint64_t bytes;     /* data bytes sent (sender) or received (receiver) */
	int64_t end_ns;     /* when the stream's part ended, from the test's start */
};

/* The server's results message. */
struct iperf_report {
	bool sender;                              /* -R: we sent */
	int64_t cpu_total_micro;                  /* CPU use, % x 10^6, user + system */
	int64_t cpu_user_micro;                   /* user part */
	int64_t cpu_system_micro;                 /* system part */
	size_t nstreams;                          /* entries of streams[] */
	const struct iperf_stream_result *streams; /* in stream order */
};

/* Whether c[0..IPERF_COOKIE_LEN) is a cookie an iperf3 client makes. */
bool iperf_cookie_valid(const char *c);

/* Whether it is IPERF_SHUTDOWN_COOKIE (and its NUL). */
bool iperf_cookie_is_shutdown(const char *c);

/* A JSON message's frame at the front of buf[0..len). */
enum iperf_frame {
	IPERF_FRAME_INCOMPLETE, /* not all of it yet */
	IPERF_FRAME_COMPLETE,   /* *json, *json_len: the message; *frame_len: bytes it takes */
	IPERF_FRAME_TOO_LONG,   /* its length is over IPERF_JSON_MAX: close */
};
enum iperf_frame iperf_frame(const unsigned char *buf, size_t len, const char **json, size_t *json_len,
			     size_t *frame_len);

/* The outcome of reading a message. */
enum iperf_parse {
	IPERF_PARSE_OK,      /* understood */
	IPERF_PARSE_BAD,     /* not JSON, or a field of the wrong type: close */
	IPERF_PARSE_REFUSED, /* well formed, but asks for what we do not do: *error */
};

/* The parameters message; on IPERF_PARSE_REFUSED *error is the code to send. */
enum iperf_parse iperf_params_parse(const char *json, size_t len, struct iperf_params *p, int *error);

/*
 * The client's results message: each stream's id and bytes into out[] (at
 * most max entries; more is IPERF_PARSE_BAD), their number in *n.
 */
enum iperf_parse iperf_results_parse(const char *json, size_t len, struct iperf_stream_result *out,
				     size_t max, size_t *n);

/*
 * Writes the server's results as a framed message (length, then JSON) into
 * out[0..cap); returns its length, or 0 when it does not fit.
 */
size_t iperf_results_frame(const struct iperf_report *r, unsigned char *out, size_t cap);

/* The SERVER_ERROR message: the state byte, the code, the errno (9 bytes). */
#define IPERF_ERROR_MSG_LEN 9
void iperf_error_msg(int error, int err_no, unsigned char out[IPERF_ERROR_MSG_LEN]);

#endif
