/*
 * memmap.h: turn the firmware's memory map into the list of free physical
 * ranges: the loader maps RAM and takes its page tables' pages by it, the
 * kernel hands out what it finds free. Pure: runs the same in the loader, the
 * kernel and the host unit tests (each builds memmap.c itself, boot/boot.mk).
 */
#ifndef MEMMAP_H
#define MEMMAP_H

#include <stdint.h>
#include "bootinfo.h"

struct phys_range {
	uint64_t start; /* first byte, page aligned */
	uint64_t end;   /* one past the last, page aligned */
};

/*
 * Free ranges = usable map entries, shrunk to whole pages, minus every
 * non-usable entry (a map may list a region twice) and every `reserved` range
 * (grown to whole pages). The result is sorted, non-overlapping and merged.
 * Returns the number of ranges written (at most max); ranges that did not fit
 * are dropped, smallest last-found first, and counted in *dropped if non-NULL.
 */
int memmap_free_ranges(const struct mem_range *map, int nmap, const struct phys_range *reserved,
		       int nreserved, struct phys_range *out, int max, int *dropped);

/* Total bytes in ranges. */
uint64_t memmap_total(const struct phys_range *r, int n);

#endif
