/*
 * rxsink: an app that falls behind its network, for the receive-exhaustion
 * test (tests/integration/hostile/38-rx-exhaustion-tap.sh). It binds TCP and UDP port
 * 9, says "rxsink: ready", and then reads nothing for DELAY seconds while
 * clients send: TCP windows close, the pbuf pool runs dry, the UDP queue
 * overflows, and the layers below drop and count. Then it reads everything:
 *   - UDP: each datagram carries its own sequence number and a check word;
 *     prints "rxsink: udp received R intact I corrupt C".
 *   - TCP (non-blocking, one poll loop): for each of CONNS connections, the byte count and FNV-1a hash of
 *     everything received until the client's FIN, sent back as one line
 *     "LEN HASH\n" before closing; prints "rxsink: tcp connections N bytes B".
 * Exit status 0 when all CONNS connections were served and no datagram was
 * corrupt.
 *
 *   rxsink [-d DELAY] [-n CONNS]     defaults: 3 s, 64 connections
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

#define PORT 9
#define MAX_CONNS 512

struct conn {
	int fd;
	uint64_t len, hash;
};

static int bound_socket(int type)
{
	int fd = socket(AF_INET, type, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    (type == SOCK_STREAM && listen(fd, MAX_CONNS) < 0)) {
		perror("rxsink: socket");
		exit(1);
	}
	return fd;
}

/* A datagram is: 4-byte sequence number, then bytes seq*7+i (mod 251), then
 * nothing else; any other content is corruption. */
static int datagram_intact(const unsigned char *d, long len)
{
	if (len < 4)
		return 0;
	uint32_t seq = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
	for (long i = 4; i < len; i++)
		if (d[i] != (unsigned char)((seq * 7 + (uint32_t)i) % 251))
			return 0;
	return 1;
}

static int drain_udp(int u)
{
	static unsigned char buf[2048];
	long received = 0, intact = 0;
	for (;;) {
		long n = recv(u, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0)
			break;
		received++;
		intact += datagram_intact(buf, n);
	}
	printf("rxsink: udp received %ld intact %ld corrupt %ld\n", received, intact, received - intact);
	return received == intact;
}

static void fnv1a(struct conn *c, const unsigned char *p, long n)
{
	for (long i = 0; i < n; i++)
		c->hash = (c->hash ^ p[i]) * 0x100000001b3ULL;
	c->len += (uint64_t)n;
}

/* Read what c has; at its FIN answer "LEN HASH" and close. True when done. */
static int read_conn(struct conn *c)
{
	static unsigned char buf[16384];
	long r;
	while ((r = read(c->fd, buf, sizeof buf)) > 0)
		fnv1a(c, buf, r);
	if (r < 0 && errno == EAGAIN)
		return 0;
	if (r == 0) {
		char line[64];
		int len = snprintf(line, sizeof line, "%llu %016llx\n", (unsigned long long)c->len,
				   (unsigned long long)c->hash);
		if (write(c->fd, line, (size_t)len) != len)
			printf("rxsink: an answer failed: %s\n", strerror(errno));
	}
	close(c->fd);
	c->fd = -1;
	return 1;
}

static int serve_tcp(int l, int conns)
{
	static struct conn c[MAX_CONNS];
	static struct pollfd pfd[MAX_CONNS + 1];
	static int which[MAX_CONNS + 1]; /* pfd slot -> connection */
	int accepted = 0, done = 0;
	uint64_t total = 0;
	while (done < conns) {
		int n = 0;
		if (accepted < conns)
			which[n] = -1, pfd[n++] = (struct pollfd){ .fd = l, .events = POLLIN };
		for (int i = 0; i < accepted; i++)
			if (c[i].fd >= 0)
				which[n] = i, pfd[n++] = (struct pollfd){ .fd = c[i].fd, .events = POLLIN };
		if (poll(pfd, (nfds_t)n, 30000) <= 0) {
			printf("rxsink: stalled with %d of %d connections done\n", done, conns);
			return 0;
		}
		for (int k = 0; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (which[k] < 0) {
				int fd = accept(l, NULL, NULL);
				if (fd >= 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK) == 0)
					c[accepted++] = (struct conn){ fd, 0, 0xcbf29ce484222325ULL };
				else if (fd >= 0)
					close(fd);
			} else if (read_conn(&c[which[k]])) {
				total += c[which[k]].len;
				done++;
			}
		}
	}
	printf("rxsink: tcp connections %d bytes %llu\n", done, (unsigned long long)total);
	return 1;
}

int main(int argc, char **argv)
{
	int delay = 3, conns = 64, opt;
	while ((opt = getopt(argc, argv, "d:n:")) != -1) {
		if (opt == 'd')
			delay = atoi(optarg);
		else if (opt == 'n' && atoi(optarg) > 0 && atoi(optarg) <= MAX_CONNS)
			conns = atoi(optarg);
		else {
			fprintf(stderr, "usage: rxsink [-d DELAY] [-n CONNS (1-%d)]\n", MAX_CONNS);
			return 64;
		}
	}
	int l = bound_socket(SOCK_STREAM), u = bound_socket(SOCK_DGRAM);
	printf("rxsink: ready\n");
	fflush(stdout);
	sleep((unsigned)delay); /* falling behind: the network runs, nobody reads */
	int ok = drain_udp(u);
	ok &= serve_tcp(l, conns);
	close(u);
	close(l);
	return ok ? 0 : 1;
}
