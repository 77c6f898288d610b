/*
 * memcheck: a test image for the kernel's use of all of RAM, above 4 GiB
 * included (test 08). It takes all the heap malloc can get (blocks of
 * 256 MiB, then smaller ones down to 1 MiB), writes a word that depends on
 * its address every STRIDE bytes of every block and at its last word, then
 * reads every word back: memory that is not there faults, memory mapped
 * twice gives a word back wrong. It prints how much it got and how much of it
 * lies above 4 GiB, then does the same with one page from page_alloc(). Exit
 * status 0 when every word came back, 1 when one did not.
 *
 *   memcheck [STRIDE_MIB [BLOCK_MIB]]
 *       STRIDE_MIB  default 258 (not a power of two, so the words fall on
 *                   different 2 MiB pages of each GiB)
 *       BLOCK_MIB   the first block size, default 256; then a quarter of it,
 *                   and so on (the heap's break moves to the next RAM range
 *                   when a request does not fit the rest of this one, so a
 *                   smaller first block leaves less of each range to malloc's
 *                   smaller requests)
 *
 * QEMU backs guest RAM with 2 MiB host pages, so each word costs the host
 * 2 MiB: a 6 GiB guest about 50 MiB at the default stride.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernel/kernel.h"

#define MiB (1ULL << 20)
#define GiB4 (4ULL << 30)
static uint64_t stride = 258 * MiB;
#define MAX_BLOCKS 8192

struct block {
	uint64_t *start; /* what malloc returned */
	uint64_t size;   /* bytes */
};
static struct block blocks[MAX_BLOCKS];
static int nblocks;

static uint64_t pattern(const volatile uint64_t *p)
{
	return (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL ^ 0x5a5a5a5a5a5a5a5aULL;
}

/* Writes (check false) or checks (check true) the words memcheck uses in
 * [p, p + size): one every stride, and the last. Returns how many it wrote, or
 * how many read back wrong. */
static uint64_t words(uint64_t *p, uint64_t size, bool check)
{
	volatile uint64_t *last = (volatile uint64_t *)((char *)p + size) - 1;
	uint64_t n = 0;
	for (uint64_t off = 0;; off += stride) {
		volatile uint64_t *w = off < size - 8 ? (volatile uint64_t *)((char *)p + off) : last;
		if (!check) {
			*w = pattern(w);
			n++;
		} else if (*w != pattern(w) && n++ < 3) {
			printf("memcheck: word at %p is %#llx, not %#llx\n", (void *)w,
			       (unsigned long long)*w, (unsigned long long)pattern(w));
		}
		if (w == last)
			return n;
	}
}

int main(int argc, char **argv)
{
	uint64_t first = 256 * MiB;
	if (argc > 1 && atoi(argv[1]) > 0)
		stride = (uint64_t)atoi(argv[1]) * MiB;
	if (argc > 2 && atoi(argv[2]) > 0)
		first = (uint64_t)atoi(argv[2]) * MiB;
	struct mem_stats m;
	mem_get_stats(&m);
	printf("memcheck: RAM %llu MiB, heap up to %llu MiB\n", (unsigned long long)(m.ram_bytes / MiB),
	       (unsigned long long)(m.heap_limit / MiB));

	uint64_t total = 0, above = 0, highest = 0, written = 0, bad = 0;
	for (uint64_t size = first; size >= MiB; size /= 4) {
		while (nblocks < MAX_BLOCKS) {
			uint64_t *p = malloc(size);
			if (!p)
				break;
			blocks[nblocks++] = (struct block){ p, size };
			uint64_t start = (uint64_t)(uintptr_t)p, end = start + size;
			total += size;
			if (end > GiB4)
				above += end - (start > GiB4 ? start : GiB4);
			if (end - 1 > highest)
				highest = end - 1;
			written += words(p, size, false);
		}
	}
	for (int i = 0; i < nblocks; i++)
		bad += words(blocks[i].start, blocks[i].size, true);
	printf("memcheck: malloc gave %llu MiB in %d blocks, %llu MiB of it above 4 GiB, highest byte %#llx\n",
	       (unsigned long long)(total / MiB), nblocks, (unsigned long long)(above / MiB),
	       (unsigned long long)highest);
	printf("memcheck: %llu words written, %llu read back wrong\n", (unsigned long long)written,
	       (unsigned long long)bad);

	uint64_t *page = page_alloc(1);
	if (!page) {
		printf("memcheck: page_alloc failed\n");
		return 1;
	}
	words(page, PAGE_SIZE, false);
	uint64_t page_bad = words(page, PAGE_SIZE, true);
	printf("memcheck: page_alloc page at %p, %s\n", (void *)page, page_bad ? "read back wrong" : "intact");
	return bad || page_bad ? 1 : 0;
}
