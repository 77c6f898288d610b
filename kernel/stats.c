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

void stats_phase_add(enum stats_phase phase, uint64_t cycles)
{
	stats.phase_cycles[phase] += cycles;
}

static uint64_t cycles_to_us(uint64_t c)
{
	uint64_t hz = clock_tsc_hz();
	return hz ? (uint64_t)((unsigned __int128)c * 1000000 / hz) : 0;
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
	kprintf("kernel: uptime %lu ms; interrupts %lu (unexpected %lu, timer %lu); eoi writes %lu "
		"(paravirtual %lu); parks %lu; timer reloads %lu (skipped %lu); timers run %lu; "
		"heap %lu KiB, pages %lu\n",
		clock_ns() / 1000000, stats.interrupts, stats.interrupts_unexpected,
		stats.timer_interrupts, stats.eoi_writes, stats.eoi_paravirtual, stats.parks,
		stats.timer_reloads, stats.timer_reloads_skipped,
		stats.timers_run, m.heap_bytes / 1024, m.pages_allocated);
	kprintf("kernel: waits %lu; polls %lu (idle %lu); spins %lu (hits %lu); parks unspun %lu; spin window "
		"grew %lu (shrank %lu); re-arm rechecks %lu; backoff pauses %lu; fast wakes %lu; "
		"exit drain polls %lu (gave up %lu)\n",
		stats.waits, stats.wait_polls, stats.wait_polls_idle, stats.spins, stats.spin_hits,
		stats.parks_unspun, stats.spin_window_grew, stats.spin_window_shrank, stats.arm_rechecks, stats.backoff_pauses, stats.fast_wakes, stats.exit_drain_polls,
		stats.exit_drain_gave_up);
	/* Time of the app (and of everything outside the wait loops) is the rest. */
	uint64_t up = clock_ns() / 1000, poll = cycles_to_us(stats.phase_cycles[PHASE_POLL]);
	uint64_t egress = cycles_to_us(stats.phase_cycles[PHASE_EGRESS]);
	uint64_t spin = cycles_to_us(stats.phase_cycles[PHASE_SPIN]);
	uint64_t park = cycles_to_us(stats.phase_cycles[PHASE_PARK]);
	uint64_t known = poll + spin + park;
	kprintf("kernel: time us: receive+stack %lu, egress %lu, spin %lu, park %lu, app+other %lu\n",
		poll > egress ? poll - egress : 0, egress, spin, park, up > known ? up - known : 0);
}
