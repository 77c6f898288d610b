/*
 * rawhttp: a minimal HTTP/1.1 server on lwIP's raw TCP API, the test that
 * NIC -> lwIP -> TCP -> NIC works before any socket layer exists.
 *
 *   rawhttp [PORT]      (default 80)
 *
 * Every GET gets the same 200 response with a 41-byte body, written with one
 * tcp_write (no copy: the response is a constant) and one tcp_output.
 * Keep-alive follows HTTP: on by default in HTTP/1.1, on request in 1.0, off
 * with "Connection: close". A FIN from the client closes the connection;
 * malformed or oversized requests are counted and the connection closed.
 * GET /__shutdown is answered, then the server exits with status 0 (and the
 * network layer prints its counters). GET /__pieces is answered with the same
 * bytes written as 2-byte pieces, which lwIP chains into one segment of more
 * pbufs than the driver takes: the network layer's flattening path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lwip/tcp.h"
#include "kernel/kernel.h"
#include "net/net.h"
#include "drivers/virtio/virtio.h"

#define BODY "Hello from rawhttp, a raw-API lwIP test.\n"
_Static_assert(sizeof(BODY) - 1 == 41, "the body is 41 bytes");
#define HEAD(connection)                                                                   \
	"HTTP/1.1 200 OK\r\nServer: rawhttp\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n" \
	"Connection: " connection "\r\n\r\n"
static const char response_keep_alive[] = HEAD("keep-alive") BODY;
static const char response_close[] = HEAD("close") BODY;
/* A second copy, so that pieces alternating between the two are never
 * adjacent in memory (lwIP would merge adjacent ones). */
static const char response_keep_alive_copy[] = HEAD("keep-alive") BODY;
#define PIECE_BYTES 2
#define PIECES ((sizeof response_keep_alive - 1 + PIECE_BYTES - 1) / PIECE_BYTES)
_Static_assert(PIECES > VNET_MAX_SEGS, "more pieces than a frame may have");

/* A request head (request line and headers) may be this long; longer is an
 * error. */
#define REQUEST_MAX 2048
/* How long the server waits for the shutdown response to be acknowledged. */
#define SHUTDOWN_GRACE_NS (2 * NSEC_PER_SEC)
/* lwIP calls the poll callback every this many half-seconds. */
#define POLL_INTERVAL 4

/* One client connection. */
struct conn {
	struct tcp_pcb *pcb;       /* its lwIP pcb */
	size_t len;                /* bytes in buf */
	bool shutdown;             /* it asked for the shutdown */
	char buf[REQUEST_MAX];     /* received bytes not yet answered */
};

/* What the server counts, printed when it exits. */
static struct {
	unsigned long connections;  /* accepted */
	unsigned long requests;     /* answered */
	unsigned long bad_requests; /* not a well-formed GET: connection closed */
	unsigned long too_long;     /* request head over REQUEST_MAX: connection closed */
	unsigned long refused;      /* no memory for a new connection: aborted */
	unsigned long deferred;     /* send buffer full: answer waited for an ACK */
} stats;

/* Set when /__shutdown was answered; then when that answer was acknowledged. */
static bool shutdown_requested, shutdown_acked;

/* ---- request parsing ---------------------------------------------------- */

/* Length of the first complete request head in buf[0..len) (through the
 * blank line), or 0 when none is complete yet. */
static size_t head_length(const char *buf, size_t len)
{
	for (size_t i = 0; i + 3 < len; i++)
		if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n')
			return i + 4;
	return 0;
}

/* What a request asks for. */
struct request {
	bool keep_alive; /* the connection stays open after the answer */
	bool shutdown;   /* GET /__shutdown */
	bool pieces;     /* GET /__pieces */
};

/* Whether the header `name` (with its colon) in head[0..len) has a value
 * containing `word`, case-insensitively. */
static bool header_has(const char *head, size_t len, const char *name, const char *word)
{
	size_t name_len = strlen(name), word_len = strlen(word);
	for (size_t i = 0; i + 2 + name_len <= len; i++) {
		if (head[i] != '\r' || head[i + 1] != '\n' || strncasecmp(head + i + 2, name, name_len))
			continue;
		const char *value = head + i + 2 + name_len;
		const char *eol = value;
		while (eol < head + len && *eol != '\r')
			eol++;
		for (const char *p = value; p + word_len <= eol; p++)
			if (strncasecmp(p, word, word_len) == 0)
				return true;
	}
	return false;
}

