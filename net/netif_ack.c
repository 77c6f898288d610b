/*
 * netif_ack.c: pure ACKs merged while a burst is taken in, and kept, not
 * dropped, while the transmit ring is full.
 *
 * lwIP acknowledges every second full segment at once, from inside the
 * input of the segment that calls for it. A poll that takes a burst of a
 * bulk upload's segments from the device thus makes a pure ACK for every
 * second one, each a frame on the transmit ring, where the burst's last
 * says everything the others say (Linux merges the burst first, GRO, and
 * acknowledges the whole). And where the ring has no room, a pure ACK is
 * lost for good: lwIP keeps no copy and retries only at its 250 ms fast
 * timer, while the peer, its window spent on data we have but have not
 * acknowledged, sends nothing that would make us answer sooner. The ring
 * fills when the device is slow to take frames: QEMU behind passt, whose
 * one thread stops reading our frames while it writes the peer's. Each
 * ACK lost there leaves the peer to resend its window, more frames in, more
 * ACKs out: an upload through passt ran at a tenth of the download.
 *
 * So a pure ACK (TCP with ACK alone, no data) made while a poll delivers
 * received frames, or while the ring is full, waits here, one per
 * connection. A later pure ACK of that connection that acknowledges more
 * takes its place (the earlier one counted merged, and freed); one that
 * repeats it, number and window, is a duplicate, kept as a copy to send up
 * to three times (a peer's fast retransmit counts three), merged beyond.
 * Anything else of the connection sends the waiting one first, so nothing
 * is reordered: data, a FIN or RST, a window update. What waits leaves
 * when the poll's input ends, or, with the ring full, at the first poll
 * that finds room (net_work_pending asks). Kernel
 * option ack_merge=0 is the naive side: every pure ACK leaves as it is
 * made, and one that finds the ring full is dropped (counted ring-full).
 */
#include <errno.h>
#include "lwip/prot/ip.h"
#include "lwip/prot/tcp.h"
#include "lwip/stats.h"
#include "kernel/kernel.h"
#include "net_internal.h"
#include "netif_gso.h"

/* Connections with a pure ACK waiting at once; with every slot taken, the
 * oldest leaves (or, the ring full, is dropped and counted) for a new one. */
#define ACK_SLOTS 16
/* Identical pure ACKs (a number and a window already waiting) kept as
 * copies, up to three: what a peer's fast retransmit counts as a loss. */
#define DUP_ACKS_KEPT 3

struct waiting_ack {
	struct pbuf *frame; /* a reference of ours; NULL: the slot is free */
	uint64_t conn;         /* the peer's address and both ports (conn_key) */
	u32_t ackno;        /* the acknowledgment number it carries */
	uint16_t window;    /* the window field it carries */
	uint8_t copies;     /* identical ACKs it stands for, to send: 1..DUP_ACKS_KEPT */
	uint64_t since;        /* ack_clock when it began to wait: the oldest leaves first */
	bool waited;        /* it found the ring full (counted in tx_acks_waited) */
};

static struct waiting_ack slots[ACK_SLOTS];
static int nwaiting;       /* slots in use */
static bool taking_input;  /* inside net_ack_input_begin/end */
static uint64_t ack_clock;    /* orders the slots */
static bool merging;       /* kernel option ack_merge (net_ack_init) */

void net_ack_init(void)
{
	merging = kopt_number(KOPT_ACK_MERGE) != 0;
}

static u32_t be32(const u8_t *p) { return (u32_t)p[0] << 24 | (u32_t)p[1] << 16 | (u32_t)p[2] << 8 | p[3]; }

/* The connection of TCP frame `f` (its headers at `l`): the peer's address
 * (the destination: the frame is ours) and both ports. */
static uint64_t conn_key(const u8_t *f, const struct net_frame_l4 *l)
{
	return (uint64_t)be32(f + 14 + 16) << 32 | be32(f + l->start);
}

/* Whether `p` is a TCP frame, and then its connection; whether it is a pure
 * ACK, and then the number it acknowledges. */
static bool tcp_frame(const struct pbuf *p, uint64_t *conn, bool *pure, u32_t *ackno, u16_t *window)
{
	struct net_frame_l4 l;
	if (!net_frame_l4(p, &l) || l.proto != IP_PROTO_TCP)
		return false;
	const u8_t *f = p->payload;
	*conn = conn_key(f, &l);
	*pure = l.hdr_len - l.start == l.len && (f[l.start + 13] & 0x3f) == TCP_ACK;
	*ackno = be32(f + l.start + 8);
	*window = (u16_t)(f[l.start + 14] << 8 | f[l.start + 15]);
	return true;
}

/* Whether `a` acknowledges more than `b` (sequence arithmetic). */
static bool acks_more(u32_t a, u32_t b) { return (s32_t)(a - b) > 0; }

static struct waiting_ack *find(uint64_t conn)
{
	for (int i = 0; i < ACK_SLOTS; i++)
		if (slots[i].frame && slots[i].conn == conn)
			return &slots[i];
	return NULL;
}

