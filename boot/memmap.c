/*
 * memmap.c: free physical ranges from a firmware memory map (see memmap.h).
 * The map is input from outside: entries may overlap, wrap around the address
 * space or be zero-length, and none of that may produce a wrong free range.
 */
#include <stddef.h>
#include "memmap.h"

#define PAGE 4096ULL

static uint64_t up(uint64_t a) { return a > UINT64_MAX - (PAGE - 1) ? UINT64_MAX & ~(PAGE - 1) : (a + PAGE - 1) & ~(PAGE - 1); }
static uint64_t down(uint64_t a) { return a & ~(PAGE - 1); }
static uint64_t end_of(uint64_t base, uint64_t len) { return len > UINT64_MAX - base ? UINT64_MAX : base + len; }

struct work {
	struct phys_range *r; /* ranges so far */
	int n;                /* how many */
	int max;              /* capacity */
	int dropped;          /* ranges that found no room */
};

static void add(struct work *w, uint64_t start, uint64_t end)
{
	if (start >= end)
		return;
	if (w->n == w->max) {
		w->dropped++;
		return;
	}
	w->r[w->n++] = (struct phys_range){ start, end };
}

/* Remove [hs, he) from every range, splitting where it falls inside one. */
static void subtract(struct work *w, uint64_t hs, uint64_t he)
{
	if (hs >= he)
		return;
	int n = w->n;
	for (int i = 0; i < n; i++) {
		struct phys_range r = w->r[i];
		if (he <= r.start || hs >= r.end)
			continue;
		/* Keep the left part in place, append the right part. */
		w->r[i].end = hs > r.start ? hs : r.start;
		if (he < r.end)
			add(w, he, r.end);
	}
	/* Drop ranges that became empty, keeping order irrelevant. */
	int k = 0;
	for (int i = 0; i < w->n; i++)
		if (w->r[i].start < w->r[i].end)
			w->r[k++] = w->r[i];
	w->n = k;
}

int memmap_free_ranges(const struct mem_range *map, int nmap, const struct phys_range *reserved,
		       int nreserved, struct phys_range *out, int max, int *dropped)
{
	struct work w = { out, 0, max, 0 };
	for (int i = 0; i < nmap; i++)
		if (map[i].type == MEM_USABLE)
			add(&w, up(map[i].base), down(end_of(map[i].base, map[i].len)));
	for (int i = 0; i < nmap; i++)
		if (map[i].type != MEM_USABLE)
			subtract(&w, down(map[i].base), up(end_of(map[i].base, map[i].len)));
	for (int i = 0; i < nreserved; i++)
		subtract(&w, down(reserved[i].start), up(reserved[i].end));

	/* Insertion sort by start (the lists are short), then merge. */
	for (int i = 1; i < w.n; i++) {
		struct phys_range r = w.r[i];
		int j = i;
		for (; j > 0 && w.r[j - 1].start > r.start; j--)
			w.r[j] = w.r[j - 1];
		w.r[j] = r;
	}
	int k = 0;
	for (int i = 0; i < w.n; i++) {
		if (k && w.r[i].start <= w.r[k - 1].end) {
			if (w.r[i].end > w.r[k - 1].end)
				w.r[k - 1].end = w.r[i].end;
		} else {
			w.r[k++] = w.r[i];
		}
	}
	if (dropped)
		*dropped = w.dropped;
	return k;
}

uint64_t memmap_total(const struct phys_range *r, int n)
{
	uint64_t t = 0;
	for (int i = 0; i < n; i++)
		t += r[i].end - r[i].start;
	return t;
}
