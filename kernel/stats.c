/*
 * stats.c: the counters and their shutdown report.
 */
#include "kernel.h"
#include "stats.h"

struct kstats stats;

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
