/*
 * pairs.c: building blocks of the socket tests: listeners, connected pairs,
 * checked reads, and the per-test setup and teardown that keep one test's
 * leftovers out of the next (lwIP runs once per process).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <cmocka.h>
#include "kernel/kernel.h"
#include "harness.h"

static struct sockaddr_in addr_of(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	assert_int_equal(inet_pton(AF_INET, LOOPNET_ADDR, &sin.sin_addr), 1);
	return sin;
}

int listen_on(uint16_t port, int backlog)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sin = addr_of(port);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(listen(fd, backlog), 0);
	return fd;
}

int connect_to(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sin = addr_of(port);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	return fd;
}

void make_pair(uint16_t port, int *client, int *server)
{
	int l = listen_on(port, 4);
	*client = connect_to(port);
	*server = accept(l, NULL, NULL);
	assert_true(*server >= 0);
	assert_int_equal(close(l), 0);
	pump();
}

uint16_t local_port_of(int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	return ntohs(sin.sin_port);
}

void set_nonblock(int fd)
{
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK), 0);
}

void set_nodelay(int fd)
{
	int one = 1;
	assert_int_equal(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
}

void read_pattern(int fd, size_t from, size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	assert_non_null(buf);
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EAGAIN) {
			settle_ms(10);
			continue;
		}
		assert_true(n > 0);
		got += (size_t)n;
	}
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pattern(from + i))
			fail_msg("byte %zu of the stream is %u, not %u", from + i, buf[i], pattern(from + i));
	free(buf);
}

int socket_test_setup(void **state)
{
	(void)state;
	fake_park_limit_ns = fake_now_ns + 120 * NSEC_PER_SEC;
	fake_wake_at_ns = UINT64_MAX;
	fake_wake_period_ns = 0;
	fake_park_min_deadline = UINT64_MAX;
	fake_park_max_deadline = 0;
	fake_tx_busy_looks = 0;
	fake_signal_at_ns = UINT64_MAX;
	fake_signals_run = 0;
	loopnet_lose_data_from(0, 0);
	loopnet_memory_short = false;
	seglog_clear();
	return 0;
}

int socket_test_teardown(void **state)
{
	(void)state;
	for (int fd = 0; fd < 64; fd++) {
		const struct file_ops *ops;
		void *obj;
		if (fd_lookup(fd, &ops, &obj) == 0)
			close(fd);
	}
	fake_park_limit_ns = UINT64_MAX;
	settle_ms(5000); /* FIN handshakes and TIME_WAIT (2 * TCP_MSL) end */
	assert_int_equal(probe_sockets_open(), 0);
	return 0;
}
