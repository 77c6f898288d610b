/*
 * netif_gso.h: what netif.c and netif_gso.c share: the offload counters,
 * frame parsing (frame.c), queueing one frame on the driver, and the TSO merging of
 * netif_gso.c (see there for why lwIP's segments are merged below lwIP
 * rather than made larger inside it).
 */
#ifndef NET_NETIF_GSO_H
#define NET_NETIF_GSO_H

#include <stdbool.h>
#include <stdint.h>
#include "lwip/err.h"
#include "lwip/pbuf.h"
#include "drivers/virtio/virtio.h"

/* The offloads as the stack used them, printed at exit (stats.c). */
struct net_offload_counters {
	uint64_t tx_csum;          /* frames whose TCP/UDP checksum the device completes */
	uint64_t tx_csum_unhandled; /* TCP frames it could not be asked to (never expected) */
	uint64_t tx_gso_frames;    /* frames the device cuts into segments (runs of 2 or more) */
	uint64_t tx_gso_segments;  /* lwIP segments in them */
	uint64_t tx_gso_held;      /* segments held back to see whether the next one joins */
	uint64_t tx_gso_blocked;   /* flushes that found the ring full (the run waits) */
	uint64_t rx_csum_skipped;  /* frames lwIP took without checking TCP/UDP checksums */
	uint64_t rx_gso;           /* TCP segments the host merged, taken whole */
};
extern struct net_offload_counters net_offload_counters;

/* Where an IPv4 TCP or UDP packet's headers lie in a frame. */
struct net_frame_l4 {
	u16_t start;   /* the TCP or UDP header's offset */
	u16_t len;     /* TCP or UDP header and payload bytes */
	u16_t hdr_len; /* Ethernet, IP and TCP or UDP headers */
	u8_t proto;    /* IP_PROTO_TCP or IP_PROTO_UDP */
};
/* True when frame `p` is one whole IPv4 TCP or UDP packet (no fragment, no
 * padding) whose headers all lie in its first pbuf. */
bool net_frame_l4(const struct pbuf *p, struct net_frame_l4 *l);
/* The pseudo-header's sum (folded, not complemented) of the IPv4 packet in
 * `frame`, for `proto` and `l4_len` bytes of it. */
u16_t net_pseudo_sum(const u8_t *frame, u8_t proto, u16_t l4_len);
/* The pieces of `frame` after its first `skip` bytes, at most `room` of
 * them, into seg[] (NULL: only count them); how many, or -1 when they do
 * not fit. */
int net_frame_pieces(const struct pbuf *frame, u16_t skip, struct vnet_seg *seg, int room);

/* netif.c: give `frame` (a reference of ours) to the driver, its checksum
 * left to the device where it can. 0: the reference went with it; else
 * vnet_tx's error (or -ENOMEM) and the reference is still ours. */
int net_netif_queue(struct pbuf *frame);
/* netif.c: send `p` as lwIP's linkoutput does, one frame, now. */
err_t net_netif_send(struct pbuf *p);

/* netif_gso.c: linkoutput where the device segments: `p` goes now, or joins
 * a run of full segments of its connection the device will cut apart. */
err_t net_gso_output(struct pbuf *p);
/* A run is held (nothing may overtake it). */
bool net_gso_holding(void);
/* A run is held and the device has room for it (or will, once reclaimed). */
bool net_gso_due(void);
/* Hand a held run to the device (it stays held if the ring is full). */
void net_gso_flush(void);
/* If `cookie` is a run the driver is done with, free it and return true. */
bool net_gso_tx_done(void *cookie);

#endif