/* Parse a request head; false when it is not a GET we understand. */
static bool parse_request(const char *head, size_t len, struct request *req)
{
	if (len < 14 || memcmp(head, "GET ", 4) != 0)
		return false;
	const char *target = head + 4;
	const char *space = memchr(target, ' ', len - 4);
	if (!space || space == target || (size_t)(head + len - space) < 10)
		return false;
	const char *version = space + 1;
	bool http11 = memcmp(version, "HTTP/1.1\r\n", 10) == 0;
	if (!http11 && memcmp(version, "HTTP/1.0\r\n", 10) != 0)
		return false;
	req->shutdown = (size_t)(space - target) == 11 && memcmp(target, "/__shutdown", 11) == 0;
	req->pieces = (size_t)(space - target) == 9 && memcmp(target, "/__pieces", 9) == 0;
	if (http11)
		req->keep_alive = !header_has(head, len, "Connection:", "close");
	else
		req->keep_alive = header_has(head, len, "Connection:", "keep-alive");
	return true;
}

/* ---- connections ---------------------------------------------------------- */

/* Detach our state from the pcb so lwIP calls us no more. */
static void conn_detach(struct conn *c)
{
	tcp_arg(c->pcb, NULL);
	tcp_recv(c->pcb, NULL);
	tcp_sent(c->pcb, NULL);
	tcp_err(c->pcb, NULL);
	tcp_poll(c->pcb, NULL, 0);
	free(c);
}

/* Close gracefully (queued data, then FIN); abort if even that fails.
 * Returns what a callback must return afterwards. */
static err_t conn_close(struct conn *c)
{
	struct tcp_pcb *pcb = c->pcb;
	conn_detach(c);
	if (tcp_close(pcb) != ERR_OK) {
		tcp_abort(pcb);
		return ERR_ABRT;
	}
	return ERR_OK;
}

static err_t conn_abort(struct conn *c)
{
	struct tcp_pcb *pcb = c->pcb;
	conn_detach(c);
	tcp_abort(pcb);
	return ERR_ABRT;
}

/* The keep-alive response as PIECES writes alternating between its two
 * copies; ERR_MEM (nothing written) unless all of it fits now. */
static err_t write_in_pieces(struct tcp_pcb *pcb)
{
	size_t len = sizeof response_keep_alive - 1, piece = PIECE_BYTES;
	if (tcp_sndbuf(pcb) < len || tcp_sndqueuelen(pcb) + PIECES + 1 > TCP_SND_QUEUELEN)
		return ERR_MEM;
	for (size_t off = 0, i = 0; off < len; off += piece, i++) {
		const char *from = (i % 2 ? response_keep_alive_copy : response_keep_alive) + off;
		size_t n = len - off < piece ? len - off : piece;
		err_t err = tcp_write(pcb, from, (u16_t)n, TCP_WRITE_FLAG_MORE);
		if (err != ERR_OK)
			return ERR_ABRT; /* half written: the stream is broken */
	}
	return ERR_OK;
}

/* Answer the complete requests in c->buf, in order, while the send buffer
 * has room. Returns what the calling callback must return. */
static err_t answer_requests(struct conn *c)
{
	size_t head;
	while ((head = head_length(c->buf, c->len)) > 0) {
		struct request req;
		if (!parse_request(c->buf, head, &req)) {
			stats.bad_requests++;
			return conn_close(c);
		}
		const char *response = req.keep_alive ? response_keep_alive : response_close;
		size_t response_len = req.keep_alive ? sizeof response_keep_alive - 1 : sizeof response_close - 1;
		err_t err = req.pieces && req.keep_alive
				    ? write_in_pieces(c->pcb)
				    : tcp_write(c->pcb, response, (u16_t)response_len, 0 /* constant: no copy */);
		if (err == ERR_MEM) {
			stats.deferred++;
			return ERR_OK; /* the sent callback tries again */
		}
		if (err != ERR_OK)
			return conn_abort(c);
		tcp_output(c->pcb);
		stats.requests++;
		memmove(c->buf, c->buf + head, c->len - head);
		c->len -= head;
		if (req.shutdown) {
			shutdown_requested = true;
			c->shutdown = true;
		}
		if (!req.keep_alive && !req.shutdown)
			return conn_close(c);
	}
	return ERR_OK;
}

