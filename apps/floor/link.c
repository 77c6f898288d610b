/*
 * link.c: the floor's frames, in and out (floor.c says what the floor is).
 *
 * In: each frame the driver delivers is checked one layer at a time, each
 * length against the bytes there before any field is read or added:
 * Ethernet, then ARP (a request for our address is answered at once) or
 * IPv4 (version, header length, total length, header checksum, no fragment,
 * our address, protocol TCP). What passes goes to tcp.c as a struct seg_in;
 * everything else is dropped and counted by reason. A frame that spans
 * several receive buffers (only a TCP segment the host merged, GUEST_TSO4,
 * is that long) is dropped: no request of ours needs one.
 *
 * Out: a reply is built in one transmit slot, a fixed buffer the device
 * reads in place (one piece, behind the driver's virtio-net header) until
 * the driver reports it done; it goes back to the sender of the frame in
 * hand, MAC and IPv4 addresses swapped, so the floor keeps no ARP table and
 * never asks for an address. TCP checksums are completed by the device
 * when the driver negotiated VIRTIO_NET_F_CSUM (the field holds the
 * pseudo-header's sum, as net/netif.c does for lwIP), computed here
 * otherwise; the IPv4 header checksum is always computed here.
 */
#include <string.h>
#include "kernel/kernel.h"
#include "floor.h"

#define ETH_HLEN 14
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define IP_HLEN 20
#define PROTO_TCP 6
#define ARP_LEN 28
#define ARP_REQUEST 1
#define ARP_REPLY 2
/* Where the TCP header of a reply starts: we send no IPv4 options. */
#define TCP_AT (ETH_HLEN + IP_HLEN)

/* Frames the device may hold at once: a frame takes two descriptors (the
 * driver's header and the slot), and a ring has 256 at most. */
#define TX_SLOTS 128
/* Room for the headers (a SYN-ACK's TCP header is 24 bytes with its MSS
 * option) and the longest answer, in whole cache lines. */
#define TX_SLOT_BYTES 1152
_Static_assert(TCP_AT + 24 + FLOOR_ANSWER_MAX <= TX_SLOT_BYTES, "a reply must fit its slot");

/* The slots, and those not with the device (a stack of them). */
static uint8_t tx_slots[TX_SLOTS][TX_SLOT_BYTES] __attribute__((aligned(64)));
static uint8_t *tx_free[TX_SLOTS];
static unsigned tx_nfree;

/* ---- checksums ------------------------------------------------------------ */

uint32_t csum_partial(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = buf;
	uint64_t s = sum;
	for (; len >= 2; p += 2, len -= 2)
		s += (uint32_t)p[0] << 8 | p[1];
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 32)
		s = (s & 0xffffffff) + (s >> 32);
	return (uint32_t)s;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* ---- transmit slots --------------------------------------------------------- */

/* The driver is done with a frame: its slot is free again. */
static void tx_done(void *cookie)
{
	uint8_t *slot = cookie;
	size_t off = (size_t)(slot - &tx_slots[0][0]);
	KCHECK(off < sizeof tx_slots && off % TX_SLOT_BYTES == 0 && tx_nfree < TX_SLOTS);
	tx_free[tx_nfree++] = slot;
}

/* A free slot, NULL when the device holds all of them (counted). */
static uint8_t *slot_take(void)
{
	if (tx_nfree == 0)
		vnet_tx_reclaim(); /* the device may have finished some since the poll began */
	if (tx_nfree == 0) {
		floor_counters.drop_tx_full++;
		return NULL;
	}
	return tx_free[--tx_nfree];
}

/* Hand `len` bytes of `slot` to the device, with `off` (NULL: none). */
static bool slot_send(uint8_t *slot, size_t len, const struct vnet_tx_offload *off)
{
	struct vnet_seg seg = { slot, len };
	if (vnet_tx(&seg, 1, slot, off) < 0) {
		tx_free[tx_nfree++] = slot; /* not taken: never reported done */
		floor_counters.drop_tx_full++;
		return false;
	}
	floor_counters.frames_out++;
	return true;
}

/* ---- ARP -------------------------------------------------------------------- */

/* An Ethernet/IPv4 ARP packet of `op` in `slot`, to `dst_mac`, from us. */
static void arp_build(uint8_t *slot, const uint8_t *dst_mac, unsigned op, const uint8_t *target_mac,
		      const uint8_t *target_ip)
{
	memcpy(slot, dst_mac, 6);
	memcpy(slot + 6, floor_cfg.mac, 6);
	put16(slot + 12, ETHERTYPE_ARP);
	uint8_t *a = slot + ETH_HLEN;
	put16(a, 1); /* Ethernet */
	put16(a + 2, ETHERTYPE_IPV4);
	a[4] = 6, a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, floor_cfg.mac, 6);
	put32(a + 14, floor_cfg.ip);
	memcpy(a + 18, target_mac, 6);
	memcpy(a + 24, target_ip, 4);
}

