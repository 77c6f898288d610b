/*
 * test_spinwin.c: the spin's window (kernel/spinwin.c): it doubles after waits
 * the device ended within the bound, up to the bound and never past it;
 * halves after waits longer than the bound, down to its base; is left alone
 * by timer-ended waits; and stays fixed with no room to grow or no spin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel/spinwin.h"

#define US 1000ULL

static void grows_by_doubling_to_the_bound(void **state)
{
	(void)state;
	struct spin_window w;
	spin_window_init(&w, 250 * US, 2000 * US);
	assert_int_equal(w.ns, 250 * US);
	/* A gap of 850 us, each wait ended by the device's frame. */
	assert_int_equal(spin_window_update(&w, 850 * US, true), SPIN_WINDOW_GREW);
	assert_int_equal(w.ns, 500 * US);
	assert_int_equal(spin_window_update(&w, 850 * US, true), SPIN_WINDOW_GREW);
	assert_int_equal(w.ns, 1000 * US);
	assert_int_equal(spin_window_update(&w, 1900 * US, true), SPIN_WINDOW_GREW);
	assert_int_equal(w.ns, 2000 * US);
	assert_int_equal(spin_window_update(&w, 2000 * US, true), SPIN_WINDOW_KEPT);
	assert_int_equal(w.ns, 2000 * US);
}

static void stops_at_a_bound_that_is_no_power_of_two(void **state)
{
	(void)state;
	struct spin_window w;
	spin_window_init(&w, 250 * US, 700 * US);
	spin_window_update(&w, 600 * US, true);
	assert_int_equal(spin_window_update(&w, 600 * US, true), SPIN_WINDOW_GREW);
	assert_int_equal(w.ns, 700 * US);
}

static void long_waits_shrink_it_to_the_base(void **state)
{
	(void)state;
	struct spin_window w;
	spin_window_init(&w, 250 * US, 2000 * US);
	while (spin_window_update(&w, 100 * US, true) == SPIN_WINDOW_GREW)
		;
	assert_int_equal(w.ns, 2000 * US);
	/* The guest goes idle: a device wake after a long park still shrinks. */
	assert_int_equal(spin_window_update(&w, 2001 * US, true), SPIN_WINDOW_SHRANK);
	assert_int_equal(w.ns, 1000 * US);
	assert_int_equal(spin_window_update(&w, 5 * 1000 * US, false), SPIN_WINDOW_SHRANK);
	assert_int_equal(w.ns, 500 * US);
	assert_int_equal(spin_window_update(&w, 5 * 1000 * US, false), SPIN_WINDOW_SHRANK);
	assert_int_equal(w.ns, 250 * US);
	assert_int_equal(spin_window_update(&w, 5 * 1000 * US, false), SPIN_WINDOW_KEPT);
	assert_int_equal(w.ns, 250 * US);
}

static void timer_ended_waits_leave_it(void **state)
{
	(void)state;
	struct spin_window w;
	spin_window_init(&w, 250 * US, 2000 * US);
	spin_window_update(&w, 300 * US, true);
	assert_int_equal(spin_window_update(&w, 600 * US, false), SPIN_WINDOW_KEPT);
	assert_int_equal(w.ns, 500 * US);
}

static void fixed_without_room_or_spin(void **state)
{
	(void)state;
	struct spin_window w;
	/* TCG's default: the bound is the base. */
	spin_window_init(&w, 250 * US, 250 * US);
	assert_int_equal(spin_window_update(&w, 100 * US, true), SPIN_WINDOW_KEPT);
	assert_int_equal(spin_window_update(&w, 10 * 1000 * US, true), SPIN_WINDOW_KEPT);
	assert_int_equal(w.ns, 250 * US);
	/* A bound below the base is the base. */
	spin_window_init(&w, 250 * US, 100 * US);
	assert_int_equal(w.max_ns, 250 * US);
	assert_int_equal(spin_window_update(&w, 200 * US, true), SPIN_WINDOW_KEPT);
	/* spin_us=0: no spin, whatever the bound. */
	spin_window_init(&w, 0, 2000 * US);
	assert_int_equal(w.max_ns, 0);
	assert_int_equal(spin_window_update(&w, 100 * US, true), SPIN_WINDOW_KEPT);
	assert_int_equal(w.ns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grows_by_doubling_to_the_bound),
		cmocka_unit_test(stops_at_a_bound_that_is_no_power_of_two),
		cmocka_unit_test(long_waits_shrink_it_to_the_base),
		cmocka_unit_test(timer_ended_waits_leave_it),
		cmocka_unit_test(fixed_without_room_or_spin),
	};
	return cmocka_run_group_tests_name("spinwin", tests, NULL, NULL);
}
