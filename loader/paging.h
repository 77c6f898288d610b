/*
 * paging.h: the page tables the loader hands to the image, with W^X (see
 * paging.c).
 */
#ifndef PAGING_H
#define PAGING_H

#include <stdint.h>
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

/* Pages of each kind in a range, in 4 KiB units. */
struct page_counts {
	uint64_t rx, r, rw;
};

/* Whether the CPU can mark pages no-execute (CPUID 0x80000001 EDX.NX). */
int paging_cpu_has_nx(void);

/*
 * Build the hand-over map for the loaded image `plan` and check it: NULL, or
 * a one-line reason (tables used up, or an invariant broken). Fills `image`
 * and `loader` with the pages of each kind over the image's load range and the
 * loader's own memory.
 */
const char *paging_build(const struct image_plan *plan, struct page_counts *image,
			 struct page_counts *loader);

/* Switch to it: EFER.NXE, CR3, then CR0.WP. Only after paging_build succeeded. */
void paging_enter(void);

#endif