/* An ARP packet: a request for our address gets its reply. */
static void arp_input(const uint8_t *f, size_t len)
{
	if (len < ETH_HLEN + ARP_LEN) {
		floor_counters.drop_short++;
		return;
	}
	const uint8_t *a = f + ETH_HLEN;
	if (be16(a) != 1 || be16(a + 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4 ||
	    be16(a + 6) != ARP_REQUEST || be32(a + 24) != floor_cfg.ip) {
		floor_counters.drop_arp++;
		return;
	}
	uint8_t *slot = slot_take();
	if (!slot)
		return;
	/* To the sender's hardware and protocol addresses, as it asked. */
	arp_build(slot, a + 8, ARP_REPLY, a + 8, a + 14);
	if (slot_send(slot, ETH_HLEN + ARP_LEN, NULL))
		floor_counters.arp_replies++;
}

void link_init(void)
{
	for (unsigned i = 0; i < TX_SLOTS; i++)
		tx_free[i] = tx_slots[i];
	tx_nfree = TX_SLOTS;
	vnet_set_tx_done(tx_done);
	/* A gratuitous request: sender and target our own address. */
	static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, none[6];
	uint8_t ip[4];
	put32(ip, floor_cfg.ip);
	uint8_t *slot = slot_take();
	if (slot) {
		arp_build(slot, broadcast, ARP_REQUEST, none, ip);
		slot_send(slot, ETH_HLEN + ARP_LEN, NULL);
	}
}

/* ---- IPv4 --------------------------------------------------------------------- */

/* An IPv4 packet: checked, then to tcp.c if it is TCP for us. */
static void ip_input(const uint8_t *f, size_t len, bool csum_ok)
{
	if (len < ETH_HLEN + IP_HLEN) {
		floor_counters.drop_short++;
		return;
	}
	const uint8_t *ip = f + ETH_HLEN;
	size_t ihl = (size_t)(ip[0] & 15) * 4, total = be16(ip + 2);
	/* Ethernet may pad a short packet: its own length is the IPv4 total. */
	if (ip[0] >> 4 != 4 || ihl < IP_HLEN || total < ihl || total > len - ETH_HLEN ||
	    csum_fold(csum_partial(ip, ihl, 0)) != 0xffff) {
		floor_counters.drop_ip_header++;
		return;
	}
	if (be16(ip + 6) & 0x3fff) { /* more fragments, or an offset */
		floor_counters.drop_fragment++;
		return;
	}
	if (be32(ip + 16) != floor_cfg.ip) {
		floor_counters.drop_not_ours++;
		return;
	}
	if (ip[9] != PROTO_TCP) {
		floor_counters.drop_not_tcp++;
		return;
	}
	struct seg_in in = { .frame = f, .src = be32(ip + 12), .tcp = ip + ihl, .tcp_len = total - ihl,
			     .csum_ok = csum_ok };
	floor_tcp_input(&in);
}

void link_input(void *ctx, const struct vnet_frame *fr)
{
	(void)ctx;
	floor_counters.frames_in++;
	if (fr->npieces != 1) {
		floor_counters.drop_multi++;
		return;
	}
	const uint8_t *f = fr->piece[0].base;
	size_t len = fr->piece[0].len;
	if (len < ETH_HLEN) { /* the driver drops these first; a device may not */
		floor_counters.drop_short++;
		return;
	}
	switch (be16(f + 12)) {
	case ETHERTYPE_IPV4:
		ip_input(f, len, fr->csum_ok);
		break;
	case ETHERTYPE_ARP:
		arp_input(f, len);
		break;
	default:
		floor_counters.drop_ethertype++;
		break;
	}
}

/* ---- replies ------------------------------------------------------------------ */

bool link_reply_begin(const struct seg_in *in, struct tx_frame *tx)
{
	uint8_t *f = slot_take();
	if (!f)
		return false;
	memcpy(f, in->frame + 6, 6); /* back to where it came from */
	memcpy(f + 6, floor_cfg.mac, 6);
	put16(f + 12, ETHERTYPE_IPV4);
	uint8_t *ip = f + ETH_HLEN;
	ip[0] = 0x45, ip[1] = 0;  /* version 4, 20 bytes; no DSCP */
	put16(ip + 4, 0);         /* identification: an atomic datagram needs none (RFC 6864) */
	put16(ip + 6, 0x4000);    /* don't fragment */
	ip[8] = 64, ip[9] = PROTO_TCP;
	put32(ip + 12, floor_cfg.ip);
	put32(ip + 16, in->src);
	tx->frame = f;
	tx->tcp = f + TCP_AT;
	return true;
}

bool link_reply_send(struct tx_frame *tx, size_t tcp_len, uint32_t payload_sum)
{
	uint8_t *ip = tx->frame + ETH_HLEN, *t = tx->tcp;
	KCHECK(TCP_AT + tcp_len <= TX_SLOT_BYTES);
	put16(ip + 2, (unsigned)(IP_HLEN + tcp_len));
	put16(ip + 10, 0);
	put16(ip + 10, (uint16_t)~csum_fold(csum_partial(ip, IP_HLEN, 0)));
	/* The pseudo-header: both addresses, the protocol, the TCP length. */
	uint32_t pseudo = csum_partial(ip + 12, 8, PROTO_TCP + (uint32_t)tcp_len);
	struct vnet_tx_offload off = { .csum_start = TCP_AT, .csum_offset = 16 };
	put16(t + 16, 0);
	if (floor_cfg.offload_csum) {
		put16(t + 16, csum_fold(pseudo));
	} else {
		size_t hlen = (size_t)(t[12] >> 4) * 4;
		uint32_t sum = csum_partial(t, hlen, pseudo + csum_fold(payload_sum));
		put16(t + 16, (uint16_t)~csum_fold(sum));
	}
	return slot_send(tx->frame, TCP_AT + tcp_len, floor_cfg.offload_csum ? &off : NULL);
}
