/*
 * proto.c: iperf3's cookies, message frames, parameters and results (see
 * proto.h). Strict where a wrong value would make a wrong measurement (a
 * field of the wrong type, a stream count out of range), and answering with
 * iperf3's own error codes what is well formed but not offered here.
 */
#include "proto.h"

#include "json.h"

#include <string.h>

_Static_assert(sizeof(IPERF_SHUTDOWN_COOKIE) == IPERF_COOKIE_LEN, "the shutdown cookie is a cookie's size");

/* The characters of iperf3's cookies (make_cookie in its iperf_util.c). */
static bool is_cookie_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7');
}

bool iperf_cookie_valid(const char *c)
{
	for (size_t i = 0; i < IPERF_COOKIE_LEN - 1; i++)
		if (!is_cookie_char(c[i]))
			return false;
	return c[IPERF_COOKIE_LEN - 1] == '\0';
}

bool iperf_cookie_is_shutdown(const char *c)
{
	return memcmp(c, IPERF_SHUTDOWN_COOKIE, IPERF_COOKIE_LEN) == 0;
}

static uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

enum iperf_frame iperf_frame(const unsigned char *buf, size_t len, const char **json, size_t *json_len,
			     size_t *frame_len)
{
	uint32_t n;

	if (len < 4)
		return IPERF_FRAME_INCOMPLETE;
	n = get_be32(buf);
	if (n > IPERF_JSON_MAX)
		return IPERF_FRAME_TOO_LONG;
	if (len - 4 < n)
		return IPERF_FRAME_INCOMPLETE;
	*json = (const char *)buf + 4;
	*json_len = n;
	*frame_len = 4 + (size_t)n;
	return IPERF_FRAME_COMPLETE;
}

/* ---- parameters ---------------------------------------------------------- */

/*
 * An optional integer member in [lo, hi]. Returns 0 (absent: *v untouched,
 * or in range: *v set), -1 (present but no integer, or below lo: malformed)
 * or 1 (above hi: the caller refuses).
 */
static int get_int(const struct json_value *obj, const char *key, int64_t lo, int64_t hi, int64_t *v)
{
	struct json_value m;
	int64_t x;

	if (!json_member(obj, key, &m))
		return 0;
	if (!json_int64(&m, &x) || x < lo)
		return -1;
	if (x > hi)
		return 1;
	*v = x;
	return 0;
}

static bool has(const struct json_value *obj, const char *key)
{
	struct json_value m;

	return json_member(obj, key, &m);
}

/* Options whose mere presence asks for something this server does not do:
 * other protocols, both directions at once, authentication, per-packet
 * settings iperf3 applies with Linux-only socket options. */
static const char *const unsupported[] = {
	"udp", "sctp", "bidirectional", "authtoken", "MSS", "TOS", "flowlabel",
	"server_affinity", "fqrate", "burst",
};

enum iperf_parse iperf_params_parse(const char *json, size_t len, struct iperf_params *p, int *error)
{
	struct json_value root;
	int64_t omit = 0, time = 0, num = 0, blocks = 0, parallel = 1, len_ = 0, window = 0, rate = 0;
	int r;

	memset(p, 0, sizeof(*p));
	*error = 0;
	if (!json_parse(json, len, &root) || root.type != JSON_OBJECT)
		return IPERF_PARSE_BAD;

	/* Types first: a malformed message is malformed whatever else it asks. */
	if (get_int(&root, "omit", 0, INT64_MAX, &omit) < 0 ||
	    get_int(&root, "time", 0, INT64_MAX, &time) < 0 ||
	    get_int(&root, "num", 0, INT64_MAX, &num) < 0 ||
	    get_int(&root, "blockcount", 0, INT64_MAX, &blocks) < 0 ||
	    get_int(&root, "parallel", 0, INT64_MAX, &parallel) < 0 ||
	    get_int(&root, "len", 0, INT64_MAX, &len_) < 0 ||
	    get_int(&root, "window", 0, INT64_MAX, &window) < 0 ||
	    get_int(&root, "bandwidth", 0, INT64_MAX, &rate) < 0)
		return IPERF_PARSE_BAD;

	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
		if (has(&root, unsupported[i])) {
			*error = IPERF_IEUNIMP;
			return IPERF_PARSE_REFUSED;
		}
	if (omit != 0) {
		*error = IPERF_IEUNIMP; /* -O: the omitted seconds would need both sides' clocks */
		return IPERF_PARSE_REFUSED;
	}
	if ((r = get_int(&root, "time", 0, IPERF_MAX_TIME, &time)) != 0)
		*error = IPERF_IEDURATION;
	else if ((r = get_int(&root, "parallel", 1, IPERF_MAX_STREAMS, &parallel)) != 0)
		*error = IPERF_IENUMSTREAMS;
	else if ((r = get_int(&root, "len", 0, IPERF_MAX_BLOCK, &len_)) != 0)
		*error = IPERF_IEBLOCKSIZE;
	else if ((r = get_int(&root, "window", 0, IPERF_MAX_WINDOW, &window)) != 0)
		*error = IPERF_IEBUFSIZE;
	/* The types were checked above: r != 0 here is a value out of range
	 * (-P 0 included), which iperf3's own server refuses the same way. */
	if (r != 0)
		return IPERF_PARSE_REFUSED;

