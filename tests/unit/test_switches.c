/*
 * test_switches.c: each design switch (kernel/switches.h) on its naive side
 * and on the design's, over the socket unit harness (real lwIP on a loopback
 * wire, a fake clock). The file is built once per switch with only that
 * switch off (switches_naive_NAME, tests/unit/unit.mk), once with every
 * switch on (switches_all) and once with every switch off (switches_baseline).
 * Each test asserts the behaviour of the build it is in: what goes on the
 * wire, when a wait returns, and that each counter equals the work done. The
 * same assertion compiled both ways is what makes it able to fail.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <cmocka.h>
#include "kernel/kernel.h"
#include "kernel/percpu.h"
#include "kernel/switches.h"
#include "lwip/tcp.h"
#include "net/net.h"
#include "net/net_internal.h"
#include "tests/unit/socket/harness.h"

#define MS 1000000ULL

/* A pair with the handshake's ACKs settled, so that nothing is in flight. */
static void quiet_pair(uint16_t port, int *c, int *s)
{
	make_pair(port, c, s);
	set_nonblock(*c);
	set_nonblock(*s);
	settle_ms(600);
}

/* The server's end of a quiet pair; its client stays open, and silent. */
static int quiet_server(uint16_t port)
{
	int c, s;
	quiet_pair(port, &c, &s);
	return s;
}

/* poll() for input on fd alone: what it returns. */
static int poll_in(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, timeout_ms);
}

/* One writev() of a response's two pieces, a head of 120 bytes and a body
 * of body_len, the pattern stream from 0: all taken; their length. */
static size_t writev_response(int fd, size_t body_len)
{
	uint8_t head[120], body[700];
	assert_true(body_len <= sizeof body);
	fill_pattern(head, sizeof head, 0);
	fill_pattern(body, body_len, sizeof head);
	struct iovec iov[2] = { { head, sizeof head }, { body, body_len } };
	assert_int_equal(writev(fd, iov, 2), (ssize_t)(sizeof head + body_len));
	return sizeof head + body_len;
}

