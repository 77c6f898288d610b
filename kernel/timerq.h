/*
 * timerq.h: a binary min-heap of timers ordered by deadline, with O(log n)
 * insert, cancel and pop. Pure: the caller supplies the storage, so the same
 * code runs in the kernel and in host unit tests.
 */
#ifndef TIMERQ_H
#define TIMERQ_H

#include "kernel/kernel.h"

struct timerq {
	struct timer **heap; /* heap[0] has the earliest deadline */
	int n;               /* timers queued */
	int cap;             /* capacity of heap[] */
};

void timerq_init(struct timerq *q, struct timer **storage, int cap);
int timerq_add(struct timerq *q, struct timer *t);     /* 0, or -1 when full */
void timerq_remove(struct timerq *q, struct timer *t); /* no-op if not queued */
struct timer *timerq_peek(const struct timerq *q);     /* NULL when empty */
struct timer *timerq_pop(struct timerq *q);
/* Debug check of the heap property and every timer's heap_index. */
int timerq_valid(const struct timerq *q);

#endif
