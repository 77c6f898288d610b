/*
 * fuzz_iperf: the iperf server's control protocol on arbitrary bytes.
 *
 * An input is one byte that picks how the rest is cut into reads, then the
 * bytes a client sends on the control connection after its cookie. They go
 * through the server's own state machine (apps/iperf/session.c) read by read,
 * with the I/O layer's part played here: when the parameters are accepted
 * the data connections "arrive", when the client's results are in the
 * server's results are built from them, and at the end the client closes.
 * The whole input also goes to the JSON reader, the parameter and result
 * parsers and the cookie check directly.
 *
 * Checks what must hold whatever the input: buffers never overrun, every
 * value the JSON reader returns lies inside its text, a session ends only in
 * OVER or FAILED, and the results the server writes parse back (with our own
 * reader) to the very ids and byte counts they were built from.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "apps/iperf/json.h"
#include "apps/iperf/proto.h"
#include "apps/iperf/session.h"

static const char cookie[IPERF_COOKIE_LEN] = "abcdefghijklmnopqrstuvwxyz2345672345";

static void check(int cond)
{
	if (!cond)
		abort();
}

/* Walks every value under v, checking each lies inside [lo, hi). */
static void walk(const struct json_value *v, const char *lo, const char *hi, int depth)
{
	struct json_value key, child;
	size_t pos = 0;
	int64_t n;

	check(depth <= JSON_DEPTH_MAX + 1);
	check(v->start >= lo && v->len > 0 && v->start + v->len <= hi);
	if (v->type == JSON_NUMBER)
		json_int64(v, &n);
	if (v->type != JSON_ARRAY && v->type != JSON_OBJECT)
		return;
	while (json_next(v, &pos, v->type == JSON_OBJECT ? &key : NULL, &child)) {
		check(pos <= v->len);
		if (v->type == JSON_OBJECT)
			check(key.type == JSON_STRING && key.start > v->start && key.start + key.len < child.start);
		walk(&child, v->start, v->start + v->len, depth + 1);
	}
	if (v->type == JSON_OBJECT && json_member(v, "id", &child))
		check(child.start > v->start && child.start + child.len < v->start + v->len);
}

/* The parsers on the input as one JSON text. */
static void parse_directly(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct json_value root;
	struct iperf_params p;
	static struct iperf_stream_result res[IPERF_MAX_STREAMS];
	size_t n;
	int error;

	if (json_parse(text, size, &root))
		walk(&root, text, text + size, 0);
	switch (iperf_params_parse(text, size, &p, &error)) {
	case IPERF_PARSE_OK:
		check(p.parallel >= 1 && p.parallel <= IPERF_MAX_STREAMS);
		check(p.len >= 1 && p.len <= IPERF_MAX_BLOCK);
		check(p.time_secs >= 0 && p.time_secs <= IPERF_MAX_TIME);
		check(p.window >= 0 && p.window <= IPERF_MAX_WINDOW);
		break;
	case IPERF_PARSE_REFUSED:
		check(error > 0);
		break;
	case IPERF_PARSE_BAD:
		break;
	}
	if (iperf_results_parse(text, size, res, IPERF_MAX_STREAMS, &n) == IPERF_PARSE_OK)
		check(n <= IPERF_MAX_STREAMS);
	if (size >= IPERF_COOKIE_LEN)
		check(!iperf_cookie_valid(text) || !iperf_cookie_is_shutdown(text));
}

/* Plays the I/O layer's part for a PEER_RESULTS event: our results from the
 * client's, then checks they read back the same. */
static void finish_and_check(struct session *s, uint64_t salt)
{
	static struct iperf_stream_result mine[IPERF_MAX_STREAMS], back[IPERF_MAX_STREAMS];
	struct iperf_report r;
	size_t before = s->out_len, n, json_len, frame_len;
	const char *json;

	check(s->npeer <= IPERF_MAX_STREAMS);
	for (size_t i = 0; i < s->npeer; i++) {
		mine[i] = s->peer[i];
		mine[i].end_ns = (int64_t)((s->peer[i].bytes ^ salt) & 0x7fffffffffffLL);
	}
	memset(&r, 0, sizeof(r));
	r.sender = salt & 1;
	r.cpu_total_micro = (int64_t)(salt % 200000000);
	r.cpu_user_micro = r.cpu_total_micro / 3;
	r.cpu_system_micro = r.cpu_total_micro - r.cpu_user_micro;
	r.nstreams = s->npeer;
	r.streams = mine;
	check(session_finish(s, &r)); /* IPERF_MAX_STREAMS streams must fit */
	check(s->phase == SESSION_DONE && s->out_len <= SESSION_OUT_MAX);
	check(iperf_frame(s->out + before, s->out_len - before, &json, &json_len, &frame_len) ==
	      IPERF_FRAME_COMPLETE);
	check(before + frame_len + 1 == s->out_len && s->out[s->out_len - 1] == IPERF_DISPLAY_RESULTS);
	check(iperf_results_parse(json, json_len, back, IPERF_MAX_STREAMS, &n) == IPERF_PARSE_OK);
	check(n == s->npeer);
	for (size_t i = 0; i < n; i++)
		check(back[i].id == mine[i].id && back[i].bytes == mine[i].bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct session s;
	uint64_t rng;
	size_t off = 1;
	bool ended = false;

	parse_directly(data, size);
	if (size == 0)
		return 0;
	rng = data[0] * 0x9e3779b97f4a7c15ULL + 1;
	session_start(&s, cookie);
	while (!ended) {
		size_t room = SESSION_IN_MAX - s.in_len, chunk;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		chunk = (size_t)(rng >> 33) % 64 + 1;
		if (data[0] & 0x80)
			chunk = size; /* everything in one read */
		if (chunk > size - off)
			chunk = size - off;
		if (chunk > room)
			chunk = room;
		memcpy(s.in + s.in_len, data + off, chunk);
		s.in_len += chunk;
		off += chunk;
		for (;;) {
			enum session_event ev = session_step(&s);

			check(s.in_len <= SESSION_IN_MAX && s.out_len <= SESSION_OUT_MAX);
			if (ev == SESSION_WAIT)
				break;
			if (ev == SESSION_ENDED) {
				check(session_ended(&s));
				ended = true;
				break;
			}
			if (ev == SESSION_PARAMS_OK) {
				check(s.phase == SESSION_STREAMS);
				session_streams_ready(&s);
			} else if (ev == SESSION_TEST_END) {
				check(s.phase == SESSION_RESULTS);
			} else if (ev == SESSION_PEER_RESULTS) {
				check(s.phase == SESSION_DRAIN);
				finish_and_check(&s, rng);
			}
		}
		/* The network takes some of what the server queued. */
		session_sent(&s, (size_t)(rng >> 40) % (s.out_len + 1));
		if (!ended && (off == size || (chunk == 0 && room == 0))) {
			if (s.in_len == SESSION_IN_MAX)
				session_fail(&s, WHY_BAD_STATE); /* what the I/O layer does */
			else
				session_eof(&s);
			check(session_ended(&s));
			ended = true;
		}
	}
	check(s.phase == SESSION_OVER || (s.phase == SESSION_FAILED && s.why != WHY_NONE));
	return 0;
}
