/*
 * netif.c: the lwIP network interface over the virtio-net driver.
 *
 * Transmit is zero-copy: the pbuf chain lwIP hands us becomes the driver's
 * list of pieces, and the chain is kept alive (pbuf_ref) until the driver
 * reports the frame done; lwIP itself does not rewrite a segment whose pbuf
 * is still referenced (tcp_output_segment_busy). Receive copies: the driver's
 * buffer is valid only during the callback, so each frame is copied into a
 * pool pbuf and given to lwIP's ethernet_input.
 */
#include <errno.h>
#include "lwip/etharp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "drivers/virtio/virtio.h"
#include "kernel/kernel.h"
#include "net_internal.h"

/* An Ethernet frame without FCS: 1500 bytes of payload + 14 of header. */
#define ETH_FRAME_MAX 1514
/* What we accept on receive: room for an 802.1Q tag besides. */
#define ETH_FRAME_MAX_RX (ETH_FRAME_MAX + 4)

struct net_counters net_counters;

/* A chain with more pieces than the driver takes, copied into one pbuf; NULL
 * when there is no memory. */
static struct pbuf *flatten(struct pbuf *chain)
{
	struct pbuf *flat = pbuf_clone(PBUF_RAW, PBUF_RAM, chain);
	if (flat)
		net_counters.tx_flattened++;
	return flat;
}

/* The frame's pieces as the driver wants them; returns how many. */
static int frame_segments(struct pbuf *frame, struct vnet_seg seg[VNET_MAX_SEGS])
{
	int n = 0;
	for (struct pbuf *q = frame; q && n < VNET_MAX_SEGS; q = q->next) {
		if (q->len == 0)
			continue;
		seg[n].base = q->payload;
		seg[n].len = q->len;
		n++;
	}
	return n;
}

/* lwIP's linkoutput: queue one frame on the device without copying it. */
static err_t link_output(struct netif *netif, struct pbuf *p)
{
	(void)netif;
	if (p->tot_len > ETH_FRAME_MAX) {
		net_counters.tx_drop_invalid++;
		LINK_STATS_INC(link.drop);
		return ERR_IF;
	}
	/* Our reference: the driver reads the memory until tx-done frees it. */
	struct pbuf *frame;
	if (pbuf_clen(p) > VNET_MAX_SEGS) {
		frame = flatten(p);
		if (!frame) {
			net_counters.tx_drop_no_pbuf++;
			LINK_STATS_INC(link.memerr);
			return ERR_MEM;
		}
	} else {
		pbuf_ref(p);
		frame = p;
	}

	struct vnet_seg seg[VNET_MAX_SEGS];
	int nseg = frame_segments(frame, seg);
	int rc = vnet_tx(seg, nseg, frame); /* it reclaims sent frames before saying the ring is full */
	if (rc != 0) {
		pbuf_free(frame);
		LINK_STATS_INC(link.drop);
		if (rc == -ENOBUFS) {
			net_counters.tx_drop_ring_full++;
			return ERR_MEM; /* TCP keeps the segment and sends it later */
		}
		net_counters.tx_drop_invalid++;
		return ERR_IF;
	}
	net_counters.tx_frames++;
	net_counters.tx_bytes += frame->tot_len;
	LINK_STATS_INC(link.xmit);
	return ERR_OK;
}

void net_netif_tx_done(void *cookie)
{
	pbuf_free((struct pbuf *)cookie);
}

/* Copy one received frame into a pool pbuf and hand it to lwIP; false when
 * it was dropped. */
static bool input_frame(struct netif *netif, const void *frame, size_t len)
{
	struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
	if (!p) {
		net_counters.rx_drop_no_pbuf++;
		LINK_STATS_INC(link.memerr);
		LINK_STATS_INC(link.drop);
		return false;
	}
	pbuf_take(p, frame, (u16_t)len);
	trace_mark(TP_INPUT);
	if (netif->input(p, netif) != ERR_OK) {
		pbuf_free(p);
		net_counters.rx_drop_input++;
		LINK_STATS_INC(link.drop);
		return false;
	}
	return true;
}

void net_netif_deliver(void *ctx, const void *frame, size_t len)
{
	struct netif *netif = ctx;
	trace_mark(TP_FRAME);
	if (len > ETH_FRAME_MAX_RX) {
		net_counters.rx_drop_too_long++;
		LINK_STATS_INC(link.drop);
		return;
	}
	net_counters.rx_frames++;
	net_counters.rx_bytes += len;
	LINK_STATS_INC(link.recv);
	if (input_frame(netif, frame, len) && net_tcp_make_room()) {
		/* The frame was a SYN the TCP hook dropped until a pcb was ended
		 * to make room for it: the listener gets the same SYN again. */
		input_frame(netif, frame, len);
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
	vnet_set_tx_done(net_netif_tx_done);
	return ERR_OK;
}
