/*
 * test_wake.c: the console's keys reach a waiting CPU at once. The
 * status key (Ctrl-T) and a posted signal (Ctrl-C's SIGINT) are served by
 * the wait loop's turn (stats_service, signal_service); an interrupt handler
 * posts them while the loop may be spinning on the device or about to park.
 * Here the executor (kernel/executor.c), the park (kernel/timer.c, compiled
 * into this file with its x86 instructions replaced) and kernel/signal.c run
 * on the host over a fake clock and a wait source whose device never has
 * work, and "the interrupt" is the handler's store made from inside the
 * spin's look at the device or the arming of its interrupt. What is asserted
 * is counted, not timed: the request is served with the fake clock where it
 * was (no deadline passed), with no halt, and within a bounded number of
 * looks at the device; without the fix the spin runs on to the deadline (the
 * look bound fails) and the park halts until it (the clock moves). The same
 * stand-ins check the idle guest's waits: after a park that the one-shot,
 * not the device, ended, the next waits park without a spin.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* ---- timer.c, with stand-ins for what it includes and calls -------------------- */
#define ARCH_H /* timer.c's arch.h: these instead */
static void irq_disable(void) {}
static void irq_enable(void) {}
static void irq_enable_and_halt(void);

#include "kernel/timer.c"

#define MS 1000000ULL

/* The one CPU: its timer heap is timer.c's, as the boot CPU's is in the guest. */
struct percpu percpu_host = {
	.self = &percpu_host,
	.timers = &timer_queue_boot,
	.spin = { SPIN_NS_DEFAULT, SPIN_NS_DEFAULT, SPIN_NS_DEFAULT },
};
static uint64_t now_ns = 1000 * MS;
static uint64_t oneshot_deadline; /* what the LAPIC was last given */
static int halts;                 /* irq_enable_and_halt calls: parks that slept */
static bool device_at_halt;       /* the device's interrupt, not the one-shot, ends a halt */
static volatile bool device_wake; /* the source's wake flag, which its interrupt raises */

uint64_t clock_ns(void) { return now_ns; }
uint64_t clock_realtime_ns(void) { return now_ns; }
/* The spin's end in TSC cycles: never, so only the device, a deadline seen at
 * a turn or posted work ends a spin here, whatever the host's speed; or, for
 * the tests of an idle guest, at once (the spin runs out after one batch). */
