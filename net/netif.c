/*
 * netif.c: the lwIP network interface over the virtio-net driver.
 *
 * Transmit is zero-copy: the pbuf chain lwIP hands us becomes the driver's
 * list of pieces, and the chain is kept alive (pbuf_ref) until the driver
 * reports the frame done; lwIP itself does not rewrite a segment whose pbuf
 * is still referenced (tcp_output_segment_busy). Where the device completes
 * checksums (VNET_OFF_TX_CSUM), lwIP generates none for TCP and UDP (the
 * netif's NETIF_CHECKSUM_GEN_TCP/UDP are off, so it leaves the field 0 at
 * every output, retransmissions included): each such frame gets the
 * pseudo-header's sum in that field here and goes out asking the device to
 * finish it. Where the device also segments (VNET_OFF_TX_TSO4), runs of full
 * segments of one connection go out as one frame (netif_gso.c).
 *
 * Receive borrows: each frame's pieces (one per device buffer) become a
 * chain of custom pbufs over the driver's buffers (vnet_rx_lend,
 * pbuf_alloced_custom), given to lwIP's ethernet_input; freeing one hands
 * its buffer back. The driver refills its ring from a reserve meanwhile, so
 * whatever lwIP queues (unread data, out-of-order segments) never empties
 * the ring; with the reserve spent, a frame is copied into pool pbufs
 * instead, as every frame was before lending (the bytes are counted). A
 * frame whose TCP or UDP checksum the device vouches for goes in with the
 * netif's TCP and UDP checks off for that one input (NO_SYS: the input runs
 * to its end before ethernet_input returns, so no other frame sees the
 * setting); the IP header's checksum is still checked.
 */
#include <errno.h>
#include "lwip/etharp.h"
#include "lwip/inet_chksum.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/tcp.h"
#include "lwip/stats.h"
#include "drivers/virtio/virtio.h"
#include "kernel/kernel.h"
#include "net_internal.h"
#include "netif_gso.h"

/* An Ethernet frame without FCS: 1500 bytes of payload + 14 of header. */
#define ETH_FRAME_MAX 1514
/* What we accept on receive: room for an 802.1Q tag besides. */
#define ETH_FRAME_MAX_RX (ETH_FRAME_MAX + 4)
/* A TCP segment the host merged (GUEST_TSO4): as long as one pbuf can be. */
#define ETH_GSO_MAX_RX 65535
/* The netif's TCP and UDP checksum switches. */
#define GEN_L4   (NETIF_CHECKSUM_GEN_TCP | NETIF_CHECKSUM_GEN_UDP)
#define CHECK_L4 (NETIF_CHECKSUM_CHECK_TCP | NETIF_CHECKSUM_CHECK_UDP)

struct net_counters net_counters;
struct net_offload_counters net_offload_counters;

/* The driver's offloads, and the netif's checksum switches they call for. */
static unsigned offloads;
static u16_t checksum_flags;

