/*
 * physmem.h: free RAM shared by newlib's heap and page_alloc (see physmem.c).
 * Pure: runs the same in the kernel and in the host unit tests.
 */
#ifndef PHYSMEM_H
#define PHYSMEM_H

#include <stdint.h>
#include "boot/memmap.h"

/* More than memmap can make of the loader's map: each usable entry, and one
 * more per hole punched into them (non-usable entries, the ranges in use). */
#define PHYSMEM_MAX_RANGES (BOOTINFO_MAX_MEM + 8)

struct physmem {
	struct phys_range range[PHYSMEM_MAX_RANGES]; /* free RAM, ascending */
	int nrange;            /* ranges in range[] */
	int heap_range;        /* range[] index the break is in */
	uint64_t brk;          /* the heap's break, in range[heap_range] */
	uint64_t heap_below;   /* heap bytes in the ranges below heap_range */
	uint64_t heap_max;     /* the most heap bytes so far */
	uint64_t jumped;       /* bytes the break jumped over (newlib's malloc counts them as in use) */
	int pages_range;       /* range[] index pages are taken from */
	uint64_t pages_floor;  /* the lowest page taken there */
	struct phys_range spare[2 * PHYSMEM_MAX_RANGES]; /* what either end passed over */
	int nspare;            /* pieces in spare[] */
	uint64_t spare_lost;   /* passed over but not spare: parts of a page, no room in spare[] */
};

/* Start with the free ranges `free` (sorted, page aligned, 1 to
 * PHYSMEM_MAX_RANGES of them): the break at the start of the first range
 * with a quarter of the free RAM (those below it spare pieces for pages),
 * pages from the end of the last. */
void physmem_init(struct physmem *m, const struct phys_range *free, int n);
/* `bytes` (a multiple of the page size, not 0) of contiguous pages: their
 * address, or 0 when no piece has room. */
uint64_t physmem_pages(struct physmem *m, uint64_t bytes);
/* Move the break by incr (sbrk): the old break, or 0 when refused (no room
 * up to the pages; below the start of its range). A break that does not fit
 * in its range moves to the start of the next range with room. */
uint64_t physmem_break(struct physmem *m, int64_t incr);
uint64_t physmem_heap_bytes(const struct physmem *m); /* heap below the break, every range */
uint64_t physmem_heap_room(const struct physmem *m);  /* what the break could still take */
uint64_t physmem_spare_bytes(const struct physmem *m); /* free in spare pieces */

#endif
