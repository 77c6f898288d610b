/*
 * test_spsc.c: the single-producer single-consumer ring (kernel/spsc.h):
 * sizes refused, full and empty, order, the 32-bit index wrap, batches, and
 * two threads on two CPUs passing a million items, each seen once and in
 * order.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../kernel/spsc.h"

#define ITEM(n) ((void *)(uintptr_t)(n))

static void sizes_refused(void **state)
{
	(void)state;
	struct spsc_ring r;
	void *s[8];
	assert_int_equal(spsc_init(&r, s, 0), -1);
	assert_int_equal(spsc_init(&r, s, 1), -1);
	assert_int_equal(spsc_init(&r, s, 6), -1);
	assert_int_equal(spsc_init(&r, s, 0x80000001u), -1);
	assert_int_equal(spsc_init(&r, s, 8), 0);
	assert_int_equal(spsc_init(&r, s, 2), 0);
}

static void full_empty_order(void **state)
{
	(void)state;
	struct spsc_ring r;
	void *s[4];
	assert_int_equal(spsc_init(&r, s, 4), 0);
	assert_null(spsc_pop(&r));
	assert_false(spsc_nonempty(&r));
	for (uintptr_t i = 1; i <= 4; i++)
		assert_true(spsc_push(&r, ITEM(i)));
	assert_false(spsc_push(&r, ITEM(5))); /* full: nothing written */
	assert_true(spsc_nonempty(&r));
	assert_ptr_equal(spsc_pop(&r), ITEM(1));
	assert_true(spsc_push(&r, ITEM(5)));   /* the freed slot, reused */
	for (uintptr_t i = 2; i <= 5; i++)
		assert_ptr_equal(spsc_pop(&r), ITEM(i));
	assert_null(spsc_pop(&r));
}

/* head and tail start just short of 2^32: counts and slots stay right as
 * both indices wrap. */
static void index_wrap(void **state)
{
	(void)state;
	struct spsc_ring r;
	void *s[8];
	assert_int_equal(spsc_init(&r, s, 8), 0);
	r.head = r.tail = r.tail_seen = r.head_seen = UINT32_MAX - 3;
	uintptr_t next_in = 1, next_out = 1;
	for (int round = 0; round < 20; round++) {
		while (spsc_push(&r, ITEM(next_in)))
			next_in++;
		assert_int_equal(next_in - next_out, 8);
		for (int k = 0; k < 5; k++)
			assert_ptr_equal(spsc_pop(&r), ITEM(next_out++));
	}
	void *p;
	while ((p = spsc_pop(&r)))
		assert_ptr_equal(p, ITEM(next_out++));
	assert_int_equal(next_out, next_in);
	assert_true(r.head < 1000); /* it did wrap */
}

static void batches(void **state)
{
	(void)state;
	struct spsc_ring r;
	void *s[8], *in[10], *out[10];
	assert_int_equal(spsc_init(&r, s, 8), 0);
	for (uintptr_t i = 0; i < 10; i++)
		in[i] = ITEM(i + 1);
	assert_int_equal(spsc_push_many(&r, in, 10), 8); /* as many as fit */
	assert_int_equal(spsc_push_many(&r, in, 1), 0);
	assert_int_equal(spsc_pop_many(&r, out, 3), 3);
	assert_ptr_equal(out[0], ITEM(1));
	assert_ptr_equal(out[2], ITEM(3));
	assert_int_equal(spsc_push_many(&r, in + 8, 2), 2);
	assert_int_equal(spsc_pop_many(&r, out, 10), 7); /* as many as wait */
	assert_ptr_equal(out[0], ITEM(4));
	assert_ptr_equal(out[6], ITEM(10));
	assert_int_equal(spsc_pop_many(&r, out, 10), 0);
}

/* ---- two threads -------------------------------------------------------- */

#define STRESS_ITEMS 1000000u

struct stress {
	struct spsc_ring ring;
	void *slots[64];
	uint64_t full_spins;  /* pushes that found the ring full */
	uint64_t empty_spins; /* pops that found it empty */
	uintptr_t last;       /* the consumer's last item */
	int out_of_order;     /* items not one more than the one before */
};

static void *producer(void *arg)
{
	struct stress *t = arg;
	void *batch[5];
	uintptr_t next = 1;
	while (next <= STRESS_ITEMS) {
		/* Single pushes and batches of five by turns. */
		if (next % 2) {
			if (spsc_push(&t->ring, ITEM(next)))
				next++;
			else
				t->full_spins++, sched_yield();
			continue;
		}
		uint32_t n = 0;
		for (; n < 5 && next + n <= STRESS_ITEMS; n++)
			batch[n] = ITEM(next + n);
		uint32_t went = spsc_push_many(&t->ring, batch, n);
		if (!went)
			t->full_spins++, sched_yield(); /* CI's host may have one CPU for both */
		next += went;
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct stress *t = arg;
	void *batch[7];
	while (t->last < STRESS_ITEMS) {
		uint32_t n = t->last % 3 ? spsc_pop_many(&t->ring, batch, 7)
					 : (batch[0] = spsc_pop(&t->ring)) != NULL;
		if (!n)
			t->empty_spins++, sched_yield();
		for (uint32_t i = 0; i < n; i++) {
			uintptr_t v = (uintptr_t)batch[i];
			if (v != t->last + 1)
				t->out_of_order++;
			t->last = v;
		}
	}
	return NULL;
}

static void two_threads(void **state)
{
	(void)state;
	static struct stress t;
	assert_int_equal(spsc_init(&t.ring, t.slots, 64), 0);
	pthread_t p, c;
	assert_int_equal(pthread_create(&c, NULL, consumer, &t), 0);
	assert_int_equal(pthread_create(&p, NULL, producer, &t), 0);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	assert_int_equal(t.out_of_order, 0);
	assert_int_equal(t.last, STRESS_ITEMS);
	assert_null(spsc_pop(&t.ring));
	print_message("spsc: %u items, producer found it full %llu times, consumer empty %llu\n",
		      STRESS_ITEMS, (unsigned long long)t.full_spins, (unsigned long long)t.empty_spins);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes_refused),
		cmocka_unit_test(full_empty_order),
		cmocka_unit_test(index_wrap),
		cmocka_unit_test(batches),
		cmocka_unit_test(two_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