static unsigned be16(const u8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

/* Where the device completes checksums, ask it to for `p` (a TCP or UDP
 * packet whose headers are in its first pbuf): the pseudo-header's sum goes
 * in the checksum field lwIP left 0. False when nothing is asked: then the
 * frame's checksums are complete (lwIP's own: ICMP, IP) or absent (a UDP
 * fragment's datagram, sent with checksum 0, which IPv4 allows). */
static bool csum_request(struct pbuf *p, struct vnet_tx_offload *off)
{
	struct net_frame_l4 l;
	if (!(offloads & VNET_OFF_TX_CSUM))
		return false;
	if (!net_frame_l4(p, &l)) {
		/* lwIP puts every header in the first pbuf and pads nothing, so
		 * a TCP packet always parses; were one not to, its checksum would
		 * stay 0 (lwIP generates none here): counted, and the netrx
		 * fuzzer's device fails on any frame with a bad checksum. */
		const u8_t *f = p->payload;
		if (p->len >= 14 + 20 && be16(f + 12) == ETHTYPE_IP && f[14 + 9] == IP_PROTO_TCP)
			net_offload_counters.tx_csum_unhandled++;
		return false;
	}
	u8_t *f = p->payload;
	u16_t field = l.proto == IP_PROTO_TCP ? 16 : 6;
	u16_t sum = net_pseudo_sum(f, l.proto, l.len);
	f[l.start + field] = (u8_t)(sum >> 8);
	f[l.start + field + 1] = (u8_t)sum;
	*off = (struct vnet_tx_offload){ .csum_start = l.start, .csum_offset = field };
	net_offload_counters.tx_csum++;
	return true;
}

/* A chain with more pieces than the driver takes, copied into one pbuf; NULL
 * when there is no memory. */
static struct pbuf *flatten(struct pbuf *chain)
{
	struct pbuf *flat = pbuf_clone(PBUF_RAW, PBUF_RAM, chain);
	if (flat)
		net_counters.tx_flattened++;
	return flat;
}

int net_frame_pieces(const struct pbuf *frame, u16_t skip, struct vnet_seg *seg, int room)
{
	int n = 0;
	for (const struct pbuf *q = frame; q; q = q->next) {
		if (skip >= q->len) {
			skip = (u16_t)(skip - q->len);
			continue;
		}
		if (n == room)
			return -1;
		if (seg) {
			seg[n].base = (const u8_t *)q->payload + skip;
			seg[n].len = q->len - skip;
		}
		skip = 0;
		n++;
	}
	return n;
}

int net_netif_queue(struct pbuf *frame)
{
	struct pbuf *send = frame;
	if (pbuf_clen(frame) > vnet_tx_max_segs()) {
		send = flatten(frame);
		if (!send)
			return -ENOMEM;
	}
	struct vnet_tx_offload off;
	bool offload = csum_request(send, &off);
	struct vnet_seg seg[VNET_MAX_SEGS];
	int nseg = net_frame_pieces(send, 0, seg, vnet_tx_max_segs());
	u16_t len = send->tot_len; /* vnet_tx may report the frame done before it returns */
	int rc = vnet_tx(seg, nseg, send, offload ? &off : NULL);
	if (send != frame)
		pbuf_free(rc ? send : frame); /* keep the one the caller or the driver owns */
	if (rc)
		return rc;
	net_counters.tx_frames++;
	net_counters.tx_bytes += len;
	LINK_STATS_INC(link.xmit);
	return 0;
}

err_t net_netif_send(struct pbuf *p)
{
	pbuf_ref(p); /* ours: the driver reads the memory until tx-done frees it */
	int rc = net_netif_queue(p);
	if (rc == 0)
		return ERR_OK;
	pbuf_free(p);
	LINK_STATS_INC(link.drop);
	if (rc == -ENOBUFS) {
		net_counters.tx_drop_ring_full++;
		return ERR_MEM; /* TCP keeps the segment and sends it later */
	}
	if (rc == -ENOMEM) {
		net_counters.tx_drop_no_pbuf++;
		LINK_STATS_INC(link.memerr);
		return ERR_MEM;
	}
	net_counters.tx_drop_invalid++;
	return ERR_IF;
}

/* One frame to the driver: through the TSO runs where the device cuts them. */
static err_t send_frame(struct pbuf *p)
{
	if (offloads & VNET_OFF_TX_TSO4)
		return net_gso_output(p);
	return net_netif_send(p);
}

/* lwIP's linkoutput: queue one frame on the device without copying it; a
 * pure ACK may wait a little, merged with later ones (netif_ack.c). */
static err_t link_output(struct netif *netif, struct pbuf *p)
{
	(void)netif;
	if (p->tot_len > ETH_FRAME_MAX) {
		net_counters.tx_drop_invalid++;
		LINK_STATS_INC(link.drop);
		return ERR_IF;
	}
	return net_ack_output(p, send_frame);
}

void net_netif_tx_done(void *cookie)
{
	if (!net_gso_tx_done(cookie))
		pbuf_free((struct pbuf *)cookie);
}

/* A pbuf over a receive buffer the driver lent: one per buffer, so a
 * buffer's number finds its pbuf and no allocation can fail. */
struct lent_pbuf {
	struct pbuf_custom pc; /* first: lwIP hands our free function the pbuf */
	uint16_t buf;          /* the driver's buffer under it */
};
static struct lent_pbuf lent_pbufs[VNET_RX_BUFS_MAX];

static void lent_pbuf_free(struct pbuf *p)
{
	struct lent_pbuf *lp = (struct lent_pbuf *)p;
	vnet_rx_give_back(lp->buf);
}

/* Frame `fr`, lent by the driver, as a chain of pbufs over its buffers;
 * built from its last piece, so each pbuf_cat walks one pbuf. */
static struct pbuf *borrow_frame(const struct vnet_frame *fr)
{
	struct pbuf *head = NULL;
	for (int i = fr->npieces - 1; i >= 0; i--) {
		struct lent_pbuf *lp = &lent_pbufs[fr->buf[i]];
		lp->buf = fr->buf[i];
		lp->pc.custom_free_function = lent_pbuf_free;
		void *base = (void *)(uintptr_t)fr->piece[i].base;
		struct pbuf *q = pbuf_alloced_custom(PBUF_RAW, (u16_t)fr->piece[i].len, PBUF_REF, &lp->pc, base,
						     (u16_t)fr->piece[i].len);
		KCHECK(q); /* PBUF_RAW takes no header room: it cannot fail */
		if (head)
			pbuf_cat(q, head);
		head = q;
	}
	return head;
}

/* Frame `fr` copied into pool pbufs; NULL (counted) when the pool is empty. */
static struct pbuf *copy_frame(const struct vnet_frame *fr)
{
	struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)fr->len, PBUF_POOL);
	if (!p) {
		net_counters.rx_drop_no_pbuf++;
		LINK_STATS_INC(link.memerr);
		LINK_STATS_INC(link.drop);
		return NULL;
	}
	size_t at = 0;
	for (int i = 0; i < fr->npieces; i++) {
		pbuf_take_at(p, fr->piece[i].base, (u16_t)fr->piece[i].len, (u16_t)at);
		at += fr->piece[i].len;
	}
	net_counters.copied_rx_to_pbufs += fr->len;
	return p;
}

