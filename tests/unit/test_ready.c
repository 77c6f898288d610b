/*
 * test_ready.c: unit tests of httpd's readiness wait (apps/httpd/ready.h),
 * built twice: over poll() (ready_poll.c) and over epoll (ready_epoll.c).
 * Both must report the same thing over real sockets (socket pairs): nothing
 * when nothing is ready, what was asked for when it is, a hang-up whether
 * asked for or not, a change of interest from the next wait on, and after a
 * descriptor is removed and closed, nothing of its past for the next
 * descriptor that gets its number; hundreds of descriptors at once, past
 * the room the set was made with; a descriptor it does not watch refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "apps/httpd/ready.h"

/* A connected pair: [0] is watched, [1] is the peer the test acts through. */
static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void put(int fd)
{
	assert_int_equal(write(fd, "x", 1), 1);
}

static void take(int fd)
{
	char c;

	assert_int_equal(read(fd, &c, 1), 1);
}

/* The set of most tests: made for 2, and a pair whose [0] the test adds with
 * the interest it wants; the teardown removes [0] and closes both ends
 * (a test that closes [1] itself sets it to -1). */
struct one {
	struct ready *r;
	int sv[2];
};

static int one_pair(void **state)
{
	static struct one t;

	t.r = ready_new(2);
	assert_non_null(t.r);
	pair(t.sv);
	*state = &t;
	return 0;
}

static int one_pair_done(void **state)
{
	struct one *t = *state;

	ready_del(t->r, t->sv[0]);
	close(t->sv[0]);
	if (t->sv[1] >= 0)
		close(t->sv[1]);
	ready_free(t->r);
	return 0;
}

/* A wait that returns at once reports n descriptors, fd's events among them
 * revents; a failure names the caller's line. */
static void waits_at(struct ready *r, int fd, int n, int revents, int line)
{
	_assert_int_equal(ready_wait(r, 0), n, __FILE__, line);
	_assert_int_equal(ready_revents(r, fd), revents, __FILE__, line);
}
#define waits(r, fd, n, revents) waits_at(r, fd, n, revents, __LINE__)

static void test_nothing_then_readable(void **state)
{
	struct one *t = *state;

	assert_int_equal(ready_add(t->r, t->sv[0], POLLIN), 0);
	waits(t->r, t->sv[0], 0, 0);

	put(t->sv[1]);
	waits(t->r, t->sv[0], 1, POLLIN);
	/* Level-triggered: still readable, still reported. */
	waits(t->r, t->sv[0], 1, POLLIN);
	take(t->sv[0]);
	waits(t->r, t->sv[0], 0, 0);
}

static void test_interest_changes(void **state)
{
	struct one *t = *state;

	assert_int_equal(ready_add(t->r, t->sv[0], POLLIN), 0);
	assert_int_equal(ready_want(t->r, t->sv[0], POLLOUT), 0);
	waits(t->r, t->sv[0], 1, POLLOUT);
	/* The same interest again changes nothing. */
	assert_int_equal(ready_want(t->r, t->sv[0], POLLOUT), 0);
	waits(t->r, t->sv[0], 1, POLLOUT);

	put(t->sv[1]);
	assert_int_equal(ready_want(t->r, t->sv[0], POLLIN | POLLOUT), 0);
	waits(t->r, t->sv[0], 1, POLLIN | POLLOUT);
	/* Nothing asked: a readable socket is not reported. */
	assert_int_equal(ready_want(t->r, t->sv[0], 0), 0);
	waits(t->r, t->sv[0], 0, 0);
}

static void test_hangup_unasked(void **state)
{
	struct one *t = *state;

	assert_int_equal(ready_add(t->r, t->sv[0], 0), 0);
	close(t->sv[1]);
	t->sv[1] = -1;
	assert_int_equal(ready_wait(t->r, 0), 1);
	assert_true(ready_revents(t->r, t->sv[0]) & POLLHUP);
	assert_false(ready_revents(t->r, t->sv[0]) & POLLIN);
}

static void test_timeout(void **state)
{
	struct one *t = *state;
	struct timespec t0, t1;
	long ms;

	assert_int_equal(ready_add(t->r, t->sv[0], POLLIN), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ready_wait(t->r, 50), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 40);
}

