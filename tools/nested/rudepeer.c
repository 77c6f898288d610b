/*
 * rudepeer.c: the peers that misbehave toward httpd in the nested-KVM
 * scenarios, which L1 runs without Python (test 35,
 * tests/integration/hostile/35-rude-peers-tap.sh, does the same from Python
 * under TCG). Each mode talks to HOST's port 80:
 *
 *   rudepeer HOST reset N        N connections that send a request and reset
 *                                (SO_LINGER 0) before the answer can be read
 *   rudepeer HOST halfclose N    N connections that send a request and shut
 *                                their sending side: each must get the whole
 *                                answer, then the server's close, no reset
 *   rudepeer HOST vanish N       N connections that send four requests and
 *                                never read; an ordinary client is served
 *                                while they are open; then they close (with
 *                                answers unread: resets)
 *   rudepeer HOST insane IFNAME  a connection whose SYN, seen on IFNAME,
 *                                gives its sequence number; a one-byte
 *                                segment 2^31 before the next expected one,
 *                                sent raw (once a remote panic through an
 *                                lwIP assertion); the connection's request
 *                                must still be answered
 *
 * After each, an ordinary client (one request, Connection: close) must get
 * httpd's answer to GET /. Exit 0 when all of it held; 1 with a line saying
 * what went wrong; 3 when the server went quiet (a connect or a read that
 * timed out: the scenarios take that for a stalled guest, docs/kvm.md); 2
 * on bad arguments. insane needs root (a packet socket and a raw one).
 * Built static (tools/nested/nested.mk), so it runs in L1 without
 * libraries.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define PORT 80
#define MAX_CONNS 64      /* vanish's connections held open at once */
#define ANSWER_MAX 65536  /* the most of one answer kept */
#define WAIT_SECS 10      /* each connect and each read */

static const char REQUEST[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
static const char REQUEST_CLOSE[] = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
static const char STATUS_OK[] = "HTTP/1.1 200 OK\r\n";
static const char HELLO[] = "Hello from httpd, a poll()-based server.\n";

static struct sockaddr_in server; /* HOST:PORT */

/* What a connection received until the server closed it. */
struct answer {
	char bytes[ANSWER_MAX]; /* the first ANSWER_MAX bytes received */
	size_t len;             /* how many of bytes[] hold data */
	bool reset;             /* the server reset the connection */
	bool timed_out;         /* no close within WAIT_SECS of the last byte */
};

static void fail(const char *what)
{
	printf("rudepeer: FAIL: %s\n", what);
	exit(1);
}

/* A failed call: a timeout is the server gone quiet (3), anything else a
 * failure (1). */
static void fail_errno(const char *what)
{
	bool quiet = errno == EAGAIN || errno == EWOULDBLOCK || errno == EINPROGRESS || errno == ETIMEDOUT;

	printf("rudepeer: %s: %s: %s\n", quiet ? "QUIET" : "FAIL", what, strerror(errno));
	exit(quiet ? 3 : 1);
}

static void quiet(const char *what)
{
	printf("rudepeer: QUIET: %s\n", what);
	exit(3);
}

/* A connection to HOST:PORT; connect and reads give up after WAIT_SECS. */
static int connect_server(void)
{
	struct timeval wait = { .tv_sec = WAIT_SECS };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0)
		fail_errno("socket");
	/* On Linux the send timeout bounds connect() too. */
	if (setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait)) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) < 0)
		fail_errno("setsockopt");
	if (connect(s, (struct sockaddr *)&server, sizeof(server)) < 0)
		fail_errno("connect");
	return s;
}

static void send_all(int s, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(s, buf, len, MSG_NOSIGNAL);

		if (n <= 0)
			fail_errno("send");
		buf += n;
		len -= (size_t)n;
	}
}

/* Reads s until the server closes it, resets it, or goes quiet. */
static void read_to_close(int s, struct answer *a)
{
	char chunk[4096];

	a->len = 0;
	a->reset = a->timed_out = false;
	for (;;) {
		ssize_t n = recv(s, chunk, sizeof(chunk), 0);

		if (n == 0)
			return;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			a->reset = errno == ECONNRESET;
			a->timed_out = errno == EAGAIN || errno == EWOULDBLOCK;
			if (!a->reset && !a->timed_out)
				fail_errno("recv");
			return;
		}
		if ((size_t)n > sizeof(a->bytes) - a->len)
			n = (ssize_t)(sizeof(a->bytes) - a->len);
		memcpy(a->bytes + a->len, chunk, (size_t)n);
		a->len += (size_t)n;
	}
}

