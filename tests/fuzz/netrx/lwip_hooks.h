/*
 * lwip_hooks.h (fuzz build): the guest's hooks (net/lwip_hooks.h) and the
 * harness's stand-ins that lwipopts.h plugs in front of them while a known
 * bug is steered around (tests/fuzz/netrx/known_bugs.c).
 */
#ifndef FUZZ_NETRX_LWIP_HOOKS_H
#define FUZZ_NETRX_LWIP_HOOKS_H

#include "net/lwip_hooks.h"

/* Known bug 2: drops a segment lwIP's tcp_receive would assert on, then
 * hands the rest to net_tcp_inpacket. */
err_t netrx_tcp_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, u16_t optlen,
			 u16_t opt1len, u8_t *opt2, struct pbuf *p);

#endif