/* A descriptor removed and closed after it was reported leaves nothing to
 * the next one that gets its number, before or after the next wait. */
static void test_number_reused(void **state)
{
	struct ready *r = ready_new(2);
	int a[2], b[2], c[2], old;

	(void)state;
	pair(a);
	pair(b);
	assert_int_equal(ready_add(r, a[0], POLLIN), 0);
	assert_int_equal(ready_add(r, b[0], POLLIN), 0);
	put(a[1]);
	put(b[1]);
	assert_int_equal(ready_wait(r, 0), 2);
	old = a[0];
	ready_del(r, a[0]);
	close(a[0]);
	close(a[1]);
	pair(c);
	assert_int_equal(c[0], old); /* the lowest free number */
	assert_int_equal(ready_revents(r, c[0]), 0);
	assert_int_equal(ready_add(r, c[0], POLLIN), 0);
	assert_int_equal(ready_revents(r, c[0]), 0);
	assert_int_equal(ready_revents(r, b[0]), POLLIN); /* the other keeps its own */
	assert_int_equal(ready_wait(r, 0), 1);
	assert_int_equal(ready_revents(r, c[0]), 0);
	assert_int_equal(ready_revents(r, b[0]), POLLIN);

	ready_del(r, b[0]);
	ready_del(r, c[0]);
	close(b[0]);
	close(b[1]);
	close(c[0]);
	close(c[1]);
	ready_free(r);
}

#define MANY 300

/* Far more descriptors, and higher numbers, than the set was made for:
 * it grows; every third made readable, every fifth removed. */
static void test_many(void **state)
{
	static int sv[MANY][2];
	struct ready *r = ready_new(4);
	int i, want = 0;

	(void)state;
	for (i = 0; i < MANY; i++) {
		pair(sv[i]);
		assert_int_equal(ready_add(r, sv[i][0], POLLIN), 0);
	}
	for (i = 0; i < MANY; i += 3)
		put(sv[i][1]);
	for (i = MANY - 1; i >= 0; i -= 5) {
		ready_del(r, sv[i][0]);
		close(sv[i][0]);
		sv[i][0] = -1;
	}
	for (i = 0; i < MANY; i++)
		if (sv[i][0] >= 0 && i % 3 == 0)
			want++;
	assert_int_equal(ready_wait(r, 0), want);
	for (i = 0; i < MANY; i++)
		if (sv[i][0] >= 0)
			assert_int_equal(ready_revents(r, sv[i][0]), i % 3 == 0 ? POLLIN : 0);
	for (i = 0; i < MANY; i++) {
		if (sv[i][0] >= 0) {
			ready_del(r, sv[i][0]);
			close(sv[i][0]);
		}
		close(sv[i][1]);
	}
	assert_int_equal(ready_wait(r, 0), 0);
	ready_free(r);
}

/* A descriptor the set does not watch, a number past any it has seen
 * included: a change of interest is refused (EBADF), a removal does nothing,
 * and the set goes on as before. Both hold in release builds. */
static void test_stranger(void **state)
{
	struct one *t = *state;
	int other[2];

	pair(other);
	assert_int_equal(ready_add(t->r, t->sv[0], POLLIN), 0);
	errno = 0;
	assert_int_equal(ready_want(t->r, other[0], POLLIN), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(ready_want(t->r, 100000, POLLIN), -1);
	assert_int_equal(errno, EBADF);
	ready_del(t->r, other[0]);
	ready_del(t->r, 100000);
	put(t->sv[1]);
	waits(t->r, t->sv[0], 1, POLLIN);
	close(other[0]);
	close(other[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nothing_then_readable, one_pair, one_pair_done),
		cmocka_unit_test_setup_teardown(test_interest_changes, one_pair, one_pair_done),
		cmocka_unit_test_setup_teardown(test_hangup_unasked, one_pair, one_pair_done),
		cmocka_unit_test_setup_teardown(test_timeout, one_pair, one_pair_done),
		cmocka_unit_test(test_number_reused),
		cmocka_unit_test(test_many),
		cmocka_unit_test_setup_teardown(test_stranger, one_pair, one_pair_done),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