static bool starts_with(const struct answer *a, const char *s)
{
	size_t n = strlen(s);

	return a->len >= n && memcmp(a->bytes, s, n) == 0;
}

static bool ends_with(const struct answer *a, const char *s)
{
	size_t n = strlen(s);

	return a->len >= n && memcmp(a->bytes + a->len - n, s, n) == 0;
}

/* An ordinary client gets the answer to GET /, and then the close. */
static void served(const char *when)
{
	static struct answer a;
	char why[200];
	int s = connect_server();

	send_all(s, REQUEST_CLOSE, strlen(REQUEST_CLOSE));
	read_to_close(s, &a);
	close(s);
	if (a.timed_out && a.len == 0) {
		snprintf(why, sizeof(why), "%s: no answer to an ordinary client", when);
		quiet(why);
	}
	if (a.reset || a.timed_out || !starts_with(&a, STATUS_OK) || !ends_with(&a, HELLO)) {
		snprintf(why, sizeof(why), "%s: an ordinary client got %zu bytes%s%s, not the answer to GET /",
			 when, a.len, a.reset ? " and a reset" : "", a.timed_out ? " and no close" : "");
		fail(why);
	}
}

static void resets(int n)
{
	struct linger abort_on_close = { .l_onoff = 1, .l_linger = 0 };

	for (int i = 0; i < n; i++) {
		int s = connect_server();

		send_all(s, REQUEST, strlen(REQUEST));
		if (setsockopt(s, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof(abort_on_close)) < 0)
			fail_errno("SO_LINGER");
		close(s);
	}
	served("after the resets");
	printf("rudepeer: %d resets right after the request: still serving\n", n);
}

static void half_closes(int n)
{
	static struct answer a;

	for (int i = 0; i < n; i++) {
		int s = connect_server();

		send_all(s, REQUEST, strlen(REQUEST));
		if (shutdown(s, SHUT_WR) < 0)
			fail_errno("shutdown");
		read_to_close(s, &a);
		close(s);
		if (a.reset)
			fail("half-close: the server reset the connection");
		if (a.timed_out && a.len == 0)
			quiet("half-close: no answer");
		if (a.timed_out)
			fail("half-close: the server did not close the connection");
		if (!starts_with(&a, STATUS_OK) || !ends_with(&a, HELLO))
			fail("half-close: not the whole answer to GET /");
	}
	served("after the half-closes");
	printf("rudepeer: %d half-closes: each answered, then closed by the server\n", n);
}

static void vanishing(int n)
{
	int held[MAX_CONNS];

	for (int i = 0; i < n; i++) {
		held[i] = connect_server();
		for (int k = 0; k < 4; k++)
			send_all(held[i], REQUEST, strlen(REQUEST));
	}
	served("beside clients that do not read");
	for (int i = 0; i < n; i++)
		close(held[i]);
	served("after clients that vanished");
	printf("rudepeer: %d clients that sent and vanished: still serving\n", n);
}