	p->time_secs = time;
	p->bytes = (uint64_t)num;
	p->blocks = (uint64_t)blocks;
	p->parallel = (int)parallel;
	p->len = len_ ? (size_t)len_ : IPERF_DEFAULT_BLOCK;
	p->window = window;
	p->bandwidth = (uint64_t)rate;
	p->reverse = has(&root, "reverse");
	p->nodelay = has(&root, "nodelay");
	return IPERF_PARSE_OK;
}

/* ---- results ------------------------------------------------------------- */

enum iperf_parse iperf_results_parse(const char *json, size_t len, struct iperf_stream_result *out,
				     size_t max, size_t *n)
{
	static const char *const required[] = {
		"cpu_util_total", "cpu_util_user", "cpu_util_system", "sender_has_retransmits",
	};
	struct json_value root, streams, s, m;
	size_t pos = 0;

	*n = 0;
	if (!json_parse(json, len, &root) || root.type != JSON_OBJECT)
		return IPERF_PARSE_BAD;
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!json_member(&root, required[i], &m) || m.type != JSON_NUMBER)
			return IPERF_PARSE_BAD;
	if (!json_member(&root, "streams", &streams) || streams.type != JSON_ARRAY)
		return IPERF_PARSE_BAD;
	while (json_next(&streams, &pos, NULL, &s)) {
		int64_t id = 0, bytes = 0;

		if (*n == max || s.type != JSON_OBJECT)
			return IPERF_PARSE_BAD;
		if (!json_member(&s, "id", &m) || !json_int64(&m, &id) || id < 1 || id > INT32_MAX)
			return IPERF_PARSE_BAD;
		if (!json_member(&s, "bytes", &m) || !json_int64(&m, &bytes) || bytes < 0)
			return IPERF_PARSE_BAD;
		out[*n].id = (int)id;
		out[*n].bytes = (uint64_t)bytes;
		out[*n].end_ns = 0;
		(*n)++;
	}
	return IPERF_PARSE_OK;
}

/* A duration in nanoseconds as seconds with six decimals. */
static void put_seconds(struct json_writer *w, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	jw_fixed6(w, ns / 1000000000, ns % 1000000000 / 1000);
}

static void put_percent(struct json_writer *w, int64_t micro)
{
	if (micro < 0)
		micro = 0;
	jw_fixed6(w, micro / 1000000, micro % 1000000);
}

size_t iperf_results_frame(const struct iperf_report *r, unsigned char *out, size_t cap)
{
	struct json_writer w;

	if (cap < 5)
		return 0;
	jw_init(&w, (char *)out + 4, cap - 4);
	jw_begin(&w, '{');
	jw_key(&w, "cpu_util_total");
	put_percent(&w, r->cpu_total_micro);
	jw_key(&w, "cpu_util_user");
	put_percent(&w, r->cpu_user_micro);
	jw_key(&w, "cpu_util_system");
	put_percent(&w, r->cpu_system_micro);
	/* As iperf3's server: -1 as the receiver; as the sender 0, "cannot
	 * tell" (iperf3 reads TCP_INFO, which the unikernel has no such thing as). */
	jw_key(&w, "sender_has_retransmits");
	jw_int(&w, r->sender ? 0 : -1);
	jw_key(&w, "streams");
	jw_begin(&w, '[');
	for (size_t i = 0; i < r->nstreams; i++) {
		const struct iperf_stream_result *s = &r->streams[i];

		jw_begin(&w, '{');
		jw_key(&w, "id");
		jw_int(&w, s->id);
		jw_key(&w, "bytes");
		jw_int(&w, (int64_t)s->bytes);
		jw_key(&w, "retransmits");
		jw_int(&w, -1);
		jw_key(&w, "jitter");
		jw_int(&w, 0);
		jw_key(&w, "errors");
		jw_int(&w, 0);
		jw_key(&w, "packets");
		jw_int(&w, 0);
		jw_key(&w, "start_time");
		put_seconds(&w, 0);
		jw_key(&w, "end_time");
		put_seconds(&w, s->end_ns);
		jw_end(&w, '}');
	}
	jw_end(&w, ']');
	jw_end(&w, '}');
	if (!jw_ok(&w) || w.len > IPERF_JSON_MAX)
		return 0;
	put_be32(out, (uint32_t)w.len);
	return 4 + w.len;
}

void iperf_error_msg(int error, int err_no, unsigned char out[IPERF_ERROR_MSG_LEN])
{
	out[0] = (unsigned char)(signed char)IPERF_SERVER_ERROR;
	put_be32(out + 1, (uint32_t)error);
	put_be32(out + 5, (uint32_t)err_no);
}
