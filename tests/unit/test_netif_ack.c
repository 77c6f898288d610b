/*
 * test_netif_ack.c: pure ACKs merged and kept (net/netif_ack.c), over the
 * socket harness's lwIP, with the driver and the TSO runs played here: a "wire" that
 * records what the driver took, in order, and a ring the test fills at
 * will. What is checked: a burst's pure ACKs of one connection leave as its
 * last one, other connections' apart; duplicate ACKs leave up to three, a
 * window update always; nothing of a connection overtakes its waiting ACK; an
 * ACK that finds the ring full waits, merges and leaves when there is room;
 * one that cannot wait is dropped and counted; sixteen connections wait at
 * once, a seventeenth sends the oldest; ack_merge=0 sends each as made; no
 * frame's reference is lost or leaked.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/prot/tcp.h"
#include "kernel/kernel.h"
#include "net/net_internal.h"
#include "net/netif_gso.h"
#include "net/net.h"

/* ---- the kernel, the driver and the TSO runs, played ------------------------ */

extern const char *host_ack_merge; /* kernel option ack_merge (socket/host.c); NULL: its default */

/* What reached the wire, in order: the peer's port and the ACK number, and
 * whether the frame came through linkoutput's own path (send_frame). */
struct sent {
	unsigned port;
	uint32_t ackno;
	bool data;
	bool direct;
};
static struct sent wire[64];
static int nwire;
static bool ring_full;  /* the driver refuses every frame (-ENOBUFS) */
static bool run_held;   /* a TSO run is held and cannot leave */
static int run_flushes; /* net_gso_flush calls */

static uint32_t be32(const u8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static void record(struct pbuf *p, bool direct)
{
	const u8_t *f = p->payload;
	assert_true(nwire < (int)(sizeof wire / sizeof wire[0]));
	wire[nwire++] = (struct sent){ .port = (unsigned)f[36] << 8 | f[37], .ackno = be32(f + 42),
				       .data = p->tot_len > 54, .direct = direct };
}

int net_netif_queue(struct pbuf *frame)
{
	if (ring_full)
		return -ENOBUFS;
	record(frame, false);
	pbuf_free(frame); /* the reference went to the driver, which is done at once */
	return 0;
}

void net_gso_flush(void) { run_flushes++; }
bool net_gso_holding(void) { return run_held; }
bool vnet_tx_room(int nseg) { (void)nseg; return !ring_full; }

/* linkoutput's own path (netif.c's send_frame): a full ring drops. */
static err_t send_frame(struct pbuf *p)
{
	if (ring_full)
		return ERR_MEM;
	record(p, true);
	return ERR_OK;
}

/* ---- frames ------------------------------------------------------------------ */

/* A TCP frame from us (10.0.2.15:80) to 10.0.2.2:`port`, ACK `ackno`, window
 * `win`, `flags`, `payload` bytes of data. */
static struct pbuf *tcp_frame(unsigned port, uint32_t ackno, unsigned win, u8_t flags, unsigned payload)
{
	unsigned len = 14 + 20 + 20 + payload;
	struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_RAM);
	assert_non_null(p);
	u8_t *f = p->payload;
	memset(f, 0, len);
	f[12] = 0x08;
	u8_t *ip = f + 14, *tcp = ip + 20;
	ip[0] = 0x45;
	ip[2] = (u8_t)((len - 14) >> 8);
	ip[3] = (u8_t)(len - 14);
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, (u8_t[]){ 10, 0, 2, 15 }, 4);
	memcpy(ip + 16, (u8_t[]){ 10, 0, 2, 2 }, 4);
	tcp[1] = 80;
	tcp[2] = (u8_t)(port >> 8);
	tcp[3] = (u8_t)port;
	for (int i = 0; i < 4; i++)
		tcp[8 + i] = (u8_t)(ackno >> (24 - 8 * i));
	tcp[12] = 5 << 4;
	tcp[13] = flags;
	tcp[14] = (u8_t)(win >> 8);
	tcp[15] = (u8_t)win;
	return p;
}

/* linkoutput with `p`, as lwIP calls it: lwIP's reference is freed after. */
static err_t output(struct pbuf *p)
{
	err_t err = net_ack_output(p, send_frame);
	pbuf_free(p);
	return err;
}

static err_t ack(unsigned port, uint32_t ackno) { return output(tcp_frame(port, ackno, 1000, TCP_ACK, 0)); }

static void expect_wire(int i, unsigned port, uint32_t ackno)
{
	assert_true(i < nwire);
	assert_int_equal(wire[i].port, port);
	assert_int_equal(wire[i].ackno, ackno);
}

