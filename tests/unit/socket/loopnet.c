/*
 * loopnet.c: the network layer (net/net.h) for the host: lwIP on one
 * in-memory interface, 10.0.0.1/24, no Ethernet. Every IP packet lwIP outputs
 * is logged (its TCP header, for the tests to count segments), copied onto a
 * queue -- the wire -- and fed back to lwIP's input on the next net_poll(), so
 * a client and a server in the same stack talk to each other exactly as two
 * hosts would, one poll per hop.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lwip/init.h"
#include "lwip/ip.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "lwip/timeouts.h"
#include "kernel/kernel.h"
#include "net/net.h"
#include "net/net_internal.h"
#include "harness.h"

struct net_counters net_counters; /* tcp_hooks.c counts TIME_WAIT recycling here */

struct frame {
	struct frame *next;
	u16_t len;
	u8_t data[];
};

static struct netif loop_if;
static struct frame *wire_head, **wire_tail = &wire_head;
static size_t wire_len;
static int init_result = 1; /* 1: not yet */
/* Segments with data from this port that the wire loses, and how many more. */
static uint16_t drop_port;
static unsigned drop_left;

/* ---- the segment log ------------------------------------------------------------ */

#define SEGLOG_MAX 8192
static struct seg_rec seglog[SEGLOG_MAX];
static size_t seglog_n;

void seglog_clear(void) { seglog_n = 0; }
size_t seglog_count(void) { return seglog_n; }
const struct seg_rec *seglog_get(size_t i) { return i < seglog_n ? &seglog[i] : NULL; }

unsigned seglog_data_from(uint16_t src_port)
{
	unsigned n = 0;
	for (size_t i = 0; i < seglog_n; i++)
		n += seglog[i].src_port == src_port && seglog[i].payload_len > 0;
	return n;
}

unsigned seglog_flags_from(uint16_t src_port, uint8_t flags)
{
	unsigned n = 0;
	for (size_t i = 0; i < seglog_n; i++)
		n += seglog[i].src_port == src_port && (seglog[i].flags & flags);
	return n;
}

static u16_t be16(const u8_t *p) { return (u16_t)(p[0] << 8 | p[1]); }
static u32_t be32(const u8_t *p) { return (u32_t)p[0] << 24 | (u32_t)p[1] << 16 | (u32_t)p[2] << 8 | p[3]; }

/* Record the TCP header of an IPv4 packet (anything else is not logged);
 * false when the wire is to lose it (loopnet_lose_data_from). */
static bool log_packet(const u8_t *ip, u16_t len)
{
	if (len < 20 || (ip[0] >> 4) != 4 || ip[9] != 6)
		return true;
	u16_t ihl = (u16_t)((ip[0] & 0x0f) * 4), total = be16(ip + 2);
	const u8_t *tcp = ip + ihl;
	u16_t thl = (u16_t)((tcp[12] >> 4) * 4);
	assert_true(total <= len && ihl + thl <= total);
	assert_true(seglog_n < SEGLOG_MAX);
	seglog[seglog_n++] = (struct seg_rec){
		.src_port = be16(tcp), .dst_port = be16(tcp + 2), .flags = tcp[13] & 0x3f,
		.seqno = be32(tcp + 4), .payload_len = (u16_t)(total - ihl - thl),
	};
	const struct seg_rec *r = &seglog[seglog_n - 1];
	if (drop_left && r->src_port == drop_port && r->payload_len > 0) {
		drop_left--;
		return false;
	}
	return true;
}

void loopnet_lose_data_from(uint16_t src_port, unsigned count)
{
	drop_port = src_port;
	drop_left = count;
}

/* ---- the interface ---------------------------------------------------------------- */

/* lwIP's IP output: log the packet and put a flat copy on the wire (unless
 * the wire is to lose it). */
