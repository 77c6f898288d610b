/*
 * lwip_hooks.h: the hook functions lwipopts.h plugs into lwIP (included by
 * lwIP's sources through LWIP_HOOK_FILENAME). Implemented in tcp_hooks.c.
 */
#ifndef NET_LWIP_HOOKS_H
#define NET_LWIP_HOOKS_H

#include "lwip/arch.h"
#include "lwip/err.h"

struct ip4_addr;
struct tcp_pcb;
struct tcp_hdr;
struct pbuf;

/* Initial sequence number for a new connection (RFC 6528: a 4 us clock plus a
 * keyed hash of the connection's addresses and ports). Ports in host order. */
u32_t net_tcp_isn(const struct ip4_addr *local_ip, u16_t local_port,
		  const struct ip4_addr *remote_ip, u16_t remote_port);

/* Sees each TCP segment before the pcb it matched does (header fields already
 * in host order). Drops a segment lwIP would assert on. Drops a new
 * connection's SYN that matched a TIME_WAIT pcb, or that found the pcb pool
 * full of half-open connections, and marks the pcb to end for it; see
 * net_tcp_make_room(). */
err_t net_tcp_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, u16_t optlen,
		       u16_t opt1len, u8_t *opt2, struct pbuf *p);

#endif
