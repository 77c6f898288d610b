/*
 * session.c: the control connection's state machine (see session.h).
 *
 * Each phase expects one kind of message: a JSON frame (SESSION_PARAMS,
 * SESSION_RESULTS) or one state byte (the others). session_step() looks at
 * the front of in[], and either waits for the rest, consumes the message and
 * moves on, or ends the session. In SESSION_DRAIN nothing is consumed: a
 * client has nothing to say until it has our results.
 */
#include "session.h"

#include <assert.h>
#include <string.h>

/* Queues bytes to send. The callers queue small fixed messages except
 * session_finish(), which checks the room itself. */
static void queue(struct session *s, const void *p, size_t n)
{
	assert(n <= SESSION_OUT_MAX - s->out_len);
	if (n > SESSION_OUT_MAX - s->out_len)
		return;
	memcpy(s->out + s->out_len, p, n);
	s->out_len += n;
}

static void queue_state(struct session *s, enum iperf_state state)
{
	unsigned char b = (unsigned char)(signed char)state;

	queue(s, &b, 1);
}

static void consume(struct session *s, size_t n)
{
	assert(n <= s->in_len);
	memmove(s->in, s->in + n, s->in_len - n);
	s->in_len -= n;
}

void session_fail(struct session *s, enum session_why why)
{
	if (session_ended(s))
		return;
	s->phase = SESSION_FAILED;
	s->why = why;
}

bool session_ended(const struct session *s)
{
	return s->phase == SESSION_OVER || s->phase == SESSION_FAILED;
}

void session_start(struct session *s, const char *cookie)
{
	memset(s, 0, offsetof(struct session, in));
	s->phase = SESSION_PARAMS;
	s->why = WHY_NONE;
	memcpy(s->cookie, cookie, IPERF_COOKIE_LEN);
	queue_state(s, IPERF_PARAM_EXCHANGE);
}

/* Whether a whole JSON frame is at the front of in[] (*json and *len point
 * into it, *frame is what to consume); if not, *ev says what to do. */
static bool take_frame(struct session *s, const char **json, size_t *len, size_t *frame,
		       enum session_event *ev)
{
	switch (iperf_frame(s->in, s->in_len, json, len, frame)) {
	case IPERF_FRAME_COMPLETE:
		return true;
	case IPERF_FRAME_TOO_LONG:
		session_fail(s, WHY_BAD_LENGTH);
		*ev = SESSION_ENDED;
		return false;
	case IPERF_FRAME_INCOMPLETE:
		break;
	}
	*ev = SESSION_WAIT;
	return false;
}

static enum session_event step_params(struct session *s)
{
	const char *json;
	size_t len, frame;
	int error;
	enum session_event ev;

	if (!take_frame(s, &json, &len, &frame, &ev))
		return ev;
	switch (iperf_params_parse(json, len, &s->params, &error)) {
	case IPERF_PARSE_BAD:
		session_fail(s, WHY_BAD_JSON);
		return SESSION_ENDED;
	case IPERF_PARSE_REFUSED: {
		unsigned char msg[IPERF_ERROR_MSG_LEN];

		iperf_error_msg(error, 0, msg);
		queue(s, msg, sizeof(msg));
		s->error = error;
		session_fail(s, WHY_REFUSED);
		return SESSION_ENDED;
	}
	case IPERF_PARSE_OK:
		break;
	}
	consume(s, frame);
	queue_state(s, IPERF_CREATE_STREAMS);
	s->phase = SESSION_STREAMS;
	return SESSION_PARAMS_OK;
}

static enum session_event step_results(struct session *s)
{
	const char *json;
	size_t len, frame;
	enum session_event ev;

	if (!take_frame(s, &json, &len, &frame, &ev))
		return ev;
	if (iperf_results_parse(json, len, s->peer, IPERF_MAX_STREAMS, &s->npeer) != IPERF_PARSE_OK) {
		session_fail(s, WHY_BAD_JSON);
		return SESSION_ENDED;
	}
	consume(s, frame);
	s->phase = SESSION_DRAIN;
	return SESSION_PEER_RESULTS;
}

/* A state byte in the phases that take one. */
static enum session_event step_state(struct session *s)
{
	signed char b;

	if (s->in_len == 0)
		return SESSION_WAIT;
	b = (signed char)s->in[0];
	consume(s, 1);
	if (b == IPERF_CLIENT_TERMINATE) {
		session_fail(s, WHY_CLIENT_TERMINATE);
		return SESSION_ENDED;
	}
	if (s->phase == SESSION_RUNNING && b == IPERF_TEST_END) {
		queue_state(s, IPERF_EXCHANGE_RESULTS);
		s->phase = SESSION_RESULTS;
		return SESSION_TEST_END;
	}
	if (s->phase == SESSION_DONE && b == IPERF_DONE) {
		s->phase = SESSION_OVER;
		return SESSION_ENDED;
	}
	session_fail(s, WHY_BAD_STATE);
	return SESSION_ENDED;
}

enum session_event session_step(struct session *s)
{
	switch (s->phase) {
	case SESSION_PARAMS:
		return step_params(s);
	case SESSION_RESULTS:
		return step_results(s);
	case SESSION_STREAMS:
	case SESSION_RUNNING:
	case SESSION_DONE:
		return step_state(s);
	case SESSION_DRAIN:
		return SESSION_WAIT;
	case SESSION_OVER:
	case SESSION_FAILED:
		break;
	}
	return SESSION_ENDED;
}

void session_streams_ready(struct session *s)
{
	assert(s->phase == SESSION_STREAMS);
	if (s->phase != SESSION_STREAMS)
		return;
	queue_state(s, IPERF_TEST_START);
	queue_state(s, IPERF_TEST_RUNNING);
	s->phase = SESSION_RUNNING;
}

bool session_finish(struct session *s, const struct iperf_report *r)
{
	size_t n;

	assert(s->phase == SESSION_DRAIN);
	if (s->phase != SESSION_DRAIN)
		return false;
	/* Room for the DISPLAY_RESULTS byte after the results. */
	if (SESSION_OUT_MAX - s->out_len < 1 ||
	    !(n = iperf_results_frame(r, s->out + s->out_len, SESSION_OUT_MAX - s->out_len - 1))) {
		session_fail(s, WHY_IO);
		return false;
	}
	s->out_len += n;
	queue_state(s, IPERF_DISPLAY_RESULTS);
	s->phase = SESSION_DONE;
	return true;
}

void session_eof(struct session *s)
{
	if (s->phase == SESSION_DONE)
		s->phase = SESSION_OVER; /* results delivered; IPERF_DONE is a courtesy */
	else
		session_fail(s, WHY_CLOSED_EARLY);
}

void session_sent(struct session *s, size_t n)
{
	assert(n <= s->out_len);
	if (n > s->out_len)
		n = s->out_len;
	memmove(s->out, s->out + n, s->out_len - n);
	s->out_len -= n;
}

const char *session_why_name(enum session_why why)
{
	switch (why) {
	case WHY_NONE: return "none";
	case WHY_BAD_LENGTH: return "bad length";
	case WHY_BAD_JSON: return "bad json";
	case WHY_BAD_STATE: return "bad state";
	case WHY_REFUSED: return "refused";
	case WHY_CLIENT_TERMINATE: return "client terminated";
	case WHY_CLOSED_EARLY: return "closed early";
	case WHY_TIMEOUT: return "timed out";
	case WHY_IO: return "socket error";
	case WHY_STOPPED: return "server stopped";
	}
	return "?";
}