static size_t heap_used_at_start;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(net_init(), 0); /* lwIP, once (socket/loopnet.c) */
	memset(&net_counters, 0, sizeof net_counters);
	nwire = 0;
	ring_full = run_held = false;
	run_flushes = 0;
	host_ack_merge = NULL;
	net_ack_init();
	heap_used_at_start = lwip_stats.mem.used;
	return 0;
}

/* Nothing waits, and every frame's memory is back. */
static int teardown(void **state)
{
	(void)state;
	ring_full = run_held = false;
	net_ack_flush();
	assert_false(net_ack_due());
	assert_int_equal(lwip_stats.mem.used, heap_used_at_start);
	return 0;
}

/* ---- the tests --------------------------------------------------------------- */

static void burst_merges_per_connection(void **state)
{
	(void)state;
	net_ack_input_begin();
	assert_int_equal(ack(5001, 1000), ERR_OK);
	assert_int_equal(ack(5002, 500), ERR_OK);
	assert_int_equal(ack(5001, 2000), ERR_OK);
	assert_int_equal(ack(5001, 3000), ERR_OK);
	assert_int_equal(nwire, 0); /* all wait for the burst's end */
	net_ack_input_end();
	assert_int_equal(nwire, 2);
	expect_wire(0, 5001, 3000);
	expect_wire(1, 5002, 500);
	assert_int_equal(net_counters.tx_acks_merged, 2);
	assert_int_equal(net_counters.tx_acks_waited, 0);
}

static void duplicates_and_window_updates_kept(void **state)
{
	(void)state;
	net_ack_input_begin();
	ack(5001, 1000);
	ack(5001, 1000); /* a duplicate: the peer counts it toward fast retransmit */
	output(tcp_frame(5001, 1000, 4000, TCP_ACK, 0)); /* a window update */
	net_ack_input_end();
	assert_int_equal(nwire, 3);
	for (int i = 0; i < 3; i++)
		expect_wire(i, 5001, 1000);
	assert_int_equal(net_counters.tx_acks_merged, 0);
}

static void three_duplicates_leave_the_rest_merge(void **state)
{
	(void)state;
	net_ack_input_begin();
	for (int i = 0; i < 6; i++)
		ack(5001, 1000); /* a peer resending what we have: a duplicate each */
	net_ack_input_end();
	assert_int_equal(nwire, 3);
	for (int i = 0; i < 3; i++)
		expect_wire(i, 5001, 1000);
	assert_int_equal(net_counters.tx_acks_merged, 3);
	/* The copies that find the ring full leave when there is room. */
	nwire = 0;
	ring_full = true;
	for (int i = 0; i < 3; i++)
		ack(5001, 2000);
	assert_int_equal(nwire, 0);
	ring_full = false;
	net_ack_flush();
	assert_int_equal(nwire, 3);
	expect_wire(2, 5001, 2000);
}

static void nothing_overtakes_a_waiting_ack(void **state)
{
	(void)state;
	net_ack_input_begin();
	ack(5001, 1000);
	ack(5002, 7000);
	assert_int_equal(output(tcp_frame(5001, 1500, 1000, TCP_ACK | TCP_PSH, 100)), ERR_OK);
	output(tcp_frame(5001, 1500, 1000, TCP_ACK | TCP_FIN, 0)); /* not a pure ACK either */
	assert_int_equal(nwire, 3);
	expect_wire(0, 5001, 1000); /* the waiting ACK first */
	expect_wire(1, 5001, 1500);
	assert_true(wire[1].data && wire[1].direct);
	expect_wire(2, 5001, 1500);
	net_ack_input_end();
	assert_int_equal(nwire, 4);
	expect_wire(3, 5002, 7000);
}

static void a_held_run_goes_first(void **state)
{
	(void)state;
	run_held = true; /* the run cannot leave: neither can the ACK behind it */
	assert_int_equal(ack(5001, 1000), ERR_OK);
	assert_int_equal(nwire, 0);
	assert_true(run_flushes > 0);
	assert_int_equal(net_counters.tx_acks_waited, 1);
	run_held = false;
	net_ack_flush();
	assert_int_equal(nwire, 1);
	expect_wire(0, 5001, 1000);
}

