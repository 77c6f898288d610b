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

#endif
