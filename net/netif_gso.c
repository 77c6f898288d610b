/*
 * netif_gso.c: TCP segmentation offload for lwIP, which has none.
 *
 * Why not have lwIP itself make segments larger than the MSS (pcb->mss
 * raised, the real MSS as gso_size)? lwIP 2.1.3 counts its congestion
 * control and loss recovery in units of pcb->mss: the initial window is
 * LWIP_TCP_CALC_INITIAL_CWND(mss), 4 MSS (with a 64 KiB "mss", 256 KiB at
 * once); slow start and congestion avoidance grow cwnd by mss; ssthresh
 * never drops below 2 * mss (after a loss, 128 KiB would stay in flight);
 * fast retransmit inflates the window by 3 * mss; an RTO restarts from one
 * mss; Nagle holds back anything shorter than mss while data is unacked, so
 * every ordinary segment would wait; and a segment is lwIP's unit of
 * retransmission, so one lost wire segment would resend up to 64 KiB. Every
 * one of those is wrong, so lwIP keeps its MSS.
 *
 * What is done instead: lwIP makes, sends and accounts for its segments as
 * always; below it, a run of them that it emits back to back for one
 * connection goes to the device as one frame. A run is segments with the
 * same headers but for sequence number, IP id, checksums and flags; each
 * starts where the one before ended; all but the last carry exactly the
 * first one's payload length and only ACK; the last may be shorter and
 * carry PSH or FIN. The frame is the first segment's headers, copied and
 * rewritten for the whole (IP length and checksum, the last one's flags,
 * the pseudo-header's sum for the device's checksum), then every segment's
 * payload in place, with gso_size the first one's payload. The device (the
 * host's GSO, behind tap) cuts it into exactly those segments again: headers
 * copied, sequence numbers advanced by gso_size, PSH and FIN on the last
 * only, checksums computed. So lwIP's windows, RTT timing, retransmission
 * and congestion control see nothing but the segments they sent, and a lost
 * wire segment is resent as the lwIP segment it was (possibly in another
 * run). Each segment's pbufs stay referenced until the device is done, so
 * lwIP does not resend or change one meanwhile (tcp_output_segment_busy),
 * as for any frame on the ring.
 *
 * The cost: a segment that may start or continue a run (one without PSH) is
 * held until the next one shows whether it joins, or until the network is
 * next polled or asked whether it has work (net.c: net_gso_due, and a flush
 * at every poll and before parking). lwIP ends every write with a PSH
 * segment, which ends the run and sends it at once.
 */
#include <errno.h>
#include <string.h>
#include "lwip/def.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/tcp.h"
#include "lwip/stats.h"
#include "kernel/kernel.h"
#include "net_internal.h"
#include "netif_gso.h"

/* Segments in a run: at most 64 KiB of 1460-byte ones (44), which the
 * driver's VNET_MAX_SEGS pieces hold (the headers, then one piece per
 * segment for data tcp_write copied): a bulk sender's 64 KiB write leaves
 * as one frame. */
#define RUN_FRAMES  45
#define RUN_HDR_MAX (14 + 60 + 60)  /* Ethernet, IP and TCP headers, options included */
#define RUNS        64              /* runs held or on the ring at once */
#define IP_LEN_MAX  65535           /* the run's IP packet */

/* TCP header bytes, from its start. */
#define TCP_SEQ_AT   4
#define TCP_FLAGS_AT 13
#define TCP_SUM_AT   16

struct run {
	struct pbuf *frame[RUN_FRAMES]; /* lwIP's frames, each referenced */
	int nframes;                    /* how many */
	u8_t hdr[RUN_HDR_MAX];          /* the first one's headers: rewritten for the whole */
	struct net_frame_l4 l4;         /* where they lie */
	u16_t mss;                      /* the first one's payload: all but the last have as much */
	u8_t last_flags;                /* the last one's TCP flags */
	u32_t next_seq;                 /* where the next one must start */
	u32_t payload;                  /* payload bytes of all */
	int npieces;                    /* pieces for the device: the headers, then the payloads */
	bool closed;                    /* the last was short or had PSH or FIN: no more join */
	struct run *next_free;          /* on the free list */
};

static struct run runs[RUNS];
static struct run *free_runs, *held; /* free records; the run being held, if any */

static u32_t be32(const u8_t *p) { return (u32_t)p[0] << 24 | (u32_t)p[1] << 16 | (u32_t)p[2] << 8 | p[3]; }
static void put16(u8_t *p, unsigned v) { p[0] = (u8_t)(v >> 8), p[1] = (u8_t)v; }

