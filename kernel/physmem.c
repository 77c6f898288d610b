/*
 * physmem.c: free RAM shared by newlib's heap and page_alloc (see physmem.h).
 *
 * The free ranges serve two clients from opposite ends of the list, in
 * address order. The heap's break grows up from the start of the lowest range
 * and, when a request does not fit in the rest of its range, moves to the
 * start of the next range with room (newlib's malloc takes a break that jumps
 * upward, as memory some "foreign sbrk" left between). Pages are taken down
 * from the end of the highest range and move down likewise. Exhaustion is
 * where they meet. What either end passes over when it moves (the rest of a
 * range, ranges too small for the request) can no longer be reached by the
 * break, so it becomes a spare piece that pages are taken from first: no RAM
 * is lost to a jump.
 *
 * Invariants: heap_range <= pages_range; in one range, brk <= pages_floor;
 * every byte handed out lies in exactly one of [range start, brk) of a range
 * up to heap_range, [pages_floor, range end) of a range from pages_range, or
 * a spare piece's taken end.
 */
#include <stddef.h>
#include "physmem.h"

#define PAGE 4096ULL

static void spare_add(struct physmem *m, uint64_t start, uint64_t end);

/* The heap starts in the first range that holds at least a quarter of the
 * free RAM, so that it seldom jumps: newlib's malloc takes a break that
 * jumps, but counts the gap as memory in use (physmem.jumped corrects that)
 * and fences off the old top with a few bytes that stay in use, so its
 * in-use count would move with the heap's size, not with what was handed
 * out (the piece below the image, 2.9 MB here, made httpd's heap jump at
 * its first growth). The ranges below are spare pieces for pages. */
void physmem_init(struct physmem *m, const struct phys_range *free, int n)
{
	*m = (struct physmem){ 0 };
	uint64_t total = 0;
	for (int i = 0; i < n && i < PHYSMEM_MAX_RANGES; i++) {
		m->range[m->nrange++] = free[i];
		total += free[i].end - free[i].start;
	}
	int first = 0;
	while (first < m->nrange - 1 && m->range[first].end - m->range[first].start < total / 4)
		first++;
	m->pages_range = m->nrange - 1;
	m->pages_floor = m->range[m->nrange - 1].end;
	for (int k = 0; k < first; k++)
		spare_add(m, m->range[k].start, m->range[k].end);
	m->heap_range = first;
	m->brk = m->range[first].start;
}

/* The highest address of range k the break may reach, and the lowest pages
 * may take: each stops where the other has been. */
static uint64_t heap_ceiling(const struct physmem *m, int k)
{
	return k == m->pages_range ? m->pages_floor : m->range[k].end;
}

static uint64_t pages_bottom(const struct physmem *m, int k)
{
	return k == m->heap_range ? m->brk : m->range[k].start;
}

/* [start, end) passed over by one end and out of the other's reach. Pages
 * are whole, so the part of a page before the first boundary is lost (a
 * break need not be page aligned), and so is a piece spare[] has no room for. */
static void spare_add(struct physmem *m, uint64_t start, uint64_t end)
{
	uint64_t aligned = (start + PAGE - 1) & ~(PAGE - 1);
	if (aligned >= end) {
		m->spare_lost += end - start;
		return;
	}
	m->spare_lost += aligned - start;
	if (m->nspare == (int)(sizeof m->spare / sizeof m->spare[0]))
		m->spare_lost += end - aligned;
	else
		m->spare[m->nspare++] = (struct phys_range){ aligned, end };
}

uint64_t physmem_pages(struct physmem *m, uint64_t bytes)
{
	if (bytes == 0)
		return 0;
	for (int i = 0; i < m->nspare; i++) {
		if (m->spare[i].end - m->spare[i].start >= bytes) {
			m->spare[i].end -= bytes;
			return m->spare[i].end;
		}
	}
	for (int k = m->pages_range; k >= m->heap_range; k--) {
		uint64_t top = k == m->pages_range ? m->pages_floor : m->range[k].end;
		if (top - pages_bottom(m, k) < bytes)
			continue;
		for (int j = m->pages_range; j > k; j--)
			spare_add(m, pages_bottom(m, j), j == m->pages_range ? m->pages_floor : m->range[j].end);
		m->pages_range = k;
		m->pages_floor = top - bytes;
		return m->pages_floor;
	}
	return 0;
}

uint64_t physmem_break(struct physmem *m, int64_t incr)
{
	uint64_t old = m->brk, start = m->range[m->heap_range].start;
	if (incr < 0) {
		if ((uint64_t)-incr > m->brk - start) /* a break goes back only in its range */
			return 0;
		m->brk -= (uint64_t)-incr;
		return old;
	}
	if ((uint64_t)incr > heap_ceiling(m, m->heap_range) - m->brk) {
		int k = m->heap_range + 1;
		while (k <= m->pages_range && heap_ceiling(m, k) - m->range[k].start < (uint64_t)incr)
			k++;
		if (k > m->pages_range)
			return 0;
		for (int j = m->heap_range; j < k; j++)
			spare_add(m, j == m->heap_range ? m->brk : m->range[j].start, heap_ceiling(m, j));
		m->heap_below += m->brk - start;
		m->jumped += m->range[k].start - m->brk;
		m->heap_range = k;
		old = m->brk = m->range[k].start;
	}
	m->brk += (uint64_t)incr;
	if (physmem_heap_bytes(m) > m->heap_max)
		m->heap_max = physmem_heap_bytes(m);
	return old;
}

uint64_t physmem_heap_bytes(const struct physmem *m)
{
	return m->heap_below + m->brk - m->range[m->heap_range].start;
}

uint64_t physmem_heap_room(const struct physmem *m)
{
	uint64_t room = heap_ceiling(m, m->heap_range) - m->brk;
	for (int k = m->heap_range + 1; k <= m->pages_range; k++)
		room += heap_ceiling(m, k) - m->range[k].start;
	return room;
}

uint64_t physmem_spare_bytes(const struct physmem *m)
{
	uint64_t n = 0;
	for (int i = 0; i < m->nspare; i++)
		n += m->spare[i].end - m->spare[i].start;
	return n;
}
