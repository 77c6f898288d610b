/*
 * host.c: what the guest kernel and driver would give the socket layer, as
 * host stand-ins: a fake clock that only the test and cpu_park() move, kernel
 * options, the console, the executor's timer, park and counter-report hooks,
 * the virtio-net interrupt switch, lwIP's sys_now and random numbers
 * (read/write/close over the descriptor table are in fdcalls.c, which the
 * netrx fuzzer shares; panic, a test failure, in tests/unit/panic.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "kernel/kernel.h"
#include "kernel/percpu.h"
#include "kernel/switches.h"
#include "lwip/sys.h"
#include "harness.h"

uint64_t fake_now_ns = NSEC_PER_SEC; /* "booted" a second ago */
uint64_t fake_park_limit_ns = UINT64_MAX;

/* The one CPU: the executor's state and counters (kernel/smp.c's percpu_boot in the guest). */
struct percpu percpu_host = {
	.self = &percpu_host,
	.spin = { SPIN_NS_DEFAULT, SPIN_NS_DEFAULT, SPIN_NS_DEFAULT },
};
volatile bool vnet_wake;

uint64_t clock_ns(void) { return fake_now_ns; }
/* The wall clock runs the fake clock from a date in 2026, as the RTC would. */
#define FAKE_EPOCH_NS (1795000000ULL * NSEC_PER_SEC)
uint64_t clock_realtime_ns(void) { return FAKE_EPOCH_NS + fake_now_ns; }
/* The spin is off here (spin_us=0 below): its deadline never matters. */
uint64_t clock_tsc_at(uint64_t ns) { (void)ns; return 0; }
uint64_t clock_tsc_hz(void) { return 1000000000; } /* the request trace reads the real TSC */
enum hypervisor cpu_hypervisor(void) { return HYPERVISOR_NONE; }
const char *cpu_hypervisor_name(enum hypervisor hv) { (void)hv; return "none"; }
u32_t sys_now(void) { return (u32_t)(fake_now_ns / 1000000); }
u32_t sys_jiffies(void) { return sys_now(); }

/* Deterministic "random" numbers: the same ports and ISNs on every run. */
uint32_t net_random_u32(void)
{
	static uint64_t x = 0x2545f4914f6cdd1dULL;
	x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(x >> 33);
}

/* quiet: no counter report at exit; spin_us=0: the executor's spin loop waits
 * for the clock to move, which a fake clock never does by itself; ack_merge:
 * what a test sets (NULL: the table's default). */
const char *host_ack_merge;

const char *kernel_option(const char *key)
{
	if (!strcmp(key, "ack_merge"))
		return host_ack_merge;
	if (!strcmp(key, "quiet"))
		return "";
	if (!strcmp(key, "spin_us"))
		return "0";
	return NULL;
}

/* The heap's room as the kernel reports it (mem_heap_room): tests make the
 * machine small. */
uint64_t host_heap_free = 1ULL << 30;

uint64_t mem_heap_room(void) { return host_heap_free; }

int kprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

/* The kernel's counter reports: layers register printers; wait loops ask
 * whether the console's status key was pressed. Nothing to print here. */
void stats_register(void (*print)(void)) { (void)print; }
void stats_phase_add(enum stats_phase phase, uint64_t cycles) { (void)phase, (void)cycles; }
void stats_service(void) {}

/* Signals: the first wait-loop turn at or after fake_signal_at_ns delivers
 * one, as the kernel's signal_service() runs the app's handler after the
 * console's Ctrl-C; fake_signals_run counts them. socket_test_setup resets
 * both. */
uint64_t fake_signal_at_ns = UINT64_MAX, fake_signals_run;
bool signal_pending(void) { return fake_now_ns >= fake_signal_at_ns; }
bool signal_service(void)
{
	if (fake_now_ns < fake_signal_at_ns)
		return false;
	fake_signal_at_ns = UINT64_MAX;
	fake_signals_run++;
	return true;
}

/* No kernel timers in the test. The executor calls timer_run_expired() on
 * every turn, which makes it the place where a wait loop that never parks
 * (the naive builds busy-poll) spends time: every BUSY_TURNS turns at one
 * instant the fake clock moves 1 ms, as a real one would. A loop that keeps
 * turning past the test's time limit fails rather than hangs. */
#define BUSY_TURNS 1000
uint64_t timer_next_deadline(void) { return UINT64_MAX; }
int timer_run_expired(void)
{
	static uint64_t turns_at, turns;
	if (fake_now_ns != turns_at) {
		turns_at = fake_now_ns;
		turns = 0;
	} else if (++turns >= BUSY_TURNS) {
		fake_now_ns += 1000000;
		if (fake_now_ns > fake_park_limit_ns)
			fail_msg("a wait loop kept turning past the test's limit (%.3f s fake time)",
				 (double)fake_park_limit_ns / NSEC_PER_SEC);
	}
	return 0;
}

/* The one-shot: the harness's cpu_park does not program it (time jumps
 * instead); what programs it outside a park is recorded for the tests. */
uint64_t fake_oneshot_programs, fake_oneshot_deadline;
void timer_program_oneshot(uint64_t deadline_ns)
{
	fake_oneshot_programs++;
	fake_oneshot_deadline = deadline_ns;
}

/* Parking is where time passes: jump to the deadline. A wait with no deadline
 * and nothing on the wire would never end: fail instead of hanging. */
uint64_t fake_wake_at_ns = UINT64_MAX, fake_wake_period_ns;
uint64_t fake_park_min_deadline = UINT64_MAX, fake_park_max_deadline, fake_parks;
void cpu_park(uint64_t deadline_ns, volatile bool *wake_flag)
{
	if (wake_flag && *wake_flag)
		return;
	fake_parks++;
	if (deadline_ns < fake_park_min_deadline)
		fake_park_min_deadline = deadline_ns;
	if (deadline_ns > fake_park_max_deadline)
		fake_park_max_deadline = deadline_ns;
	if (fake_wake_at_ns < deadline_ns) { /* an unrelated interrupt comes first */
		if (fake_wake_at_ns > fake_now_ns)
			fake_now_ns = fake_wake_at_ns;
		fake_wake_at_ns = fake_wake_period_ns ? fake_now_ns + fake_wake_period_ns : UINT64_MAX;
		return;
	}
	if (deadline_ns == UINT64_MAX)
		fail_msg("cpu_park without a deadline: the call would block forever");
	if (deadline_ns > fake_park_limit_ns)
		fail_msg("a blocking call waited past the test's limit (%.3f s fake time)",
			 (double)fake_park_limit_ns / NSEC_PER_SEC);
	if (deadline_ns > fake_now_ns)
		fake_now_ns = deadline_ns;
}

/* The "device" is loopnet's queue: turning the interrupt on reports frames
 * that are already waiting, as the driver does. */
bool vnet_rx_pending(void) { return loopnet_queued() > 0; }
/* The wire takes each packet at once: nothing to publish in batches. */
void vnet_tx_batch_begin(bool burst) { (void)burst; }
void vnet_tx_batch_end(void) {}
/* A device slow to take what it was given: the next fake_tx_busy_looks looks
 * find it busy, each costing a millisecond of fake time (so an exit's drain
 * can meet its bound). */
uint64_t fake_tx_busy_looks;
bool vnet_tx_idle(void)
{
	if (fake_tx_busy_looks == 0)
		return true;
	fake_tx_busy_looks--;
	fake_now_ns += NSEC_PER_SEC / 1000;
	return false;
}
uint64_t fake_irq_arms;
bool vnet_rx_irq_enable(bool on)
{
	fake_irq_arms += on;
	return on && loopnet_queued() > 0;
}