/* A run's cookie on the ring is its address with bit 0 set (a pbuf's is
 * aligned, so never has it). */
static void *run_cookie(struct run *r) { return (void *)((uintptr_t)r | 1); }

static struct run *run_alloc(void)
{
	static bool ready;
	if (!ready) {
		for (int i = 0; i < RUNS; i++)
			runs[i].next_free = i + 1 < RUNS ? &runs[i + 1] : NULL;
		free_runs = &runs[0];
		ready = true;
	}
	struct run *r = free_runs;
	if (r)
		free_runs = r->next_free;
	return r;
}

static void run_free(struct run *r)
{
	for (int i = 0; i < r->nframes; i++)
		pbuf_free(r->frame[i]);
	r->nframes = 0;
	r->next_free = free_runs;
	free_runs = r;
}

static const u8_t *tcp_of(const struct pbuf *p, const struct net_frame_l4 *l)
{
	return (const u8_t *)p->payload + l->start;
}

static u16_t payload_of(const struct net_frame_l4 *l, const u8_t *tcp)
{
	return (u16_t)(l->len - (tcp[12] >> 4) * 4u);
}

/* Frame `p`'s headers equal the run's but where segments of one stream may
 * differ: IP length, id and checksum; TCP sequence number, flags, checksum. */
static bool same_stream(const struct run *r, const struct pbuf *p, const struct net_frame_l4 *l)
{
	if (l->start != r->l4.start || l->hdr_len != r->l4.hdr_len)
		return false;
	const u8_t *h = p->payload;
	u16_t t = l->start;
	for (u16_t i = 0; i < l->hdr_len; i++) {
		bool varies = (i >= 16 && i < 20) || i == 24 || i == 25 || (i >= t + TCP_SEQ_AT && i < t + TCP_SEQ_AT + 4) ||
			      i == t + TCP_FLAGS_AT || i == t + TCP_SUM_AT || i == t + TCP_SUM_AT + 1;
		if (!varies && h[i] != r->hdr[i])
			return false;
	}
	return true;
}

/* Whether TCP frame `p` may join the held run. */
static bool joins(const struct run *r, const struct pbuf *p, const struct net_frame_l4 *l)
{
	const u8_t *tcp = tcp_of(p, l);
	u8_t flags = tcp[TCP_FLAGS_AT];
	u16_t payload = payload_of(l, tcp);
	if (r->closed || (flags & ~(TCP_ACK | TCP_PSH | TCP_FIN)) != 0 || !(flags & TCP_ACK) || payload == 0 ||
	    payload > r->mss || r->nframes == RUN_FRAMES || be32(tcp + TCP_SEQ_AT) != r->next_seq ||
	    r->l4.hdr_len - 14 + r->payload + payload > IP_LEN_MAX)
		return false;
	return net_frame_pieces(p, l->hdr_len, NULL, vnet_tx_max_segs() - r->npieces) >= 0 && same_stream(r, p, l);
}

/* Add TCP frame `p` (referenced) to run `r`. */
static void add(struct run *r, struct pbuf *p, const struct net_frame_l4 *l)
{
	const u8_t *tcp = tcp_of(p, l);
	u16_t payload = payload_of(l, tcp);
	r->frame[r->nframes++] = p;
	r->npieces += net_frame_pieces(p, l->hdr_len, NULL, VNET_MAX_SEGS);
	r->payload += payload;
	r->next_seq = be32(tcp + TCP_SEQ_AT) + payload;
	r->last_flags = tcp[TCP_FLAGS_AT];
	if (payload < r->mss || (r->last_flags & (TCP_PSH | TCP_FIN)))
		r->closed = true;
	net_offload_counters.tx_gso_held++;
}

/* Start a run with TCP frame `p` if it may begin one (only ACK, a payload)
 * and a record is free. */
static bool start(struct pbuf *p, const struct net_frame_l4 *l)
{
	const u8_t *tcp = tcp_of(p, l);
	u16_t payload = payload_of(l, tcp);
	if (tcp[TCP_FLAGS_AT] != TCP_ACK || payload == 0 || l->hdr_len > RUN_HDR_MAX ||
	    net_frame_pieces(p, l->hdr_len, NULL, vnet_tx_max_segs() - 1) < 0)
		return false;
	struct run *r = run_alloc();
	if (!r)
		return false;
	*r = (struct run){ .l4 = *l, .mss = payload, .npieces = 1, .next_free = NULL };
	MEMCPY(r->hdr, p->payload, l->hdr_len);
	pbuf_ref(p);
	add(r, p, l);
	held = r;
	return true;
}

