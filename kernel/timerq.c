/*
 * timerq.c: the timer heap (see timerq.h). Each timer records its own heap
 * position, so cancelling does not search.
 */
#include <stddef.h>
#include "timerq.h"

static void put(struct timerq *q, int i, struct timer *t)
{
	q->heap[i] = t;
	t->heap_index = i;
}

static void sift_up(struct timerq *q, int i)
{
	struct timer *t = q->heap[i];
	while (i > 0) {
		int parent = (i - 1) / 2;
		if (q->heap[parent]->deadline <= t->deadline)
			break;
		put(q, i, q->heap[parent]);
		i = parent;
	}
	put(q, i, t);
}

static void sift_down(struct timerq *q, int i)
{
	struct timer *t = q->heap[i];
	for (;;) {
		int child = 2 * i + 1;
		if (child >= q->n)
			break;
		if (child + 1 < q->n && q->heap[child + 1]->deadline < q->heap[child]->deadline)
			child++;
		if (t->deadline <= q->heap[child]->deadline)
			break;
		put(q, i, q->heap[child]);
		i = child;
	}
	put(q, i, t);
}

void timerq_init(struct timerq *q, struct timer **storage, int cap)
{
	q->heap = storage;
	q->n = 0;
	q->cap = cap;
}

int timerq_add(struct timerq *q, struct timer *t)
{
	if (q->n == q->cap)
		return -1;
	q->heap[q->n] = t;
	sift_up(q, q->n++);
	return 0;
}

void timerq_remove(struct timerq *q, struct timer *t)
{
	int i = t->heap_index;
	if (i < 0 || i >= q->n || q->heap[i] != t)
		return;
	t->heap_index = -1;
	struct timer *last = q->heap[--q->n];
	if (i == q->n)
		return;
	put(q, i, last);
	sift_up(q, i);
	sift_down(q, last->heap_index);
}

struct timer *timerq_peek(const struct timerq *q)
{
	return q->n ? q->heap[0] : NULL;
}

struct timer *timerq_pop(struct timerq *q)
{
	struct timer *t = timerq_peek(q);
	if (t)
		timerq_remove(q, t);
	return t;
}

int timerq_valid(const struct timerq *q)
{
	for (int i = 0; i < q->n; i++) {
		if (q->heap[i]->heap_index != i)
			return 0;
		if (i > 0 && q->heap[(i - 1) / 2]->deadline > q->heap[i]->deadline)
			return 0;
	}
	return 1;
}
