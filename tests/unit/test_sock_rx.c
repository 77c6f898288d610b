/*
 * test_sock_rx.c: a TCP socket's receive queue (net/sock_rx.c) over real
 * lwIP on the in-memory loopback (tests/unit/socket/): what one connection
 * whose application does not read can make the guest hold, and the window
 * it gives back when unread data is dropped (close, shutdown(SHUT_RD)).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <cmocka.h>
#include "lwip/tcp.h"
#include "net/net_internal.h"
#include "net/sock.h"
#include "tests/unit/socket/harness.h"

/* Send `n` bytes of the pattern stream from `from`, each in its own segment. */
static void send_bytes_one_by_one(int fd, size_t from, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t b = pattern(from + i);
		assert_int_equal(write(fd, &b, 1), 1);
		pump(); /* out as a segment of its own before the next */
	}
}

/* A connected pair whose client sends each write at once (TCP_NODELAY). */
static void nodelay_pair(uint16_t port, int *c, int *s)
{
	make_pair(port, c, s);
	set_nodelay(*c);
}

/* 1. Thousands of one-byte segments to a reader that does not read hold a
 * few buffers, not one each: they are copied onto the queue's chunks. */
static void test_small_segments_coalesced(void **state)
{
	(void)state;
	int c, s;
	nodelay_pair(7101, &c, &s);
	uint64_t coalesced = net_counters.rx_coalesced;
	send_bytes_one_by_one(c, 0, 3000);
	/* The first byte is queued as it came; the rest fill chunks. */
	assert_true(probe_rx_bufs(s) <= 1 + (3000 + SOCK_RX_CHUNK - 1) / SOCK_RX_CHUNK);
	assert_int_equal(net_counters.rx_coalesced - coalesced, 2999);
	read_pattern(s, 0, 3000);
	assert_int_equal(probe_rx_bufs(s), 0);
	/* And after a read the queue coalesces again from empty. */
	send_bytes_one_by_one(c, 3000, 10);
	read_pattern(s, 3000, 10);
}

/* 2. Large pieces are queued as they came (no copy), and the stream stays
 * whole when small and large ones mix. */
static void test_large_pieces_not_copied(void **state)
{
	(void)state;
	int c, s;
	nodelay_pair(7102, &c, &s);
	uint64_t coalesced = net_counters.rx_coalesced;
	uint8_t buf[1400];
	fill_pattern(buf, sizeof buf, 0);
	assert_int_equal(write(c, buf, sizeof buf), (ssize_t)sizeof buf);
	pump();
	fill_pattern(buf, sizeof buf, 1400);
	assert_int_equal(write(c, buf, sizeof buf), (ssize_t)sizeof buf);
	pump();
	assert_int_equal(net_counters.rx_coalesced, coalesced);
	send_bytes_one_by_one(c, 2800, 5);
	assert_int_equal(net_counters.rx_coalesced - coalesced, 5);
	fill_pattern(buf, sizeof buf, 2805);
	assert_int_equal(write(c, buf, sizeof buf), (ssize_t)sizeof buf);
	pump();
	read_pattern(s, 0, 2805 + sizeof buf);
}

/* Under memory pressure, `count` pieces of `size` bytes of the pattern
 * stream from a writer that does not wait: a socket that holds its share is
 * refused more (counted), lwIP keeps what it refused, the peer sends the
 * rest again, and once pressure ends and the application reads, every byte
 * arrives in order. */
static void pressure_refuses_then_recovers(uint16_t port, size_t size, int count)
{
	int c, s;
	nodelay_pair(port, &c, &s);
	uint64_t refused = net_counters.rx_pressure_refused;
	loopnet_memory_short = true;
	size_t total = 0;
	uint8_t buf[1200];
	assert_true(size <= sizeof buf);
	for (int i = 0; i < count; i++) {
		fill_pattern(buf, size, total);
		assert_int_equal(write(c, buf, size), (ssize_t)size);
		total += size;
		pump();
	}
	assert_true(net_counters.rx_pressure_refused > refused);
	assert_true(probe_rx_bufs(s) <= SOCK_RX_BUFS_FAIR);
	loopnet_memory_short = false;
	read_pattern(s, 0, total); /* blocking reads: lwIP retries, the peer resends */
}

/* 3. Large pieces: each a buffer of its own, refused past the share. */
static void test_pressure_refuses_then_recovers(void **state)
{
	(void)state;
	pressure_refuses_then_recovers(7103, 1200, 2 * SOCK_RX_BUFS_FAIR);
}

/* 3b. Small pieces take no more chunks past the share either: chunks live
 * in lwIP's heap, which must keep room for what we send. */
static void test_pressure_bounds_chunks(void **state)
{
	(void)state;
	pressure_refuses_then_recovers(7106, 600, 4 * SOCK_RX_BUFS_FAIR);
}

/* A connected pair whose server holds 200 KiB unread, more than 64 KiB. */
static void pair_holding_unread(uint16_t port, int *c, int *s)
{
	size_t unread = 200 * 1024;
	uint8_t *big = malloc(unread);
	make_pair(port, c, s);
	assert_non_null(big);
	fill_pattern(big, unread, 0);
	assert_int_equal(write(*c, big, unread), (ssize_t)unread);
	free(big);
	settle_ms(50);
}

/* 4. close() with more unread than 64 KiB: the whole window goes back first,
 * so lwIP closes with a FIN, not a reset, and our answer arrives whole. */
static void test_close_with_much_unread(void **state)
{
	(void)state;
	int c, s;
	pair_holding_unread(7104, &c, &s);
	uint16_t server_port = 7104;
	assert_true(probe_pcb(s)->rcv_wnd < TCP_WND - 0xffff); /* more than 64 KiB held */
	seglog_clear();
	const char answer[] = "answer";
	assert_int_equal(write(s, answer, sizeof answer), (ssize_t)sizeof answer);
	assert_int_equal(close(s), 0);
	settle_ms(50);
	assert_int_equal(seglog_flags_from(server_port, SEG_RST), 0);
	assert_int_equal(seglog_flags_from(server_port, SEG_FIN), 1);
	char got[sizeof answer];
	assert_int_equal(read(c, got, sizeof got), (ssize_t)sizeof got);
	assert_memory_equal(got, answer, sizeof answer);
	assert_int_equal(read(c, got, 1), 0);
}

/* 5. shutdown(SHUT_RD) with more unread than 64 KiB gives the whole window
 * back: the peer may send a full window again. */
static void test_shut_rd_reopens_window(void **state)
{
	(void)state;
	int c, s;
	pair_holding_unread(7105, &c, &s);
	assert_int_equal(shutdown(s, SHUT_RD), 0);
	assert_int_equal(probe_pcb(s)->rcv_wnd, TCP_WND);
	assert_int_equal(probe_rx_bufs(s), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, socket_test_setup, socket_test_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_small_segments_coalesced),
		T(test_large_pieces_not_copied),
		T(test_pressure_refuses_then_recovers),
		T(test_pressure_bounds_chunks),
		T(test_close_with_much_unread),
		T(test_shut_rd_reopens_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