static bool spin_runs_out;
uint64_t clock_tsc_at(uint64_t ns)
{
	(void)ns;
	return spin_runs_out ? 0 : UINT64_MAX;
}
void lapic_timer_arm(uint64_t deadline_ns) { oneshot_deadline = deadline_ns; }
/* A halt lasts until the one-shot fires: the clock moves to its deadline. */
static void irq_enable_and_halt(void)
{
	halts++;
	if (device_at_halt) { /* a frame, a nanosecond into the halt */
		now_ns++;
		device_wake = true;
		return;
	}
	if (oneshot_deadline > now_ns)
		now_ns = oneshot_deadline;
	timer_interrupt();
}
void stats_phase_add(enum stats_phase phase, uint64_t cycles) { (void)phase, (void)cycles; }
enum hypervisor cpu_hypervisor(void) { return HYPERVISOR_TCG; }
const char *cpu_hypervisor_name(enum hypervisor h)
{
	(void)h;
	return "TCG";
}
int kprintf(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

/* The options the executor reads: the spin's window, set per test. */
static const char *spin_us_option;
const char *kernel_option(const char *key)
{
	if (!strcmp(key, "spin_us") || !strcmp(key, "spin_max_us"))
		return spin_us_option;
	return NULL;
}

/* ---- the console's side ------------------------------------------------------ */

volatile bool console_status_requested; /* kernel/console.c's: the status key's handler sets it */
static int dumps;                       /* requests served */
static uint64_t dump_at_ns;             /* the clock when the last one was */

/* As kernel/percpu_host.stats.c: a pending request is served (its counters printed). */
void stats_service(void)
{
	if (console_status_requested) {
		console_status_requested = false;
		dumps++;
		dump_at_ns = now_ns;
	}
}

/* ---- a wait source whose device never has work --------------------------------- */

#define LOOK_BOUND 1000000 /* looks at the device: far more than a few spin batches */

static unsigned long looks;
static unsigned long key_at_look; /* 0: no key during the spin */
static bool key_at_arm;           /* the key arrives as the device interrupt is armed */
static int signal_at_look;        /* a signal posted during the spin (0: none) */

/* What the UART's interrupt handler does for each key (kernel/console.c). */
static void key_interrupt(void)
{
	if (signal_at_look)
		signal_post(signal_at_look);
	else
		console_status_requested = true;
}

static bool source_due(void) { return false; }
static bool source_poll(void) { return false; }
static bool source_device_ready(void)
{
	if (++looks == key_at_look)
		key_interrupt();
	if (looks > LOOK_BOUND)
		fail_msg("the spin went on past %d looks at the device with the key posted", LOOK_BOUND);
	return false;
}
static uint64_t source_next_deadline(void) { return now_ns + 1000 * MS; }
static bool source_arm(void)
{
	if (key_at_arm)
		key_interrupt();
	return false;
}
static void source_disarm(void) {}
static bool source_drained(void) { return true; }

static const struct wait_source source = {
	.due = source_due,
	.device_ready = source_device_ready,
	.poll = source_poll,
	.next_deadline = source_next_deadline,
	.arm = source_arm,
	.disarm = source_disarm,
	.wake = &device_wake,
	.drained = source_drained,
};

static bool served(void *ctx)
{
	(void)ctx;
	return dumps > 0;
}

/* A fresh source with spin window spin_us ("0": park at once). */
static void start(const char *spin_us)
{
	spin_us_option = spin_us;
	executor_set_source(&source);
	looks = key_at_look = 0;
	key_at_arm = false;
	signal_at_look = 0;
	dumps = halts = 0;
	console_status_requested = false;
	spin_runs_out = device_at_halt = false;
	percpu_host.stats.parks_unspun = 0;
}

/* ---- the tests ------------------------------------------------------------------ */

/* The key lands while the CPU spins with a window longer than the time to
 * the next deadline: the spin ends at its next batch and the loop serves it,
 * the clock where it was. */
static void status_key_ends_the_spin(void **state)
{
	(void)state;
	start("1000000");
	key_at_look = 100;
	uint64_t t0 = now_ns;
	assert_int_equal(block_on(served, NULL, now_ns + 10000 * MS), 0);
	assert_int_equal(dumps, 1);
	assert_true(dump_at_ns == t0);
	assert_int_equal(halts, 0);
	assert_true(looks < 200);
}

/* The key lands after the turn's stats_service and before the park (while
 * the device interrupt is armed): the park does not halt, so the request is
 * served before the deadline the park would have slept to. */
static void status_key_before_the_park_ends_it(void **state)
{
	(void)state;
	start("0");
	key_at_arm = true;
	uint64_t t0 = now_ns;
	assert_int_equal(block_on(served, NULL, now_ns + 10000 * MS), 0);
	assert_int_equal(dumps, 1);
	assert_true(dump_at_ns == t0);
	assert_int_equal(halts, 0);
}

/* Without a key the same wait parks and sleeps to the source's deadline: the
 * stand-ins do halt, so the two tests above can fail. */
static void without_a_key_the_park_sleeps(void **state)
{
	(void)state;
	start("0");
	uint64_t t0 = now_ns;
	assert_int_equal(block_on(served, NULL, now_ns + 1500 * MS), -ETIMEDOUT);
	assert_int_equal(dumps, 0);
	assert_true(halts >= 1);
	assert_true(now_ns >= t0 + 1000 * MS);
}

/* A signal posted during the spin (Ctrl-C's SIGINT) ends it too: its handler
 * runs at the next turn and an interruptible wait ends with EINTR. */
static volatile sig_atomic_t handled;
static void on_signal(int sig)
{
	(void)sig;
	handled++;
}

static void signal_ends_the_spin(void **state)
{
	(void)state;
	start("1000000");
	struct sigaction sa = { .sa_handler = on_signal }, old;
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	signal_at_look = SIGUSR1;
	key_at_look = 100;
	handled = 0;
	uint64_t t0 = now_ns;
	assert_int_equal(block_on_intr(served, NULL, now_ns + 10000 * MS), -EINTR);
	assert_int_equal(handled, 1);
	assert_true(now_ns == t0);
	assert_int_equal(halts, 0);
	assert_true(looks < 200);
	sigaction(SIGUSR1, &old, NULL);
}

/* ---- an idle guest: no spin after a park the device did not end --------------- */

/* A park that the one-shot ended (no frame in it) marks the guest idle: the
 * waits after it park without a spin, however many timers wake it. A wait
 * of 2.5 s with the source due each second: one spin (its 1 ms window, run
 * out after a batch), then three parks, two of them unspun. */
static void a_park_the_timer_ended_skips_the_spin(void **state)
{
	(void)state;
	start("1000");
	spin_runs_out = true;
	uint64_t t0 = now_ns;
	assert_int_equal(block_on(never_ready, NULL, t0 + 2500 * MS), -ETIMEDOUT);
	assert_int_equal(looks, 32); /* SPIN_BATCH: the one spin */
	assert_int_equal(halts, 3);
	assert_int_equal(percpu_host.stats.parks_unspun, 2);
	assert_true(now_ns == t0 + 2500 * MS);
}

/* The device's wake of a park ends it: the next wait spins again. The first
 * park of this wait is unspun (the previous wait's last park was the
 * timer's); the device ends it, and the spin after it runs a batch. */
static void the_device_wake_brings_the_spin_back(void **state)
{
	(void)state;
	start("1000");
	spin_runs_out = true;
	assert_int_equal(block_on(never_ready, NULL, now_ns + 1500 * MS), -ETIMEDOUT);
	unsigned long looks_idle = looks;
	long unspun_idle = (long)percpu_host.stats.parks_unspun;
	assert_true(unspun_idle >= 1);
	/* Now a frame ends the next park (a wait that ends with it), then the
	 * device is quiet again and the one-shot ends the parks. */
	device_at_halt = true;
	assert_int_equal(block_on(never_ready, NULL, now_ns + 1), -ETIMEDOUT);
	assert_int_equal(looks, looks_idle);                   /* that park: still unspun */
	assert_int_equal(percpu_host.stats.parks_unspun, unspun_idle + 1);
	device_at_halt = false;
	assert_int_equal(block_on(never_ready, NULL, now_ns + 500 * MS), -ETIMEDOUT);
	assert_int_equal(looks, looks_idle + 32);              /* the spin is back */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(status_key_ends_the_spin),
		cmocka_unit_test(status_key_before_the_park_ends_it),
		cmocka_unit_test(without_a_key_the_park_sleeps),
		cmocka_unit_test(signal_ends_the_spin),
		cmocka_unit_test(a_park_the_timer_ended_skips_the_spin),
		cmocka_unit_test(the_device_wake_brings_the_spin_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