/* The Internet checksum of len bytes, folded onto sum. */
static uint16_t checksum(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)(p[len - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* The sequence number of the SYN from lport to PORT, read off sniff. */
static uint32_t syn_sequence(int sniff, uint16_t lport)
{
	uint8_t frame[2048];

	for (;;) {
		ssize_t n = recv(sniff, frame, sizeof(frame), 0);
		const uint8_t *ip = frame + ETH_HLEN, *tcp;
		size_t ihl;

		if (n < 0)
			fail("no SYN of ours seen on the interface within 5 s");
		if ((size_t)n < ETH_HLEN + 20 || frame[12] != 0x08 || frame[13] != 0x00)
			continue; /* not IPv4 */
		ihl = (size_t)(ip[0] & 0xf) * 4;
		if (ihl < 20 || (size_t)n < ETH_HLEN + ihl + 20 || ip[9] != IPPROTO_TCP)
			continue;
		tcp = ip + ihl;
		if ((tcp[0] << 8 | tcp[1]) == lport && (tcp[2] << 8 | tcp[3]) == PORT && (tcp[13] & 0x02))
			return (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 | (uint32_t)tcp[6] << 8 | tcp[7];
	}
}

static void insane_segment(const char *ifname)
{
	struct timeval wait = { .tv_sec = 5 };
	struct sockaddr_ll link = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct sockaddr_in local;
	socklen_t local_len = sizeof(local);
	uint8_t packet[20 + 20 + 1] = { 0 }, pseudo[12 + 20 + 1];
	uint8_t *tcp = packet + 20;
	struct timespec pause = { .tv_nsec = 500000000 };
	static struct answer a;
	uint32_t seq;
	int sniff, raw, s;
	ssize_t n;

	link.sll_ifindex = (int)if_nametoindex(ifname);
	if (link.sll_ifindex == 0)
		fail_errno(ifname);
	/* Every frame on the interface, our own outgoing ones too. */
	sniff = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (sniff < 0 || bind(sniff, (struct sockaddr *)&link, sizeof(link)) < 0 ||
	    setsockopt(sniff, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) < 0)
		fail_errno("packet socket");
	s = connect_server();
	if (getsockname(s, (struct sockaddr *)&local, &local_len) < 0)
		fail_errno("getsockname");
	seq = syn_sequence(sniff, ntohs(local.sin_port));
	close(sniff);

	/* PSH|ACK, one byte, 2^31 before the server's next expected byte. */
	put16(tcp, ntohs(local.sin_port));
	put16(tcp + 2, PORT);
	put32(tcp + 4, seq + 1 - 0x80000000u);
	tcp[12] = 5 << 4;
	tcp[13] = 0x18;
	put16(tcp + 14, 64240);
	tcp[20] = 'x';
	memcpy(pseudo, &local.sin_addr, 4);
	memcpy(pseudo + 4, &server.sin_addr, 4);
	pseudo[9] = IPPROTO_TCP;
	put16(pseudo + 10, 21);
	memcpy(pseudo + 12, tcp, 21);
	put16(tcp + 16, checksum(pseudo, sizeof(pseudo), 0));
	packet[0] = 0x45;
	put16(packet + 2, sizeof(packet));
	packet[8] = 64;
	packet[9] = IPPROTO_TCP;
	memcpy(packet + 12, &local.sin_addr, 4);
	memcpy(packet + 16, &server.sin_addr, 4);
	put16(packet + 10, checksum(packet, 20, 0));
	raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (raw < 0)
		fail_errno("raw socket");
	n = sendto(raw, packet, sizeof(packet), 0, (struct sockaddr *)&server, sizeof(server));
	if (n != (ssize_t)sizeof(packet))
		fail_errno("sending the hostile segment");
	close(raw);

	nanosleep(&pause, NULL);
	send_all(s, REQUEST_CLOSE, strlen(REQUEST_CLOSE));
	read_to_close(s, &a);
	close(s);
	if (a.timed_out && a.len == 0)
		quiet("no answer after the hostile segment");
	if (!starts_with(&a, STATUS_OK))
		fail("not the answer to GET / after the hostile segment");
	served("after the hostile segment");
	printf("rudepeer: a segment 2^31 before the expected sequence number: still serving\n");
}

/* A count argument, 1 to max; anything else is refused. */
static int count(const char *arg, int max)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*arg == '\0' || *end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "rudepeer: the count must be 1 to %d, not '%s'\n", max, arg);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	server.sin_family = AF_INET;
	server.sin_port = htons(PORT);
	if (argc != 4 || inet_pton(AF_INET, argv[1], &server.sin_addr) != 1) {
		fprintf(stderr, "usage: rudepeer HOST reset|halfclose|vanish N\n"
				"       rudepeer HOST insane IFNAME\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[2], "reset") == 0)
		resets(count(argv[3], 10000));
	else if (strcmp(argv[2], "halfclose") == 0)
		half_closes(count(argv[3], 10000));
	else if (strcmp(argv[2], "vanish") == 0)
		vanishing(count(argv[3], MAX_CONNS));
	else if (strcmp(argv[2], "insane") == 0)
		insane_segment(argv[3]);
	else {
		fprintf(stderr, "rudepeer: no mode '%s'\n", argv[2]);
		return 2;
	}
	return 0;
}