/* lwIP: data arrived (p), or the client sent FIN (p == NULL). */
static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	struct conn *c = arg;
	(void)err; /* always ERR_OK in lwIP 2.1 */
	if (!p)
		return conn_close(c);
	if (c->len + p->tot_len > sizeof c->buf) {
		if (head_length(c->buf, c->len) > 0)
			return ERR_MEM; /* answers are pending: lwIP offers the data again later */
		stats.too_long++;
		pbuf_free(p);
		return conn_abort(c);
	}
	pbuf_copy_partial(p, c->buf + c->len, p->tot_len, 0);
	c->len += p->tot_len;
	tcp_recved(pcb, p->tot_len);
	pbuf_free(p);
	return answer_requests(c);
}

/* lwIP: the client acknowledged data: room to answer what is waiting, and
 * perhaps the shutdown answer has arrived. */
static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	struct conn *c = arg;
	(void)len;
	if (c->shutdown && !pcb->unsent && !pcb->unacked)
		shutdown_acked = true;
	return answer_requests(c);
}

/* lwIP: every POLL_INTERVAL half-seconds: retry answers deferred for memory. */
static err_t on_poll(void *arg, struct tcp_pcb *pcb)
{
	(void)pcb;
	return answer_requests(arg);
}

/* lwIP: the connection was reset or timed out; the pcb is already gone. */
static void on_error(void *arg, err_t err)
{
	(void)err;
	free(arg);
}

/* lwIP: a handshake completed on the listening pcb. */
static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
	(void)arg;
	if (err != ERR_OK || !pcb)
		return ERR_VAL;
	struct conn *c = malloc(sizeof *c);
	if (!c) {
		stats.refused++;
		tcp_abort(pcb);
		return ERR_ABRT;
	}
	c->pcb = pcb;
	c->len = 0;
	c->shutdown = false;
	stats.connections++;
	/* Each answer is written whole, so Nagle could only delay it. */
	tcp_nagle_disable(pcb);
	tcp_arg(pcb, c);
	tcp_recv(pcb, on_recv);
	tcp_sent(pcb, on_sent);
	tcp_err(pcb, on_error);
	tcp_poll(pcb, on_poll, POLL_INTERVAL);
	return ERR_OK;
}

/* ---- main ------------------------------------------------------------------- */

static struct tcp_pcb *listen_on(int port)
{
	struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
	if (!pcb)
		return NULL;
	if (tcp_bind(pcb, IP4_ADDR_ANY, (u16_t)port) != ERR_OK) {
		tcp_close(pcb);
		return NULL;
	}
	struct tcp_pcb *listener = tcp_listen(pcb);
	if (!listener) {
		tcp_close(pcb);
		return NULL;
	}
	tcp_accept(listener, on_accept);
	return listener;
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 80;
	if (port < 1 || port > 65535) {
		fprintf(stderr, "usage: rawhttp [PORT]\n");
		return 64;
	}
	if (net_init() < 0)
		return 1;
	if (!listen_on(port)) {
		fprintf(stderr, "rawhttp: cannot listen on port %d\n", port);
		return 1;
	}
	printf("rawhttp: listening on port %d\n", port);
	fflush(stdout);

	uint64_t give_up = UINT64_MAX; /* set once the shutdown was asked for */
	while (!shutdown_acked && clock_ns() < give_up) {
		net_poll();
		if (shutdown_requested && give_up == UINT64_MAX)
			give_up = clock_ns() + SHUTDOWN_GRACE_NS;
		if (!net_work_pending())
			net_wait(give_up);
	}
	printf("rawhttp: %lu connections, %lu requests, %lu bad, %lu too long, %lu refused, "
	       "%lu deferred\n",
	       stats.connections, stats.requests, stats.bad_requests, stats.too_long, stats.refused,
	       stats.deferred);
	exit(0);
}