static void write_bytes(int fd, size_t n)
{
	uint8_t buf[2048];
	assert_true(n <= sizeof buf);
	fill_pattern(buf, n, 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
}

/* ---- 1. timed waits ------------------------------------------------------------------ */

/* A timed poll with nothing arriving: the design returns at its deadline; the
 * naive wait parks past it (the deadline given as wall-clock time, lwIP's
 * earlier timer ignored) until an unrelated interrupt, here 5 s later. */
static void test_timed_poll_without_traffic(void **state)
{
	(void)state;
	int s = quiet_server(7201);
	uint64_t t0 = fake_now_ns;
	fake_wake_at_ns = t0 + 5000 * MS;
	assert_int_equal(poll_in(s, 300), 0);
	uint64_t took = fake_now_ns - t0;
#if SW_TIMED_WAIT
	/* On time; a build that busy-polls (reading marks) spends a few turns' worth past it. */
	assert_true(took >= 300 * MS && took <= (SW_READ_NO_MARK ? 300 : 302) * MS);
	fake_wake_at_ns = UINT64_MAX; /* it never came: the wait ended first */
#else
	assert_int_equal(took, 5000 * MS);
	assert_int_equal(fake_wake_at_ns, UINT64_MAX);
#endif
}

/* A 1 s timed wait while lwIP's own timer is due within 250 ms (it runs
 * every 250 ms while connections exist), with unrelated interrupts every
 * 50 ms: the design's parks never go past the earliest deadline; the naive
 * park programs the waiter's mangled deadline over lwIP's, decades ahead. */
static void test_timed_wait_keeps_earlier_deadline(void **state)
{
	(void)state;
	int s = quiet_server(7202);
	uint64_t t0 = fake_now_ns;
	fake_wake_period_ns = 50 * MS;
	fake_wake_at_ns = t0 + 50 * MS;
	assert_int_equal(poll_in(s, 1000), 0);
#if SW_TIMED_WAIT
	/* (A build that busy-polls because reading marks never parks at all.) */
	assert_true(fake_park_min_deadline <= t0 + 250 * MS || (!SW_READ_NO_MARK && !fake_parks));
	assert_true(fake_park_max_deadline <= t0 + 1000 * MS);
#else
	assert_true(fake_park_min_deadline > t0 + 365ULL * 24 * 3600 * NSEC_PER_SEC);
#endif
}

/* Naive timed waits park until an unrelated interrupt: the tests below that
 * wait with a timeout give them one every 5 ms. */
static void unrelated_wakes(void)
{
	if (!SW_TIMED_WAIT) {
		fake_wake_period_ns = 5 * MS;
		fake_wake_at_ns = fake_now_ns + 5 * MS;
	}
}

/* ---- 2. writev ------------------------------------------------------------------------ */

static void test_writev_segments(void **state)
{
	(void)state;
	int c, s;
	quiet_pair(7203, &c, &s);
	set_nodelay(c);
	seglog_clear();
	uint64_t outputs = net_socket_counters.outputs;
	size_t sent = writev_response(c, 700);
	/* The app's next call into the network (here a zero-timeout turn) is
	 * the design's one output; the naive writev flushed each piece itself.
	 * With naive deadlines the passes also dispatch whatever holds a timer
	 * (test_deadline_leaves_list counts those). */
	executor_poll();
	uint64_t flushes = SW_WRITEV_ONE_SEND ? 1 : 2;
	if (SW_EGRESS_DEADLINES)
		assert_int_equal(net_socket_counters.outputs - outputs, flushes);
	else
		assert_true(net_socket_counters.outputs - outputs >= flushes);
	pump();
	settle_ms(1000);
	/* With Nagle on (the naive NODELAY), the second piece may join later
	 * data; with it off each output leaves as its own segment. */
	if (SW_NODELAY)
		assert_int_equal(seglog_data_from(local_port_of(c)), SW_WRITEV_ONE_SEND ? 1 : 2);
	read_pattern(s, 0, sent);
}

/* ---- 3. TCP_NODELAY -------------------------------------------------------------------- */

static void test_nodelay_option(void **state)
{
	(void)state;
	int c, s, v;
	socklen_t len = sizeof v;
	quiet_pair(7204, &c, &s);
	/* Never set: lwIP's default is Nagle on, which reads as NODELAY 0; the
	 * naive read returns "Nagle enabled" as the option's value. */
	assert_int_equal(getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
	assert_int_equal(v, SW_NODELAY ? 0 : 1);
	int one = 1;
	assert_int_equal(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
	assert_int_equal(tcp_nagle_disabled(probe_pcb(c)) != 0, SW_NODELAY ? 1 : 0);
}

/* Two writes, the second while the first is unacknowledged: with NODELAY
 * asked for, both leave at once; the naive inversion turned Nagle on, so the
 * second waits for the peer's (delayed) ACK. */
static void test_nodelay_second_write(void **state)
{
	(void)state;
	int c, s;
	quiet_pair(7205, &c, &s);
	set_nodelay(c);
	uint16_t port = local_port_of(c);
	seglog_clear();
	uint64_t holds = net_socket_counters.nagle_holds;
	write_bytes(c, 100);
	executor_poll(); /* the app's next call: the first write leaves */
	write_bytes(c, 200);
	pump();
#if SW_NODELAY
	assert_int_equal(seglog_data_from(port), 2);
	assert_int_equal(net_socket_counters.nagle_holds - holds, 0);
#else
	assert_int_equal(seglog_data_from(port), 1);
	/* Once by the write's flush; again by every naive deadline dispatch. */
	uint64_t held = net_socket_counters.nagle_holds - holds;
	assert_true(SW_EGRESS_DEADLINES ? held == 1 : held >= 1);
	settle_ms(600); /* the peer's delayed ACK releases it */
	assert_int_equal(seglog_data_from(port), 2);
#endif
	settle_ms(600);
	uint8_t buf[300];
	assert_int_equal(read(s, buf, sizeof buf), 300);
}

/* ---- 4. poll when due ------------------------------------------------------------------- */

static void test_poll_only_when_due(void **state)
{
	(void)state;
	int s = quiet_server(7206);
	uint64_t polls = percpu_host.stats.wait_polls, net_polls = net_counters.polls;
	for (int i = 0; i < 5; i++)
		assert_int_equal(poll_in(s, 0), 0);
	/* Each counted poll ran the network's poll: the counter is the work. */
	assert_int_equal(percpu_host.stats.wait_polls - polls, net_counters.polls - net_polls);
	/* Polls when due: never, unless looking marks the socket (then every
	 * look after the first finds the network due). */
	assert_int_equal(percpu_host.stats.wait_polls - polls, SW_POLL_WHEN_DUE ? (SW_READ_NO_MARK ? 0 : 4) : 5);
}

/* ---- 5. the egress list ------------------------------------------------------------------ */

/* One write with a listener and its 8 backlog sockets open besides the pair:
 * the list visits the one socket with bytes; the naive pass visits every
 * socket there is, and each visit is one socket looked at. */
static void test_egress_visits(void **state)
{
	(void)state;
	int l = listen_on(7207, 8);
	int c, s;
	quiet_pair(7208, &c, &s);
	assert_int_equal(probe_backlog(l), 8);
	uint64_t passes = net_socket_counters.egress_passes, visited = net_socket_counters.sockets_visited;
	uint64_t open = probe_sockets_open();
	assert_true(open >= 1 + 8 + 2);
	write_bytes(c, 10);
	pump();
	uint64_t np = net_socket_counters.egress_passes - passes, nv = net_socket_counters.sockets_visited - visited;
	assert_true(np >= 1);
#if SW_EGRESS_LIST
	assert_true(nv >= 1 && nv <= np);
#else
	assert_int_equal(nv, np * open);
#endif
	settle_ms(600);
	read_pattern(s, 0, 10);
	close(l);
}

/* ---- 6. deadlines --------------------------------------------------------------------------- */

/* Bytes sent and not yet acknowledged: lwIP holds a retransmission timer for
 * them. The design lets the socket go from the list once its bytes are in
 * lwIP; naively it stays listed and every pass dispatches it again
 * (tcp_output), until the ACK. */
static void test_deadline_leaves_list(void **state)
{
	(void)state;
	int c, s;
	quiet_pair(7209, &c, &s);
	uint64_t dispatches = net_socket_counters.dispatches, outputs = net_socket_counters.outputs;
	write_bytes(c, 100);
	for (int i = 0; i < 5; i++)
		executor_poll();
	assert_non_null(probe_pcb(c)->unacked);
#if SW_EGRESS_DEADLINES
	assert_false(probe_on_egress_list(c));
	assert_int_equal(net_socket_counters.dispatches - dispatches, 1);
	assert_int_equal(net_socket_counters.outputs - outputs, 1);
#else
	assert_true(probe_on_egress_list(c));
	assert_true(net_socket_counters.dispatches - dispatches >= 5);
	assert_int_equal(net_socket_counters.outputs - outputs, net_socket_counters.dispatches - dispatches);
#endif
	settle_ms(600); /* acknowledged: no deadline left */
	pump();
	assert_null(probe_pcb(c)->unacked);
	assert_false(probe_on_egress_list(c));
	read_pattern(s, 0, 100);
}

/* ---- 7. reading is not marking ---------------------------------------------------------------- */

static void test_looking_marks(void **state)
{
	(void)state;
	int c, s;
	quiet_pair(7210, &c, &s);
	pump();
	assert_false(probe_on_egress(c));
	uint64_t marks = net_socket_counters.egress_marks;
	assert_int_equal(poll_in(c, 0), 0);
	assert_int_equal(net_socket_counters.egress_marks - marks, SW_READ_NO_MARK ? 0 : 1);
	pump(); /* a stale mark costs a visit, never a send */
	write_bytes(s, 10);
	settle_ms(600);
	assert_false(probe_on_egress(c));
	marks = net_socket_counters.egress_marks;
	read_pattern(c, 0, 10);
	assert_int_equal(net_socket_counters.egress_marks - marks, SW_READ_NO_MARK ? 0 : 1);
}

/* ---- 8. the listener flag ------------------------------------------------------------------- */

static void test_listener_readiness(void **state)
{
	(void)state;
	int l = listen_on(7211, 16);
	set_nonblock(l);
	pump();
	uint64_t checks = net_socket_counters.listener_checks, walked = net_socket_counters.listener_slots_walked;
	uint64_t marks = net_socket_counters.egress_marks;
	assert_int_equal(poll_in(l, 0), 0);
	assert_int_equal(net_socket_counters.listener_checks - checks, 1);
	/* The naive walk reads each of the 16 backlog sockets; when reading
	 * marks, each of them (and the listener) lands on the egress list. */
	assert_int_equal(net_socket_counters.listener_slots_walked - walked, SW_LISTENER_FLAG ? 0 : 16);
	assert_int_equal(net_socket_counters.egress_marks - marks,
			 SW_READ_NO_MARK ? 0 : 1 + (SW_LISTENER_FLAG ? 0 : 16));
	assert_int_equal(accept(l, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	pump();
	/* A connection waiting: both answer ready; the walk stops at its slot. */
	int c = connect_to(7211);
	pump();
	walked = net_socket_counters.listener_slots_walked;
	assert_int_equal(poll_in(l, 0), 1);
	assert_int_equal(net_socket_counters.listener_slots_walked - walked, SW_LISTENER_FLAG ? 0 : 1);
	int s = accept(l, NULL, NULL);
	assert_true(s >= 0);
	close(l);
	(void)c;
}

/* ---- 9. spin, then park ------------------------------------------------------------------- */

/* A 100 ms timed poll with nothing arriving (the spin is 0 us in this
 * harness, whose clock does not run by itself): the design turns the
 * interrupt on once and parks; the naive wait keeps it on from the first turn
 * and backs off through 2,047 PAUSEs before the park that ends it. */
static void test_wait_shape(void **state)
{
	(void)state;
	int s = quiet_server(7212);
	unrelated_wakes();
	uint64_t pauses = percpu_host.stats.backoff_pauses, arms = fake_irq_arms;
	uint64_t parks = fake_parks, rechecks = percpu_host.stats.arm_rechecks;
	uint64_t t0 = fake_now_ns;
	assert_int_equal(poll_in(s, 100), 0);
	uint64_t narms = fake_irq_arms - arms;
#if SW_SPIN_THEN_PARK
	assert_int_equal(percpu_host.stats.backoff_pauses - pauses, 0);
	/* Once per park, or per look that found work had slipped in (a socket
	 * marked by reading keeps the network due: then it never parks). */
	assert_int_equal(narms, (fake_parks - parks) + (percpu_host.stats.arm_rechecks - rechecks));
	assert_true(narms >= 1);
#else
	assert_true(percpu_host.stats.backoff_pauses - pauses >= 2047);
	assert_int_equal((percpu_host.stats.backoff_pauses - pauses) % 2047, 0);
	assert_true(narms >= 12); /* every turn: 11 backoff steps and the last look */
	(void)parks, (void)rechecks;
#endif
	if (SW_TIMED_WAIT)
		assert_int_equal(fake_now_ns - t0, 100 * MS);
}

/* ---- 10. timer reloads ------------------------------------------------------------------------- */

/* Every return from a wait: the naive kernel programs the one-shot with the
 * network's next deadline; the design leaves it to the park. */
static void test_return_arms_timer(void **state)
{
	(void)state;
	int s = quiet_server(7213);
	unrelated_wakes();
	uint64_t programs = fake_oneshot_programs;
	for (int i = 0; i < 3; i++)
		assert_int_equal(poll_in(s, 10), 0);
	assert_int_equal(fake_oneshot_programs - programs, SW_TIMER_NO_RELOAD ? 0 : 3);
	if (!SW_TIMER_NO_RELOAD)
		assert_int_equal(fake_oneshot_deadline, net_next_deadline_ns());
}

/* ---- every switch off: the write-up's starting point ------------------------------------------ */

#if !SW_WRITEV_ONE_SEND && !SW_NODELAY
/* A response's head and body: two sends, and with NODELAY inverted into
 * Nagle on, the body waits for the peer's delayed ACK of the head: the
 * write-up's stall before its writev and NODELAY commits. */
static void test_response_stalls(void **state)
{
	(void)state;
	int c, s;
	quiet_pair(7214, &c, &s);
	set_nodelay(s);
	uint16_t port = local_port_of(s);
	seglog_clear();
	size_t sent = writev_response(s, 41);
	pump();
	assert_int_equal(seglog_data_from(port), 1); /* the head only */
	uint64_t t0 = fake_now_ns;
	while (seglog_data_from(port) < 2)
		settle_ms(10);
	assert_true(fake_now_ns - t0 >= 100 * MS); /* the body waited for the delayed ACK */
	read_pattern(c, 0, sent);
}
#endif

#if !SW_EGRESS_LIST && !SW_EGRESS_DEADLINES
/* A mark made during the naive pass stays on the list (it makes the network
 * due); the pass used to wipe the list at its end and lose it. */
static void test_naive_pass_keeps_marks(void **state)
{
	(void)state;
	int c, s;
	quiet_pair(7215, &c, &s);
	write_bytes(c, 100);
	executor_poll();
	assert_non_null(probe_pcb(c)->unacked);
	assert_true(probe_on_egress_list(c));
	settle_ms(600);
	read_pattern(s, 0, 100);
}
#endif

#define T(f) cmocka_unit_test_setup_teardown(f, socket_test_setup, socket_test_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_timed_poll_without_traffic),
		T(test_timed_wait_keeps_earlier_deadline),
		T(test_writev_segments),
		T(test_nodelay_option),
		T(test_nodelay_second_write),
		T(test_poll_only_when_due),
		T(test_egress_visits),
		T(test_deadline_leaves_list),
		T(test_looking_marks),
		T(test_listener_readiness),
		T(test_wait_shape),
		T(test_return_arms_timer),
#if !SW_WRITEV_ONE_SEND && !SW_NODELAY
		T(test_response_stalls),
#endif
#if !SW_EGRESS_LIST && !SW_EGRESS_DEADLINES
		T(test_naive_pass_keeps_marks),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