static err_t wire_output(struct netif *netif, struct pbuf *p, const ip4_addr_t *next_hop)
{
	(void)netif;
	(void)next_hop;
	struct frame *f = malloc(sizeof *f + p->tot_len);
	assert_non_null(f);
	f->next = NULL;
	f->len = p->tot_len;
	pbuf_copy_partial(p, f->data, p->tot_len, 0);
	if (!log_packet(f->data, f->len)) {
		free(f); /* lost on the wire, as a real link loses it */
		return ERR_OK;
	}
	*wire_tail = f;
	wire_tail = &f->next;
	wire_len++;
	return ERR_OK;
}

static err_t loop_if_init(struct netif *netif)
{
	netif->name[0] = 'l';
	netif->name[1] = 'p';
	netif->output = wire_output;
	netif->mtu = 1500;
	netif->flags = NETIF_FLAG_LINK_UP;
	return ERR_OK;
}

/* lwIP's heap, which net/net.c takes from the guest's pages (lwipopts.h);
 * here the test's own, for the life of the test process. */
unsigned char *lwip_heap_arena;

int net_init(void)
{
	if (init_result <= 0)
		return init_result;
	if (!lwip_heap_arena && !(lwip_heap_arena = malloc(MEM_SIZE + 4096)))
		return init_result = -ENOMEM;
	lwip_init();
	ip4_addr_t ip, mask, gw;
	ip4addr_aton(LOOPNET_ADDR, &ip);
	IP4_ADDR(&mask, 255, 255, 255, 0);
	ip4_addr_set_zero(&gw);
	if (!netif_add(&loop_if, &ip, &mask, &gw, NULL, loop_if_init, ip_input))
		return init_result = -1;
	netif_set_default(&loop_if);
	netif_set_up(&loop_if);
	return init_result = 0;
}

size_t loopnet_queued(void) { return wire_len; }

/* The receive buffers' pressure as the socket layer asks it (netif.c's on
 * the guest): a test sets it. */
bool loopnet_memory_short;
bool net_rx_memory_short(void) { return loopnet_memory_short; }

/* Copy one frame into a pool pbuf and give it to lwIP's IP input. */
static bool input_frame(const struct frame *f)
{
	struct pbuf *p = pbuf_alloc(PBUF_RAW, f->len, PBUF_POOL);
	assert_non_null(p); /* the pool is sized for the guest's bursts */
	pbuf_take(p, f->data, f->len);
	if (loop_if.input(p, &loop_if) != ERR_OK) {
		pbuf_free(p);
		return false;
	}
	return true;
}

/* Feed the frames on the wire now (not those their answers add) to lwIP,
 * then run lwIP's timers if one is due. */
bool net_poll(void)
{
	if (init_result != 0)
		return false;
	net_counters.polls++;
	size_t batch = wire_len;
	bool work = batch > 0;
	while (batch--) {
		struct frame *f = wire_head;
		wire_head = f->next;
		if (!wire_head)
			wire_tail = &wire_head;
		wire_len--;
		/* As the guest's netif does: a SYN that ended a pcb to make
		 * room goes in a second time, to the listener. */
		if (input_frame(f) && net_tcp_make_room())
			input_frame(f);
		free(f);
	}
	if (sys_timeouts_sleeptime() == 0) {
		net_tcp_run_timers();
		work = true;
	}
	return work;
}

bool net_work_pending(void)
{
	return wire_len > 0 || (init_result == 0 && sys_timeouts_sleeptime() == 0);
}

uint64_t net_next_deadline_ns(void)
{
	u32_t wait_ms = sys_timeouts_sleeptime();
	if (wait_ms == SYS_TIMEOUTS_SLEEPTIME_INFINITE)
		return UINT64_MAX;
	return (clock_ns() / 1000000 + wait_ms) * 1000000;
}

/* ---- driving it from the tests ---------------------------------------------------- */

void pump(void)
{
	for (int turns = 0; executor_poll(); turns++)
		assert_true(turns < 10000); /* a livelock, not progress */
	/* Checked at every quiet point of every test: no send left stranded. */
	assert_int_equal(probe_egress_strays(), 0);
}

void settle_ms(unsigned ms)
{
	for (unsigned t = 0; t < ms; t += 10) {
		fake_now_ns += 10 * 1000000ULL;
		pump();
	}
}
