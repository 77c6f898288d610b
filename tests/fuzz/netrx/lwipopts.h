/*
 * lwipopts.h (fuzz build): the guest's lwIP configuration (net/lwipopts.h)
 * with lwIP's pools and heap taken from malloc. Found before net/ on the
 * include path of the netrx harness's lwIP and of every file that sees lwIP's
 * headers there, so all of them agree on it.
 *
 * Why: in the guest, pcbs, segments and pbufs live in static pools and a
 * static heap, where AddressSanitizer sees neither a use after free (the
 * memory stays "allocated" in the pool) nor an overrun into the next element.
 * One malloc per object lets it see both, and LeakSanitizer sees an object
 * nobody frees. The price: the pools' limits (MEMP_NUM_*) are not enforced,
 * which no small fuzz input comes near anyway.
 */
#ifndef FUZZ_NETRX_LWIPOPTS_H
#define FUZZ_NETRX_LWIPOPTS_H

#include "net/lwipopts.h"

#undef MEM_LIBC_MALLOC
#define MEM_LIBC_MALLOC 1
#define MEMP_MEM_MALLOC 1

#ifdef NETRX_BUG_SEQ_HALF
/* Known bug 2 (tests/fuzz/netrx/known_bugs.c): segments that would trip an
 * assertion in lwIP's tcp_receive stop in a hook of the harness's, which
 * hands everything else to the guest's own. */
#undef LWIP_HOOK_FILENAME
#define LWIP_HOOK_FILENAME "tests/fuzz/netrx/lwip_hooks.h"
#undef LWIP_HOOK_TCP_INPACKET_PCB
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
	netrx_tcp_inpacket((pcb), (hdr), (optlen), (opt1len), (opt2), (p))
#endif

#endif