/* The run's headers, rewritten for the whole frame. */
static void rewrite_headers(struct run *r)
{
	u8_t *h = r->hdr, *ip = h + 14, *tcp = h + r->l4.start;
	unsigned ihl = (ip[0] & 15) * 4u, thl = r->l4.hdr_len - r->l4.start;
	put16(ip + 2, ihl + thl + r->payload);
	put16(ip + 10, 0);
	u32_t sum = 0;
	for (unsigned i = 0; i < ihl; i += 2)
		sum += (u32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, ~sum & 0xffff);
	tcp[TCP_FLAGS_AT] = (u8_t)(TCP_ACK | (r->last_flags & (TCP_PSH | TCP_FIN)));
	put16(tcp + TCP_SUM_AT, net_pseudo_sum(h, IP_PROTO_TCP, (u16_t)(thl + r->payload)));
}

/* Give run `r` of two frames or more to the device as one. 0, or vnet_tx's
 * error with the run unchanged. */
static int queue_run(struct run *r)
{
	struct vnet_seg seg[VNET_MAX_SEGS];
	rewrite_headers(r);
	seg[0] = (struct vnet_seg){ r->hdr, r->l4.hdr_len };
	int n = 1;
	for (int i = 0; i < r->nframes; i++)
		n += net_frame_pieces(r->frame[i], r->l4.hdr_len, seg + n, vnet_tx_max_segs() - n);
	KCHECK(n == r->npieces);
	struct vnet_tx_offload off = { .csum_start = r->l4.start, .csum_offset = TCP_SUM_AT, .gso_size = r->mss,
				       .hdr_len = r->l4.hdr_len };
	int frames = r->nframes;
	u32_t bytes = 0;
	for (int i = 0; i < frames; i++)
		bytes += r->frame[i]->tot_len;
	int rc = vnet_tx(seg, n, run_cookie(r), &off); /* done, and r freed, maybe before it returns */
	if (rc == 0) {
		net_counters.tx_frames += (u64_t)frames;
		net_counters.tx_bytes += bytes;
		net_offload_counters.tx_gso_frames++;
		net_offload_counters.tx_gso_segments += (u64_t)frames;
		LINK_STATS_INC(link.xmit);
	}
	return rc;
}

void net_gso_flush(void)
{
	struct run *r = held;
	if (!r)
		return;
	bool single = r->nframes == 1;
	int rc = single ? net_netif_queue(r->frame[0]) : queue_run(r);
	if (rc == -ENOBUFS) {
		net_offload_counters.tx_gso_blocked++;
		return; /* it waits for room on the ring */
	}
	held = NULL;
	if (rc == 0) {
		if (single) { /* the frame went on its own, with the run's reference */
			r->nframes = 0;
			run_free(r);
		}
		return; /* else the run is the ring's now (and may be freed already) */
	}
	/* Lost to the wire: lwIP retransmits them. */
	if (rc == -ENOMEM)
		net_counters.tx_drop_no_pbuf += (u64_t)r->nframes;
	else
		net_counters.tx_drop_invalid += (u64_t)r->nframes;
	LINK_STATS_INC(link.drop);
	run_free(r);
}

bool net_gso_holding(void)
{
	return held != NULL;
}

bool net_gso_due(void)
{
	return held && vnet_tx_room(held->npieces);
}

err_t net_gso_output(struct pbuf *p)
{
	struct net_frame_l4 l;
	bool tcp = net_frame_l4(p, &l) && l.proto == IP_PROTO_TCP;
	if (held) {
		if (tcp && joins(held, p, &l)) {
			pbuf_ref(p);
			add(held, p, &l);
			if (held->closed)
				net_gso_flush();
			return ERR_OK;
		}
		net_gso_flush();
		if (held) { /* the ring is full, and nothing may overtake the run */
			net_counters.tx_drop_ring_full++;
			LINK_STATS_INC(link.drop);
			return ERR_MEM;
		}
	}
	if (tcp && start(p, &l))
		return ERR_OK;
	return net_netif_send(p);
}

bool net_gso_tx_done(void *cookie)
{
	if (!((uintptr_t)cookie & 1))
		return false;
	run_free((struct run *)((uintptr_t)cookie - 1));
	return true;
}
