/*
 * test_timerq.c: the timer heap: ordering, cancel from any position, re-arm,
 * equal deadlines, a full queue, and a random sequence checked against a
 * straightforward model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "kernel/timerq.h"

#define N 64

static struct timer *storage[N];
static struct timer timers[N];
static struct timerq q;

static int setup(void **state)
{
	(void)state;
	timerq_init(&q, storage, N);
	for (int i = 0; i < N; i++)
		timers[i] = (struct timer){ .deadline = 0, .fn = NULL, .heap_index = -1 };
	return 0;
}

static void pops_in_deadline_order(void **state)
{
	(void)state;
	const uint64_t d[] = { 50, 10, 40, 30, 20, 60, 5 };
	for (int i = 0; i < 7; i++) {
		timers[i].deadline = d[i];
		assert_int_equal(timerq_add(&q, &timers[i]), 0);
		assert_true(timerq_valid(&q));
	}
	uint64_t last = 0;
	for (int i = 0; i < 7; i++) {
		struct timer *t = timerq_pop(&q);
		assert_non_null(t);
		assert_true(t->deadline >= last);
		assert_int_equal(t->heap_index, -1);
		last = t->deadline;
	}
	assert_null(timerq_pop(&q));
	assert_null(timerq_peek(&q));
}

static void cancel_anywhere(void **state)
{
	(void)state;
	for (int i = 0; i < 10; i++) {
		timers[i].deadline = (uint64_t)(10 - i) * 7 % 11;
		timerq_add(&q, &timers[i]);
	}
	timerq_remove(&q, &timers[3]);
	timerq_remove(&q, &timers[3]); /* twice: no-op */
	timerq_remove(&q, &timers[20]); /* never queued: no-op */
	assert_true(timerq_valid(&q));
	assert_int_equal(q.n, 9);
	for (struct timer *t; (t = timerq_pop(&q));)
		assert_ptr_not_equal(t, &timers[3]);
}

static void full_queue_refuses(void **state)
{
	(void)state;
	for (int i = 0; i < N; i++)
		assert_int_equal(timerq_add(&q, &timers[i]), 0);
	struct timer extra = { .heap_index = -1 };
	assert_int_equal(timerq_add(&q, &extra), -1);
	assert_int_equal(extra.heap_index, -1);
}

static void random_against_model(void **state)
{
	(void)state;
	srand(3);
	int queued[N] = { 0 };
	for (int step = 0; step < 100000; step++) {
		int i = rand() % N;
		switch (rand() % 3) {
		case 0: /* (re)arm */
			timerq_remove(&q, &timers[i]);
			timers[i].deadline = (uint64_t)(rand() % 1000);
			assert_int_equal(timerq_add(&q, &timers[i]), 0);
			queued[i] = 1;
			break;
		case 1:
			timerq_remove(&q, &timers[i]);
			queued[i] = 0;
			break;
		case 2: {
			struct timer *t = timerq_pop(&q);
			uint64_t min = UINT64_MAX;
			for (int k = 0; k < N; k++)
				if (queued[k] && timers[k].deadline < min)
					min = timers[k].deadline;
			if (!t) {
				assert_int_equal(min, UINT64_MAX);
			} else {
				assert_int_equal(t->deadline, min);
				queued[t - timers] = 0;
			}
		}
		}
		int count = 0;
		for (int k = 0; k < N; k++)
			count += queued[k];
		assert_int_equal(q.n, count);
		assert_true(timerq_valid(&q));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(pops_in_deadline_order, setup),
		cmocka_unit_test_setup(cancel_anywhere, setup),
		cmocka_unit_test_setup(full_queue_refuses, setup),
		cmocka_unit_test_setup(random_against_model, setup),
	};
	return cmocka_run_group_tests_name("timerq", tests, NULL, NULL);
}