static void full_ring_waits_then_leaves(void **state)
{
	(void)state;
	ring_full = true;
	assert_int_equal(ack(5001, 1000), ERR_OK);
	assert_int_equal(ack(5001, 2000), ERR_OK);
	assert_false(net_ack_due());
	assert_int_equal(nwire, 0);
	assert_int_equal(net_counters.tx_acks_waited, 2); /* each found the ring full */
	assert_int_equal(net_counters.tx_acks_merged, 1);
	net_ack_input_begin(); /* a burst while the ring is still full */
	ack(5001, 3000);
	net_ack_input_end();
	assert_int_equal(nwire, 0);
	assert_int_equal(net_counters.tx_acks_waited, 3); /* counted once, at the burst's end */
	assert_int_equal(net_counters.tx_acks_merged, 2);
	ring_full = false;
	assert_true(net_ack_due());
	net_ack_flush();
	assert_int_equal(nwire, 1);
	expect_wire(0, 5001, 3000);
	assert_int_equal(net_counters.tx_drop_ring_full, 0);
}

static void what_cannot_wait_is_dropped_and_counted(void **state)
{
	(void)state;
	ring_full = true;
	ack(5001, 1000);
	/* Data of that connection, the ring full: it goes its own way (lwIP
	 * keeps and resends it), carrying the acknowledgment the waiting ACK
	 * would have; that one is dropped, counted. */
	assert_int_equal(output(tcp_frame(5001, 1000, 1000, TCP_ACK, 10)), ERR_MEM);
	assert_int_equal(net_counters.tx_drop_ring_full, 1);
	assert_false(net_ack_due());
	ring_full = false;
	assert_false(net_ack_due()); /* nothing waits */
	assert_int_equal(nwire, 0);
}

static void sixteen_wait_a_seventeenth_sends_the_oldest(void **state)
{
	(void)state;
	net_ack_input_begin();
	for (unsigned c = 0; c < 17; c++)
		ack(6000 + c, 100 + c);
	assert_int_equal(nwire, 1);
	expect_wire(0, 6000, 100);
	net_ack_input_end();
	assert_int_equal(nwire, 17); /* in slot order: 6016 took 6000's */
	expect_wire(1, 6016, 116);
	for (unsigned c = 1; c < 16; c++)
		expect_wire((int)c + 1, 6000 + c, 100 + c);
	/* The ring full, a seventeenth connection's ACK takes the oldest's slot:
	 * that one is dropped, counted. */
	ring_full = true;
	for (unsigned c = 0; c < 17; c++)
		ack(7000 + c, 100);
	assert_int_equal(net_counters.tx_drop_ring_full, 1);
	assert_int_equal(net_counters.tx_acks_waited, 17);
	ring_full = false;
	net_ack_flush();
	assert_int_equal(nwire, 17 + 16);
	expect_wire(17, 7016, 100); /* in slot order: 7016 took 7000's */
	expect_wire(18, 7001, 100);
}

static void not_tcp_goes_its_way(void **state)
{
	(void)state;
	net_ack_input_begin();
	struct pbuf *p = tcp_frame(5001, 1000, 1000, TCP_ACK, 0);
	((u8_t *)p->payload)[14 + 9] = 17; /* UDP */
	output(p);
	p = tcp_frame(5001, 1000, 1000, TCP_ACK, 0);
	((u8_t *)p->payload)[12] = 0x08, ((u8_t *)p->payload)[13] = 0x06; /* ARP */
	output(p);
	net_ack_input_end();
	assert_int_equal(nwire, 2);
	assert_true(wire[0].direct && wire[1].direct);
	assert_int_equal(net_counters.tx_acks_merged + net_counters.tx_acks_waited, 0);
}

static void ack_merge_0_sends_each_as_made(void **state)
{
	(void)state;
	host_ack_merge = "0";
	net_ack_init();
	net_ack_input_begin();
	ack(5001, 1000);
	ack(5001, 2000);
	net_ack_input_end();
	assert_int_equal(nwire, 2);
	assert_true(wire[0].direct && wire[1].direct);
	ring_full = true;
	assert_int_equal(ack(5001, 3000), ERR_MEM); /* dropped where the ring is full */
	assert_false(net_ack_due());
	assert_int_equal(net_counters.tx_acks_merged + net_counters.tx_acks_waited, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(burst_merges_per_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(duplicates_and_window_updates_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(three_duplicates_leave_the_rest_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(nothing_overtakes_a_waiting_ack, setup, teardown),
		cmocka_unit_test_setup_teardown(a_held_run_goes_first, setup, teardown),
		cmocka_unit_test_setup_teardown(full_ring_waits_then_leaves, setup, teardown),
		cmocka_unit_test_setup_teardown(what_cannot_wait_is_dropped_and_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(sixteen_wait_a_seventeenth_sends_the_oldest, setup, teardown),
		cmocka_unit_test_setup_teardown(not_tcp_goes_its_way, setup, teardown),
		cmocka_unit_test_setup_teardown(ack_merge_0_sends_each_as_made, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
