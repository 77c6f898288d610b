/*
 * paging.h: the page tables the loader hands to the image, with W^X (see
 * paging.c).
 */
#ifndef PAGING_H
#define PAGING_H

#include <stdint.h>
#include "boot/memmap.h"
#include "image.h"

/*
 * 4 KiB page tables the hand-over map may use, each splitting one 2 MiB page
 * whose permissions are not all "writable, not executable": one for the
 * loader's own text (at 1 MiB), the rest for the image's executable and
 * read-only segments. The image's text and read-only data may so touch at most
 * 7 2 MiB regions (at least 12 MiB of them); its writable segments, bss
 * included, are not limited. 32 KiB of the loader's bss.
 */
#define PAGING_IMAGE_PT 7                     /* for the image */
#define PAGING_MAX_PT   (PAGING_IMAGE_PT + 1) /* and the loader's text */

/* 4-level paging maps one-to-one only below 2^47 (the lower canonical half). */
#define PAGING_ADDR_LIMIT (1ULL << 47)

/* Pages of each kind in a range, in 4 KiB units. */
struct page_counts {
	uint64_t rx, r, rw;
};

/* What paging_build made. */
struct paging_map {
	struct page_counts image;  /* pages of each kind over the image's load range */
	struct page_counts loader; /* and over the loader's own memory */
	uint64_t ram_limit;        /* usable RAM below this address is mapped, none above */
	uint64_t tables_used;      /* pages taken from the table pool */
};

/*
 * Pages of page tables paging_build may take for the usable RAM ranges `ram`
 * (sorted, as memmap_free_ranges gives them) above 4 GiB and below `limit`:
 * a bound, one page directory per GiB they touch and one directory table per
 * 512 GiB.
 */
uint64_t paging_pool_pages(const struct phys_range *ram, int nram, uint64_t limit);

/*
 * Build the hand-over map for the loaded image `plan` and the usable RAM
 * `ram` below `limit` (the CPU's physical address width; the first 4 GiB are
 * mapped whatever it is), taking tables for RAM above 4 GiB from `pool`
 * (pool_pages free 4 KiB pages below 4 GiB, each zeroed when taken), and
 * check it: NULL, or a one-line reason (tables used up, or an invariant
 * broken). When the pool runs short, RAM from where it ran out is left
 * unmapped and out->ram_limit says where.
 */
const char *paging_build(const struct image_plan *plan, const struct phys_range *ram, int nram,
			 uint64_t limit, uint64_t *pool, uint64_t pool_pages, struct paging_map *out);

/* Switch to it: EFER.NXE, CR3, then CR0.WP. Only after paging_build succeeded. */
void paging_enter(void);

#endif
