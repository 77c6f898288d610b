/*
 * bulk: a TCP bulk-transfer server for the offload tests (issue 14,
 * tests/integration/driver/16-19). One poll loop, non-blocking sockets, any number
 * of connections at once (up to MAX_CONNS):
 *   port 9  sink:   reads until the client's FIN, then answers one line
 *                   "LEN CRC\n" (byte count, CRC-32 of the bytes as zlib
 *                   computes it, in hex) and closes;
 *   port 10 source: reads one line "LEN SEED\n", sends LEN bytes of the
 *                   pattern below, then closes;
 *   port 11 echo:   sends back every byte it reads, closes after the FIN;
 *   port 12 quit:   ends the server (exit status 0, counters printed).
 * It says "bulk: ready" once listening. The pattern, which the client
 * computes too: byte i of stream SEED is top(x(i mod 65536)) + 13 * (i /
 * 65536), mod 256, where top() is the top byte, x(0) = SEED and x(k+1) =
 * x(k) * 6364136223846793005 + 1442695040888963407 (64-bit): every 64 KiB
 * block differs, and the client builds them fast (bytes.translate).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 64
#define BUF 16384
enum kind { SINK, SOURCE, ECHO, QUIT, KINDS };
static const int port_of[KINDS] = { 9, 10, 11, 12 };

struct conn {
	int fd;                 /* -1: a free slot */
	enum kind kind;         /* which service */
	uint64_t len;           /* sink: bytes so far */
	uint32_t crc;           /* sink: their CRC-32, not yet complemented */
	char line[64];          /* source: the request as it arrives */
	size_t line_len;
	uint64_t to_send, sent; /* source: bytes left, and sent */
	uint64_t seed, x;       /* source: the pattern's seed (0: no request yet) and state */
	unsigned char out[BUF]; /* source and echo: bytes not yet written */
	size_t out_at, out_len;
	int eof;                /* echo: the client's FIN has come */
};

static struct conn conns[MAX_CONNS];
static int listeners[KINDS];

static int listen_on(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, MAX_CONNS) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK) < 0) {
		perror("bulk: listen");
		exit(1);
	}
	return fd;
}

static void end(struct conn *c)
{
	close(c->fd);
	c->fd = -1;
}

/* Fill c->out from the pattern. */
static void refill(struct conn *c)
{
	size_t n = c->to_send < BUF ? (size_t)c->to_send : BUF;
	for (size_t i = 0; i < n; i++, c->sent++) {
		if (c->sent % 65536 == 0)
			c->x = c->seed;
		c->out[i] = (unsigned char)((c->x >> 56) + 13 * (c->sent / 65536));
		c->x = c->x * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	c->out_at = 0, c->out_len = n;
	c->to_send -= n;
}

/* CRC-32 (IEEE 802.3, reflected), as zlib's crc32(). */
static uint32_t crc32_add(uint32_t crc, const unsigned char *p, long n)
{
	static uint32_t table[256];
	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320U ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	for (long i = 0; i < n; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

/* Write what c->out holds; false on an error (the connection is ended). */
static int flush_out(struct conn *c)
{
	while (c->out_at < c->out_len) {
		long w = write(c->fd, c->out + c->out_at, c->out_len - c->out_at);
		if (w < 0)
			return errno == EAGAIN;
		c->out_at += (size_t)w;
	}
	return 1;
}

/* Do what connection c can now. */
static void serve(struct conn *c)
{
	static unsigned char buf[BUF];
	long r;
	switch (c->kind) {
	case SINK:
		while ((r = read(c->fd, buf, sizeof buf)) > 0) {
			c->crc = crc32_add(c->crc, buf, r);
			c->len += (uint64_t)r;
		}
		if (r == 0) {
			char line[64];
			int n = snprintf(line, sizeof line, "%llu %08lx\n", (unsigned long long)c->len,
					 (unsigned long)(c->crc ^ 0xffffffffU));
			if (write(c->fd, line, (size_t)n) != n)
				printf("bulk: a sink's answer failed\n");
		}
		if (r == 0 || errno != EAGAIN)
			end(c);
		return;
	case SOURCE:
		if (!c->seed) { /* the request line first */
			while (c->line_len + 1 < sizeof c->line && (r = read(c->fd, c->line + c->line_len, 1)) == 1) {
				if (c->line[c->line_len++] == '\n') {
					unsigned long long len, seed;
					c->line[c->line_len] = 0;
					if (sscanf(c->line, "%llu %llu", &len, &seed) != 2 || !seed) {
						end(c);
						return;
					}
					c->to_send = len, c->seed = seed;
					break;
				}
			}
			if (!c->seed) {
				if (c->line_len + 1 >= sizeof c->line)
					end(c);
				return;
			}
		}
		for (;;) {
			if (!flush_out(c)) {
				end(c);
				return;
			}
			if (c->out_at < c->out_len)
				return; /* the window is full: wait for POLLOUT */
			if (!c->to_send) {
				end(c);
				return;
			}
			refill(c);
		}
	case ECHO:
		for (;;) {
			if (!flush_out(c)) {
				end(c);
				return;
			}
			if (c->out_at < c->out_len)
				return;
			if (c->eof) {
				end(c);
				return;
			}
			r = read(c->fd, c->out, sizeof c->out);
			if (r < 0 && errno == EAGAIN)
				return;
			if (r <= 0) {
				c->eof = 1; /* the FIN (or an error): what is read is all */
				continue;
			}
			c->out_at = 0, c->out_len = (size_t)r;
		}
	case QUIT:
	case KINDS:
		break;
	}
}

static void accept_on(enum kind k)
{
	int fd;
	while ((fd = accept(listeners[k], NULL, NULL)) >= 0) {
		if (k == QUIT) {
			printf("bulk: stopped\n");
			exit(0);
		}
		struct conn *c = NULL;
		for (int i = 0; i < MAX_CONNS && !c; i++)
			if (conns[i].fd < 0)
				c = &conns[i];
		if (!c || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK) < 0) {
			close(fd);
			continue;
		}
		memset(c, 0, sizeof *c);
		c->fd = fd, c->kind = k, c->crc = 0xffffffffU;
	}
}

int main(void)
{
	static struct pollfd pfd[KINDS + MAX_CONNS];
	static int which[KINDS + MAX_CONNS]; /* pfd slot -> connection, or -1 - kind */
	for (int i = 0; i < MAX_CONNS; i++)
		conns[i].fd = -1;
	for (int k = 0; k < KINDS; k++)
		listeners[k] = listen_on(port_of[k]);
	printf("bulk: ready\n");
	fflush(stdout);
	for (;;) {
		int n = 0;
		for (int k = 0; k < KINDS; k++)
			which[n] = -1 - k, pfd[n++] = (struct pollfd){ .fd = listeners[k], .events = POLLIN };
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &conns[i];
			if (c->fd < 0)
				continue;
			short ev = c->out_at < c->out_len || (c->kind == SOURCE && c->seed) ? POLLOUT : POLLIN;
			which[n] = i, pfd[n++] = (struct pollfd){ .fd = c->fd, .events = ev };
		}
		if (poll(pfd, (nfds_t)n, -1) < 0)
			continue;
		for (int s = 0; s < n; s++) {
			if (!pfd[s].revents)
				continue;
			if (which[s] < 0)
				accept_on((enum kind)(-1 - which[s]));
			else if (conns[which[s]].fd >= 0)
				serve(&conns[which[s]]);
		}
	}
}
