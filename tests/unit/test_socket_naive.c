/*
 * test_socket_naive.c: the socket layer built with two naive switches
 * (-DSW_WRITEV_ONE_SEND=0 -DSW_READ_NO_MARK=0, see unit.mk), checked to show
 * the difference test_socket.c rules out: writev's pieces leave as separate
 * segments, and polling or reading a socket puts it on the egress list. If
 * these pass with the default switches too, test_socket.c's assertions on the
 * same behaviour could not fail.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <cmocka.h>
#include "kernel/switches.h"
#include "net/net_internal.h"
#include "tests/unit/socket/harness.h"

#if SW_WRITEV_ONE_SEND || SW_READ_NO_MARK
#error "build this test with -DSW_WRITEV_ONE_SEND=0 -DSW_READ_NO_MARK=0"
#endif

/* Naive writev: one send and one flush per piece, so two data segments. */
static void test_writev_two_segments(void **state)
{
	(void)state;
	int c, s;
	make_pair(7101, &c, &s);
	uint8_t head[120], body[700];
	for (size_t i = 0; i < sizeof head; i++)
		head[i] = pattern(i);
	for (size_t i = 0; i < sizeof body; i++)
		body[i] = pattern(sizeof head + i);
	struct iovec iov[2] = { { head, sizeof head }, { body, sizeof body } };
	seglog_clear();
	assert_int_equal(writev(c, iov, 2), (ssize_t)(sizeof head + sizeof body));
	settle_ms(1000);
	assert_int_equal(seglog_data_from(local_port_of(c)), 2);
	read_pattern(s, 0, sizeof head + sizeof body);
}

/* Naive marking: a poll that finds nothing to send still lists the socket. */
static void test_poll_marks(void **state)
{
	(void)state;
	int c, s;
	make_pair(7102, &c, &s);
	pump();
	uint64_t marks = net_socket_counters.egress_marks;
	struct pollfd p = { .fd = c, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 0);
	pump();
	assert_true(net_socket_counters.egress_marks > marks);
	(void)s;
}

#define T(f) cmocka_unit_test_setup_teardown(f, socket_test_setup, socket_test_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_writev_two_segments),
		T(test_poll_marks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
