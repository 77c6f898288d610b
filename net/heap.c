/*
 * heap.c: lwIP's heap, on newlib's malloc with a budget of its own.
 *
 * lwIP is built with MEM_LIBC_MALLOC (net/lwipopts.h): its mem_malloc and
 * mem_free come here. The budget keeps what lwIP holds (copied TCP data in
 * PBUF_RAM pbufs, SYN-ACKs, ARP and ICMP replies) bounded, so a flood or a
 * peer that never reads exhausts only the network's share, counted (lwIP's
 * mem.err, and `heap refused` here), never the application's memory. It is
 * sized from RAM at boot (net_init: a quarter of it, at most NET_HEAP_MAX),
 * so small machines still boot and large ones let every pcb hold a full send
 * buffer at once. A fixed arena in BSS did the same at one size only, and its
 * first-fit allocator walked thousands of live blocks per allocation when
 * hundreds of slow readers held data (measured); malloc's bins do not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "net_internal.h"

/* Before each block: its size, padded to keep the block 16-byte aligned. */
struct heap_hdr {
	size_t size;   /* bytes asked for */
	size_t unused; /* alignment */
};

struct net_heap_counters net_heap_counters = { .budget = NET_HEAP_MAX };
#define H net_heap_counters

void net_heap_set_budget(size_t bytes)
{
	H.budget = bytes < NET_HEAP_MAX ? bytes : NET_HEAP_MAX;
}

void *net_heap_malloc(size_t size)
{
	if (size > H.budget || H.in_use > H.budget - size) {
		H.refused++;
		return NULL;
	}
	struct heap_hdr *h = malloc(sizeof *h + size);
	if (!h) {
		H.refused++;
		return NULL;
	}
	h->size = size;
	H.in_use += size;
	if (H.in_use > H.high_water)
		H.high_water = H.in_use;
	return h + 1;
}

void *net_heap_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		H.refused++;
		return NULL;
	}
	void *p = net_heap_malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void net_heap_free(void *p)
{
	if (!p)
		return;
	struct heap_hdr *h = (struct heap_hdr *)p - 1;
	H.in_use -= h->size;
	free(h);
}
