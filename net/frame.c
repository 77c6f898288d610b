/*
 * frame.c: reading the headers of an IPv4 TCP or UDP frame: where they lie,
 * and the pseudo-header's sum. Used on frames lwIP made (netif.c's checksum
 * requests, netif_gso.c's runs, netif_ack.c's pure ACKs), so a frame that
 * does not parse is one lwIP would not make; every length is checked before
 * it is used all the same.
 */
#include "lwip/prot/ethernet.h"
#include "lwip/prot/ip.h"
#include "netif_gso.h"

static unsigned be16(const u8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

bool net_frame_l4(const struct pbuf *p, struct net_frame_l4 *l)
{
	const u8_t *f = p->payload;
	if (p->len < 14 + 20 || be16(f + 12) != ETHTYPE_IP)
		return false;
	const u8_t *ip = f + 14;
	unsigned ihl = (ip[0] & 15) * 4u, total = be16(ip + 2);
	if (ip[0] >> 4 != 4 || ihl < 20 || total < ihl || 14 + total != p->tot_len)
		return false;
	if ((ip[9] != IP_PROTO_TCP && ip[9] != IP_PROTO_UDP) || (be16(ip + 6) & 0x3fff))
		return false; /* not TCP or UDP, or a fragment */
	l->proto = ip[9];
	l->start = (u16_t)(14 + ihl);
	l->len = (u16_t)(total - ihl);
	unsigned hdr = ip[9] == IP_PROTO_TCP ? 20 : 8;
	if (l->len < hdr || p->len < l->start + hdr)
		return false;
	if (ip[9] == IP_PROTO_TCP) {
		hdr = (f[l->start + 12] >> 4) * 4u;
		if (hdr < 20 || l->len < hdr || p->len < l->start + hdr)
			return false;
	}
	l->hdr_len = (u16_t)(l->start + hdr);
	return true;
}

u16_t net_pseudo_sum(const u8_t *frame, u8_t proto, u16_t l4_len)
{
	u32_t sum = proto + (u32_t)l4_len;
	for (int i = 14 + 12; i < 14 + 20; i += 2)
		sum += be16(frame + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16_t)sum;
}