static void release(struct waiting_ack *w)
{
	w->frame = NULL;
	nwaiting--;
}

/* Give `p` (lwIP's, or a waiting one: the caller's reference stays the
 * caller's) to the driver behind a held TSO run (netif_gso.c), which
 * nothing overtakes. 0, -ENOBUFS where the ring (or the run) waits, or
 * another error, counted here: the frame is lost to the wire. */
static int queue_behind_run(struct pbuf *p)
{
	net_gso_flush();
	if (net_gso_holding())
		return -ENOBUFS;
	pbuf_ref(p); /* the driver's, freed at tx-done */
	int rc = net_netif_queue(p);
	if (rc == 0 || rc == -ENOBUFS) {
		if (rc)
			pbuf_free(p);
		return rc;
	}
	pbuf_free(p);
	LINK_STATS_INC(link.drop);
	if (rc == -ENOMEM)
		net_counters.tx_drop_no_pbuf++;
	else
		net_counters.tx_drop_invalid++;
	return rc;
}

/* Send the waiting ACK; false when the ring is full (it waits on, counted
 * once as having waited). */
static bool send_waiting(struct waiting_ack *w)
{
	for (; w->copies; w->copies--) {
		if (queue_behind_run(w->frame) == -ENOBUFS) {
			if (!w->waited)
				net_counters.tx_acks_waited++;
			w->waited = true;
			return false;
		}
	}
	pbuf_free(w->frame);
	release(w);
	return true;
}

/* The waiting ACK will not be sent: freed and counted as `counter`. */
static void drop_waiting(struct waiting_ack *w, uint64_t *counter)
{
	pbuf_free(w->frame);
	(*counter)++;
	release(w);
}

/* A free slot for a new connection's ACK, making one if every slot is in
 * use: the oldest leaves, or is dropped where the ring is full. */
static struct waiting_ack *free_slot(void)
{
	struct waiting_ack *oldest = NULL;
	for (int i = 0; i < ACK_SLOTS; i++) {
		if (!slots[i].frame)
			return &slots[i];
		if (!oldest || slots[i].since < oldest->since)
			oldest = &slots[i];
	}
	if (!send_waiting(oldest))
		drop_waiting(oldest, &net_counters.tx_drop_ring_full);
	return oldest;
}

/* Keep `p` waiting in slot `w`; `ring_full`: it waits for room, not for
 * the input's end. */
static void keep(struct waiting_ack *w, struct pbuf *p, uint64_t conn, u32_t ackno, u16_t window,
		 bool ring_full)
{
	pbuf_ref(p); /* lwIP frees its own reference when linkoutput returns */
	*w = (struct waiting_ack){ .frame = p, .conn = conn, .ackno = ackno, .window = window, .copies = 1,
				   .since = ++ack_clock, .waited = ring_full };
	nwaiting++;
	net_counters.tx_acks_waited += ring_full;
}

err_t net_ack_output(struct pbuf *p, err_t (*send)(struct pbuf *p))
{
	uint64_t conn;
	u32_t ackno;
	u16_t window;
	bool pure;
	if (!merging || !tcp_frame(p, &conn, &pure, &ackno, &window))
		return send(p);
	struct waiting_ack *w = nwaiting ? find(conn) : NULL;
	if (w && pure && acks_more(ackno, w->ackno)) {
		drop_waiting(w, &net_counters.tx_acks_merged); /* this one says all it said */
		w = NULL;
	}
	if (w && pure && ackno == w->ackno && window == w->window) {
		/* The same again: a duplicate ACK. Each duplicate segment
		 * makes one, and a peer that resends its window after a stall
		 * (passt) would have a storm of them answer it, each counted
		 * toward another fast retransmit; three say it all. */
		if (w->copies < DUP_ACKS_KEPT)
			w->copies++;
		else
			net_counters.tx_acks_merged++;
		return ERR_OK;
	}
	if (w && !send_waiting(w)) {
		/* The ring is full and what follows cannot wait behind it: the
		 * ACK is dropped as the ring drops frames (a data segment or
		 * FIN carries the acknowledgment again; lwIP resends it). */
		drop_waiting(w, &net_counters.tx_drop_ring_full);
	}
	if (!pure)
		return send(p);
	if (!taking_input) {
		int rc = queue_behind_run(p);
		if (rc != -ENOBUFS)
			return rc ? ERR_IF : ERR_OK;
	}
	keep(free_slot(), p, conn, ackno, window, !taking_input);
	return ERR_OK;
}

void net_ack_input_begin(void) { taking_input = true; }

void net_ack_flush(void)
{
	for (int i = 0; i < ACK_SLOTS && nwaiting; i++)
		if (slots[i].frame && !send_waiting(&slots[i]))
			return; /* the ring is full: the rest wait with it */
}

void net_ack_input_end(void)
{
	taking_input = false;
	net_ack_flush();
}

bool net_ack_due(void)
{
	return nwaiting && vnet_tx_room(2);
}
