/*
 * stats.c: the counters and their shutdown report.
 */
#include "kernel.h"
#include "stats.h"

struct kstats stats;

#define MAX_PRINTERS 8
static void (*printers[MAX_PRINTERS])(void);
static int nprinters;

void stats_register(void (*print)(void))
{
	if (nprinters < MAX_PRINTERS)
		printers[nprinters++] = print;
}

/* The layers above first (they were registered last), the kernel's own last. */
void stats_print_all(void)
{
	for (int i = nprinters - 1; i >= 0; i--)
		printers[i]();
	stats_print();
}

void stats_service(void)
{
	if (console_status_requested) {
		console_status_requested = false;
		stats_print_all();
	}
}

void stats_print(void)
{
	struct mem_stats m;
	mem_get_stats(&m);
	kprintf("kernel: uptime %lu ms; interrupts %lu (unexpected %lu, timer %lu); parks %lu; "
		"timer reloads %lu (skipped %lu); timers run %lu; heap %lu KiB, pages %lu\n",
		clock_ns() / 1000000, stats.interrupts, stats.interrupts_unexpected,
		stats.timer_interrupts, stats.parks, stats.timer_reloads, stats.timer_reloads_skipped,
		stats.timers_run, m.heap_bytes / 1024, m.pages_allocated);
	kprintf("kernel: waits %lu; polls %lu (idle %lu); spins %lu (hits %lu); re-arm rechecks %lu\n",
		stats.waits, stats.wait_polls, stats.wait_polls_idle, stats.spins, stats.spin_hits,
		stats.arm_rechecks);
}
