/*
 * test_timer.c: the LAPIC one-shot's reloads (kernel/timer.c, switch 10), on
 * the host: timer.c is compiled into this file with its x86 instructions
 * (interrupt flag, HLT) and the LAPIC replaced by stand-ins that record what
 * the kernel would have written. Built twice (unit.mk): the design skips a
 * reload of the deadline the timer already holds; the naive build
 * (SW_TIMER_NO_RELOAD=0) writes it at every park. Either way a deadline that
 * has fired is loaded again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

/* ---- stand-ins for what timer.c includes and calls ----------------------------- */
#define ARCH_H /* timer.c's arch.h: these instead */
static void irq_disable(void) {}
static void irq_enable(void) {}
static void irq_enable_and_halt(void);

#include "kernel/timer.c"

/* The one CPU: its timer heap is timer.c's, as the boot CPU's is in the guest. */
struct percpu percpu_host = {
	.self = &percpu_host,
	.timers = &timer_queue_boot,
	.spin = { SPIN_NS_DEFAULT, SPIN_NS_DEFAULT, SPIN_NS_DEFAULT },
};
static uint64_t now_ns = 1000000000ULL;
static uint64_t lapic_writes, lapic_deadline;
static bool halt_ends_by_timer; /* true: the one-shot fires; false: another interrupt */

uint64_t clock_ns(void) { return now_ns; }
void lapic_timer_arm(uint64_t deadline_ns)
{
	lapic_writes++;
	lapic_deadline = deadline_ns;
}
static void irq_enable_and_halt(void)
{
	if (halt_ends_by_timer) {
		now_ns = lapic_deadline;
		timer_interrupt();
	} else {
		now_ns += 1000; /* a device interrupt, 1 us later */
	}
}
void stats_phase_add(enum stats_phase phase, uint64_t cycles) { (void)phase, (void)cycles; }
bool signal_pending(void) { return false; }
int block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns)
{
	(void)ready, (void)ctx, (void)deadline_ns;
	return 0;
}

/* ---- the tests ------------------------------------------------------------------ */

/* Two parks for the same deadline, the first ended by another interrupt: the
 * LAPIC still holds that deadline, so the design does not write it again. */
static void test_same_deadline_twice(void **state)
{
	(void)state;
	uint64_t d = now_ns + 5000000;
	uint64_t writes = lapic_writes, reloads = percpu_host.stats.timer_reloads, skipped = percpu_host.stats.timer_reloads_skipped;
	halt_ends_by_timer = false;
	cpu_park(d, NULL);
	cpu_park(d, NULL);
	assert_int_equal(lapic_writes - writes, SW_TIMER_NO_RELOAD ? 1 : 2);
	assert_int_equal(percpu_host.stats.timer_reloads - reloads, lapic_writes - writes); /* counts what was written */
	assert_int_equal(percpu_host.stats.timer_reloads_skipped - skipped, SW_TIMER_NO_RELOAD ? 1 : 0);
}

/* An earlier deadline the LAPIC holds wakes the CPU in time for a later one:
 * the design leaves it; a still earlier one is loaded. */
static void test_earlier_deadline_held(void **state)
{
	(void)state;
	timer_interrupt(); /* whatever an earlier test left loaded has fired */
	uint64_t d = now_ns + 5000000;
	uint64_t writes = lapic_writes;
	halt_ends_by_timer = false;
	cpu_park(d, NULL);
	cpu_park(d + 1000000, NULL);
	assert_int_equal(lapic_writes - writes, SW_TIMER_NO_RELOAD ? 1 : 2);
	assert_int_equal(lapic_deadline, SW_TIMER_NO_RELOAD ? d : d + 1000000);
	cpu_park(d - 1000000, NULL);
	assert_int_equal(lapic_writes - writes, SW_TIMER_NO_RELOAD ? 2 : 3);
	assert_int_equal(lapic_deadline, d - 1000000);
	halt_ends_by_timer = true; /* let it fire: nothing held for the next test */
	cpu_park(d - 1000000, NULL);
}

/* Once the one-shot has fired, the same deadline must be loaded again, in
 * every build (the interrupt clears what the timer holds). */
static void test_fired_deadline_reloads(void **state)
{
	(void)state;
	uint64_t d = now_ns + 3000000;
	halt_ends_by_timer = true;
	uint64_t writes = lapic_writes;
	cpu_park(d, NULL);
	assert_int_equal(now_ns, d);
	assert_int_equal(lapic_writes - writes, 1);
	now_ns = d - 1000; /* the same instant asked for again, e.g. after a clock read early */
	halt_ends_by_timer = false;
	cpu_park(d, NULL);
	assert_int_equal(lapic_writes - writes, 2);
}

/* A deadline already past, or a raised wake flag: no park, nothing written. */
static void test_no_park(void **state)
{
	(void)state;
	volatile bool wake = true;
	uint64_t writes = lapic_writes, parks = percpu_host.stats.parks;
	cpu_park(now_ns + 1000000, &wake);
	cpu_park(now_ns - 1, NULL);
	assert_int_equal(lapic_writes, writes);
	assert_int_equal(percpu_host.stats.parks, parks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_deadline_twice),
		cmocka_unit_test(test_earlier_deadline_held),
		cmocka_unit_test(test_fired_deadline_reloads),
		cmocka_unit_test(test_no_park),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