bool net_rx_memory_short(void)
{
	/* The buffers a received frame can travel on: the driver's reserve
	 * (lent) and the pool (copied). Short: three quarters are held. */
	const struct stats_mem *pool = lwip_stats.memp[MEMP_PBUF_POOL];
	unsigned total = vnet_rx_reserve_size() + pool->avail;
	unsigned held = vnet_rx_buffers_held() + pool->used;
	/* Or half of lwIP's heap, where the sockets' chunks of small pieces
	 * live beside every segment we send: it must keep room for those. */
	return 4 * held >= 3 * total || 2 * lwip_stats.mem.used >= lwip_stats.mem.avail;
}

/* Whether frame `fr` is a TCP segment with SYN set (a plain IPv4 header is
 * enough to tell; anything else is not one). */
static bool tcp_syn(const struct vnet_frame *fr)
{
	const u8_t *f = fr->piece[0].base;
	size_t len = fr->piece[0].len;
	if (len < 14 + 20 || be16(f + 12) != ETHTYPE_IP || f[14 + 9] != IP_PROTO_TCP)
		return false;
	size_t ihl = (f[14] & 15) * 4u;
	return ihl >= 20 && len >= 14 + ihl + 14 && (f[14 + ihl + 13] & TCP_SYN);
}

/* Hand one received frame to lwIP, on the driver's buffers or copied;
 * false when it was dropped. A SYN is always copied: the TCP hooks may
 * drop it and have it fed in again (net_netif_deliver), and lwIP's input
 * turns the header it reads to host order in place, so the second input
 * needs the device's bytes untouched. */
static bool input_frame(struct netif *netif, const struct vnet_frame *fr)
{
	struct pbuf *p = !tcp_syn(fr) && vnet_rx_lend(fr) ? borrow_frame(fr) : copy_frame(fr);
	if (!p)
		return false;
	bool trusted = fr->csum_ok && (offloads & VNET_OFF_RX_CSUM);
	if (trusted) {
		NETIF_SET_CHECKSUM_CTRL(netif, checksum_flags & ~CHECK_L4);
		net_offload_counters.rx_csum_skipped++;
	}
	trace_mark(TP_INPUT);
	err_t err = netif->input(p, netif);
	NETIF_SET_CHECKSUM_CTRL(netif, checksum_flags);
	if (err != ERR_OK) {
		pbuf_free(p);
		net_counters.rx_drop_input++;
		LINK_STATS_INC(link.drop);
		return false;
	}
	return true;
}

