/*
 * image.h: validate the application image (an ELF64 executable handed over as
 * multiboot module 0) and plan where its segments and the module itself go.
 *
 * Pure functions over memory the caller gives: no I/O, no globals, so they run
 * the same in the loader and in host unit tests and fuzzers.
 */
#ifndef IMAGE_H
#define IMAGE_H

#include <stdint.h>
#include "boot/bootinfo.h"

#define IMAGE_MAX_SEGMENTS 16
#define IMAGE_ADDR_LIMIT   0x100000000ULL /* the loader maps the first 4 GiB */

struct image_segment {
	uint64_t offset; /* where its bytes start in the file */
	uint64_t filesz; /* bytes copied from the file */
	uint64_t paddr;  /* physical (= virtual) load address */
	uint64_t memsz;  /* bytes occupied; memsz - filesz are zeroed */
	uint32_t flags;  /* PF_R | PF_W | PF_X */
};

struct image_plan {
	uint64_t entry; /* where to jump */
	uint64_t start; /* lowest byte any segment occupies */
	uint64_t end;   /* one past the highest */
	int nseg;
	struct image_segment seg[IMAGE_MAX_SEGMENTS];
};

/* An address range [start, end) that segments must not overlap. */
struct addr_range {
	uint64_t start, end;
};

/*
 * Check that `file` (size bytes) is a loadable x86_64 executable whose segments
 * lie inside usable RAM (`mem`, nmem entries), below IMAGE_ADDR_LIMIT and clear
 * of every range in `avoid`, none both writable and executable, and segments of
 * different permissions on different 4 KiB pages (the loader maps the image
 * W^X, page by page). Returns NULL and fills `plan`, or a one-line reason.
 */
const char *image_plan(const void *file, uint64_t size, const struct mem_range *mem, int nmem,
		       const struct addr_range *avoid, int navoid, struct image_plan *plan);

/*
 * Where the module should sit while its segments are copied out: its current
 * address when it does not overlap [plan->start, plan->end), else the first page
 * after plan->end, if usable RAM below IMAGE_ADDR_LIMIT holds it there. Returns
 * 0 when there is no such place.
 */
uint64_t image_module_home(uint64_t mod_start, uint64_t mod_size, const struct image_plan *plan,
			   const struct mem_range *mem, int nmem);

#endif
