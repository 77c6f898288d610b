/*
 * sockcheck: POSIX behaviour of the socket layer and the executor inside the
 * guest, one numbered check per line ("ok N ..." or "not ok N ..."); the exit
 * status is the number of failed checks. Needs a NIC on QEMU's user network.
 *
 *   sockcheck [--refuse IP] [--udp-echo N]
 *     --refuse IP    where a connect is refused (default 10.0.2.2, the user
 *                    network's host; on tap, the namespace's host)
 *     --udp-echo N   at the end, echo N datagrams arriving on UDP port 7
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int n, failed;

static void check(int ok, const char *what)
{
	n++;
	if (!ok)
		failed++;
	printf("%s %d %s\n", ok ? "ok" : "not ok", n, what);
}

static long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static int listener(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 8) < 0)
		return -1;
	return fd;
}

/* UDP without a peer: what can be checked inside the guest alone. */
static void udp_checks(void)
{
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	check(u >= 0, "UDP socket");
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(7) };
	check(bind(u, (struct sockaddr *)&a, sizeof a) == 0, "UDP bind to port 7");
	struct sockaddr_in got;
	socklen_t len = sizeof got;
	check(getsockname(u, (struct sockaddr *)&got, &len) == 0 && ntohs(got.sin_port) == 7,
	      "UDP getsockname reports port 7");
	int r = (int)send(u, "x", 1, 0);
	check(r < 0 && errno == EDESTADDRREQ, "UDP send without a peer: EDESTADDRREQ");
	char buf[8];
	r = (int)recv(u, buf, sizeof buf, MSG_DONTWAIT);
	check(r < 0 && errno == EAGAIN, "UDP recv with nothing queued, non-blocking: EAGAIN");
	int avail = -1;
	check(ioctl(u, FIONREAD, &avail) == 0 && avail == 0, "UDP FIONREAD with nothing queued: 0");
	close(u);
}

static void udp_echo(int count)
{
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(7) };
	bind(u, (struct sockaddr *)&a, sizeof a);
	printf("udp echo: listening on port 7\n");
	fflush(stdout);
	for (int i = 0; i < count; i++) {
		char buf[2048];
		struct sockaddr_in from;
		socklen_t len = sizeof from;
		ssize_t n = recvfrom(u, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
		if (n < 0 || sendto(u, buf, (size_t)n, 0, (struct sockaddr *)&from, len) != n) {
			printf("udp echo: failed at datagram %d\n", i);
			failed++;
			break;
		}
	}
	printf("udp echo: done\n");
	close(u);
}

int main(int argc, char **argv)
{
	const char *refuse_at = "10.0.2.2";
	int echo = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--refuse") == 0)
			refuse_at = argv[i + 1];
		else if (strcmp(argv[i], "--udp-echo") == 0)
			echo = atoi(argv[i + 1]);
	}
	int lfd = listener(7000);
	check(lfd >= 3, "socket, bind, listen");

	struct pollfd p = { .fd = lfd, .events = POLLIN };
	long t0 = now_ms();
	int r = poll(&p, 1, 300);
	long took = now_ms() - t0;
	printf("# poll(300 ms) returned %d after %ld ms\n", r, took);
	check(r == 0 && took >= 300 && took < 1000, "poll with a timeout returns 0 on time with no traffic");

	t0 = now_ms();
	r = poll(&p, 1, 0);
	check(r == 0 && now_ms() - t0 < 50, "poll with timeout 0 returns at once");

	t0 = now_ms();
	usleep(50000);
	took = now_ms() - t0;
	check(took >= 50 && took < 500, "usleep(50 ms) with the network up");

	int one = 1, zero = 0, v = -1;
	socklen_t len = sizeof v;
	int c = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &len);
	check(v == 1, "TCP_NODELAY 1 reads back 1");
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &zero, sizeof zero);
	getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &len);
	check(v == 0, "TCP_NODELAY 0 reads back 0");

	/* Nobody listens on port 1 of the host side, so the connection is refused
	 * (QEMU's user network forwards 10.0.2.2 to the host's loopback). */
	struct sockaddr_in gw = { .sin_family = AF_INET, .sin_port = htons(1) };
	inet_pton(AF_INET, refuse_at, &gw.sin_addr);
	r = connect(c, (struct sockaddr *)&gw, sizeof gw);
	printf("# connect to %s:1: %d errno %d\n", refuse_at, r, errno);
	check(r < 0 && errno == ECONNREFUSED, "connect to a closed port: ECONNREFUSED");
	close(c);

	int fresh = socket(AF_INET, SOCK_STREAM, 0);
	struct pollfd fp = { .fd = fresh, .events = POLLIN | POLLOUT };
	check(poll(&fp, 1, 0) == 1 && fp.revents == (POLLOUT | POLLHUP),
	      "a socket never connected polls POLLOUT|POLLHUP, as on Linux");
	close(fresh);

	int second = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(7000) };
	r = bind(second, (struct sockaddr *)&a, sizeof a);
	check(r < 0 && errno == EADDRINUSE, "bind to a port in use: EADDRINUSE");
	r = accept(second, NULL, NULL);
	check(r < 0 && errno == EINVAL, "accept on a socket that does not listen: EINVAL");
	char buf[4];
	r = (int)read(second, buf, sizeof buf);
	check(r < 0 && errno == ENOTCONN, "read on an unconnected socket: ENOTCONN");
	r = (int)write(second, "x", 1);
	check(r < 0 && errno == ENOTCONN, "write on an unconnected socket: ENOTCONN");
	close(second);
	r = (int)read(second, buf, sizeof buf);
	check(r < 0 && errno == EBADF, "read on a closed descriptor: EBADF");
	r = accept(1, NULL, NULL);
	check(r < 0 && errno == ENOTSOCK, "accept on the console: ENOTSOCK");

	int fds[4096], opened = 0;
	while (opened < 4096 && (fds[opened] = socket(AF_INET, SOCK_STREAM, 0)) >= 0)
		opened++;
	int e = errno;
	printf("# %d more sockets before failing with errno %d\n", opened, e);
	check(opened > 1000 && e == EMFILE, "descriptors run out with EMFILE");
	while (opened--)
		close(fds[opened]);
	int again = socket(AF_INET, SOCK_STREAM, 0);
	check(again >= 0, "closed descriptors are reused");
	close(again);

	close(lfd);
	lfd = listener(7000);
	check(lfd >= 0, "a closed listener's port can be bound again");
	int l1 = socket(AF_INET, SOCK_STREAM, 0), l2 = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in p7001 = { .sin_family = AF_INET, .sin_port = htons(7001) };
	setsockopt(l1, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	setsockopt(l2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	r = bind(l1, (struct sockaddr *)&p7001, sizeof p7001) == 0 ? listen(l1, 4) : -1;
	check(r == 0, "SO_REUSEADDR, bind, listen");
	/* Linux refuses at bind; lwIP lets the bind pass and refuses the listen. */
	r = bind(l2, (struct sockaddr *)&p7001, sizeof p7001) == 0 ? listen(l2, 4) : -1;
	check(r < 0 && errno == EADDRINUSE, "a second listener on a port, both SO_REUSEADDR: EADDRINUSE");
	close(l1);
	close(l2);
	udp_checks();
	if (echo)
		udp_echo(echo);
	printf("%d passed, %d failed\n", n - failed, failed);
	return failed;
}
