/*
 * spsc.h: a bounded ring of pointers from exactly one producer to exactly
 * one consumer, each on its own CPU, with no lock: how one CPU hands work
 * to another on a hot path (issue 39's network core: the application's CPU
 * gives the network's its sends and closes, the network's gives back what
 * arrived). Pure and header-only, so the host's unit test runs the same
 * code on two threads (tests/unit/test_spsc.c).
 *
 * The producer owns head, the consumer tail; each only reads the other's,
 * with acquire, and publishes its own with release, so a slot written
 * before head moves is seen whole by a consumer that sees head move, and a
 * slot is reused only after the consumer's tail says it was taken. Each
 * side keeps the last value it read of the other's index and reads the
 * shared one again only when that copy says full (producer) or empty
 * (consumer): a ring in steady use costs each side one shared-line read per
 * lap rather than one per item. The indices run freely over 32 bits and
 * are masked into the storage, whose size is a power of two, so head -
 * tail is the count even across the wrap.
 *
 * Nothing here waits or wakes: a consumer that finds the ring empty parks
 * by its CPU's own means, and a producer that must wake it sends an IPI
 * (kernel/smp) after its push.
 */
#ifndef SPSC_H
#define SPSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPSC_LINE 64 /* a cache line: the two sides' fields on their own */

struct spsc_ring {
	/* The producer's line. */
	uint32_t head;      /* next slot to fill; written by the producer only */
	uint32_t tail_seen; /* the producer's last read of tail */
	uint8_t pad_producer[SPSC_LINE - 2 * sizeof(uint32_t)];
	/* The consumer's line. */
	uint32_t tail;      /* next slot to take; written by the consumer only */
	uint32_t head_seen; /* the consumer's last read of head */
	uint8_t pad_consumer[SPSC_LINE - 2 * sizeof(uint32_t)];
	/* Set once, read by both. */
	uint32_t mask;      /* slots - 1 */
	void **slots;       /* the storage: mask + 1 pointers */
} __attribute__((aligned(SPSC_LINE)));

/* A ring over storage of nslots pointers, empty; -1 when nslots is not a
 * power of two from 2 to 2^31 (the count head - tail must fit). Before
 * either side uses it. */
static inline int spsc_init(struct spsc_ring *r, void **storage, uint32_t nslots)
{
	if (nslots < 2 || nslots > (1u << 31) || (nslots & (nslots - 1)))
		return -1;
	r->head = r->tail_seen = r->tail = r->head_seen = 0;
	r->mask = nslots - 1;
	r->slots = storage;
	return 0;
}

/* ---- the producer's side ---------------------------------------------- */

/* Slots the producer may fill now, re-reading tail only when its copy says
 * fewer than want. */
static inline uint32_t spsc_room(struct spsc_ring *r, uint32_t want)
{
	uint32_t size = r->mask + 1;
	uint32_t room = size - (r->head - r->tail_seen);
	if (room < want) {
		r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		room = size - (r->head - r->tail_seen);
	}
	return room;
}

/* p at the ring's end; false (nothing done) when full. */
static inline bool spsc_push(struct spsc_ring *r, void *p)
{
	if (spsc_room(r, 1) == 0)
		return false;
	r->slots[r->head & r->mask] = p;
	__atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
	return true;
}

/* Up to n of items at the ring's end, published at once; how many went. */
static inline uint32_t spsc_push_many(struct spsc_ring *r, void *const *items, uint32_t n)
{
	uint32_t room = spsc_room(r, n);
	if (n > room)
		n = room;
	for (uint32_t i = 0; i < n; i++)
		r->slots[(r->head + i) & r->mask] = items[i];
	__atomic_store_n(&r->head, r->head + n, __ATOMIC_RELEASE);
	return n;
}

/* ---- the consumer's side ---------------------------------------------- */

/* Items the consumer may take now, re-reading head only when its copy says
 * fewer than want. */
static inline uint32_t spsc_ready(struct spsc_ring *r, uint32_t want)
{
	uint32_t ready = r->head_seen - r->tail;
	if (ready < want) {
		r->head_seen = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		ready = r->head_seen - r->tail;
	}
	return ready;
}

/* The oldest item, taken; NULL when empty (so NULL is never pushed). */
static inline void *spsc_pop(struct spsc_ring *r)
{
	if (spsc_ready(r, 1) == 0)
		return NULL;
	void *p = r->slots[r->tail & r->mask];
	__atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_RELEASE);
	return p;
}

/* Up to n of the oldest items into out, taken at once; how many. */
static inline uint32_t spsc_pop_many(struct spsc_ring *r, void **out, uint32_t n)
{
	uint32_t ready = spsc_ready(r, n);
	if (n > ready)
		n = ready;
	for (uint32_t i = 0; i < n; i++)
		out[i] = r->slots[(r->tail + i) & r->mask];
	__atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
	return n;
}

/* The consumer's look without taking: true when an item waits (reads head
 * when its copy says empty). */
static inline bool spsc_nonempty(struct spsc_ring *r)
{
	return spsc_ready(r, 1) != 0;
}

#endif
