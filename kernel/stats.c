/*
 * stats.c: the counters and their shutdown report. The kernel's lines are
 * the boot CPU's counters, as they were before there were others; every
 * CPU's, when others were started, follow on a line each (smp.h), and the
 * time line comes last: readers of a Ctrl-T dump end it there.
 */
#include "kernel.h"
#include "percpu.h"
#include "smp.h"
#include "stats.h"

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
	cpu_stats()->phase_cycles[phase] += cycles;
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
	const struct kstats *s = &percpu_boot.stats;
	struct mem_stats m;
	mem_get_stats(&m);
	kprintf("kernel: uptime %lu ms; interrupts %lu (unexpected %lu, timer %lu); eoi writes %lu "
		"(paravirtual %lu); parks %lu; timer reloads %lu (skipped %lu); timers run %lu; "
		"heap %lu KiB, pages %lu\n",
		clock_ns() / 1000000, s->interrupts, s->interrupts_unexpected,
		s->timer_interrupts, s->eoi_writes, s->eoi_paravirtual, s->parks,
		s->timer_reloads, s->timer_reloads_skipped,
		s->timers_run, m.heap_bytes / 1024, m.pages_allocated);
	kprintf("kernel: waits %lu; polls %lu (idle %lu); spins %lu (hits %lu); parks unspun %lu; spin window "
		"grew %lu (shrank %lu); re-arm rechecks %lu; backoff pauses %lu; fast wakes %lu; "
		"exit drain polls %lu (gave up %lu)\n",
		s->waits, s->wait_polls, s->wait_polls_idle, s->spins, s->spin_hits,
		s->parks_unspun, s->spin_window_grew, s->spin_window_shrank, s->arm_rechecks, s->backoff_pauses, s->fast_wakes, s->exit_drain_polls,
		s->exit_drain_gave_up);
	kprintf("kernel: spin pauses %lu; pause-loop exits estimated amd %lu; pause-loop exits estimated "
		"intel %lu\n", s->spin_pauses, s->ple_exits_amd, s->ple_exits_intel);
	/* Before the time line, which readers of a dump take for its last. */
	smp_print_stats();
	/* Time of the app (and of everything outside the wait loops) is the rest. */
	uint64_t up = clock_ns() / 1000, poll = cycles_to_us(s->phase_cycles[PHASE_POLL]);
	uint64_t egress = cycles_to_us(s->phase_cycles[PHASE_EGRESS]);
	uint64_t spin = cycles_to_us(s->phase_cycles[PHASE_SPIN]);
	uint64_t park = cycles_to_us(s->phase_cycles[PHASE_PARK]);
	uint64_t known = poll + spin + park;
	kprintf("kernel: time us: receive+stack %lu, egress %lu, spin %lu, park %lu, app+other %lu\n",
		poll > egress ? poll - egress : 0, egress, spin, park, up > known ? up - known : 0);
}