/* Frames lwIP would take into a state it asserts on, or read past: the
 * counter to charge, or NULL when the frame may go in.
 *  - An IPv4 fragment that carries nothing (MF or an offset, and a total
 *    length of just its header): reassembly accepts it and ends the
 *    datagram's chain with an empty pbuf, a shape that etharp_query (an
 *    echo reply to an unresolved sender) and pbuf_clone (a reply with more
 *    pieces than the device takes) assert on.
 *  - An ARP frame too short for the ARP header, or an IPv4 one whose first
 *    piece does not hold an IPv4 header: etharp_input and ip4_input read
 *    the header's fields before they check the length (stale bytes of our
 *    buffer, not beyond it, but not the peer's either). */
static uint64_t *frame_refused(const struct vnet_frame *fr)
{
	const u8_t *f = fr->piece[0].base;
	size_t first = fr->piece[0].len;
	if (first < SIZEOF_ETH_HDR)
		return NULL; /* ethernet_input drops it */
	unsigned type = be16(f + 12);
	if (type == ETHTYPE_ARP && fr->len < SIZEOF_ETH_HDR + SIZEOF_ETHARP_HDR)
		return &net_counters.rx_drop_short_arp;
	if (type != ETHTYPE_IP)
		return NULL;
	if (first < SIZEOF_ETH_HDR + IP_HLEN)
		return &net_counters.rx_drop_short_ip; /* ip4_input reads the header's length first */
	const u8_t *ip = f + SIZEOF_ETH_HDR;
	bool fragment = (be16(ip + 6) & 0x3fff) != 0; /* MF, or an offset */
	if (fragment && be16(ip + 2) <= (ip[0] & 15) * 4u)
		return &net_counters.rx_drop_empty_fragment;
	return NULL;
}

void net_netif_deliver(void *ctx, const struct vnet_frame *fr)
{
	struct netif *netif = ctx;
	trace_mark(TP_FRAME);
	if (fr->len > (fr->gso_size ? ETH_GSO_MAX_RX : ETH_FRAME_MAX_RX)) {
		net_counters.rx_drop_too_long++;
		LINK_STATS_INC(link.drop);
		return;
	}
	uint64_t *refused = frame_refused(fr);
	if (refused) {
		(*refused)++;
		LINK_STATS_INC(link.drop);
		return;
	}
	net_counters.rx_frames++;
	net_counters.rx_bytes += fr->len;
	net_offload_counters.rx_gso += fr->gso_size != 0;
	LINK_STATS_INC(link.recv);
	if (input_frame(netif, fr) && net_tcp_make_room()) {
		/* The frame was a SYN the TCP hook dropped until a pcb was ended
		 * to make room for it: the listener gets the same SYN again. */
		input_frame(netif, fr);
	}
}

int8_t net_netif_init(struct netif *netif)
{
	netif->name[0] = 'e';
	netif->name[1] = 'n';
	netif->output = etharp_output;
	netif->linkoutput = link_output;
	netif->mtu = 1500;
	netif->hwaddr_len = ETH_HWADDR_LEN;
	vnet_mac(netif->hwaddr);
	/* The virtual link is up once the device runs; its status is not tracked. */
	netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET |
		       NETIF_FLAG_LINK_UP;
	offloads = vnet_offloads();
	checksum_flags = NETIF_CHECKSUM_ENABLE_ALL;
	if (offloads & VNET_OFF_TX_CSUM)
		checksum_flags &= (u16_t)~GEN_L4;
	NETIF_SET_CHECKSUM_CTRL(netif, checksum_flags);
	vnet_set_tx_done(net_netif_tx_done);
	vnet_set_tx_hold_worth(net_tcp_several_open);
	return ERR_OK;
}
