/*
 * timer.c: kernel timers and parking. Timers live in a heap (timerq.c), one
 * per CPU (percpu.h): a timer is started, cancelled and run on one CPU, the
 * one whose heap holds it; its callbacks run from that CPU's wait loops in
 * thread context. Each CPU's LAPIC one-shot timer is
 * programmed for the deadline a parked CPU waits for (its caller picks the
 * earliest: executor.c), and not reprogrammed when it already holds that
 * deadline or an earlier one (a needless MMIO write that costs a VM exit
 * under KVM and an emulated access under TCG).
 */
#include "arch.h"
#include "clock.h"
#include "cpu.h"
#include "kernel.h"
#include "percpu.h"
#include "switches.h"
#include "timerq.h"

#define MAX_TIMERS 1024

static struct timer *timer_storage_boot[MAX_TIMERS];
/* The boot CPU's heap (its percpu.timers); an AP's comes with its area. */
struct timerq timer_queue_boot = { timer_storage_boot, 0, MAX_TIMERS };

void timer_init(struct timer *t, void (*fn)(struct timer *t))
{
	t->deadline = 0;
	t->fn = fn;
	t->heap_index = -1;
}

/* A timer that is queued is in this CPU's heap: one started on another CPU
 * and touched here would corrupt both heaps (debug builds catch it). */
static inline bool queued_here(const struct timerq *q, const struct timer *t)
{
	return t->heap_index < 0 || (t->heap_index < q->n && q->heap[t->heap_index] == t);
}

void timer_start(struct timer *t, uint64_t deadline_ns)
{
	struct timerq *q = this_cpu()->timers;
	KASSERT(queued_here(q, t));
	timerq_remove(q, t);
	t->deadline = deadline_ns;
	if (timerq_add(q, t) < 0)
		panic("more than %d timers pending", MAX_TIMERS);
	KASSERT(timerq_valid(q));
}

void timer_cancel(struct timer *t)
{
	struct timerq *q = this_cpu()->timers;
	KASSERT(queued_here(q, t));
	timerq_remove(q, t);
}

bool timer_pending(const struct timer *t) { return t->heap_index >= 0; }

uint64_t timer_next_deadline(void)
{
	struct timer *t = timerq_peek(this_cpu()->timers);
	return t ? t->deadline : UINT64_MAX;
}

int timer_run_expired(void)
{
	int ran = 0;
	uint64_t now = clock_ns();
	struct timerq *q = this_cpu()->timers;
	struct timer *t;
	while ((t = timerq_peek(q)) && t->deadline <= now) {
		timerq_pop(q);
		t->fn(t);
		ran++;
	}
	cpu_stats()->timers_run += (uint64_t)ran;
	return ran;
}

void timer_interrupt(void)
{
	cpu_stats()->timer_interrupts++;
	this_cpu()->armed_deadline = 0;
}

/* The design loads the one-shot only when what it holds would wake the CPU
 * too late: not for the deadline it holds, nor for a later one while an
 * earlier has yet to fire (that firing ends the park early at worst; the
 * wait then parks again and loads what it needs). Each load is an MMIO
 * write: an exit under KVM, an emulated access under TCG. */
void timer_program_oneshot(uint64_t deadline)
{
	uint64_t armed = this_cpu()->armed_deadline;
	if (SW_TIMER_NO_RELOAD && armed && armed <= deadline) {
		cpu_stats()->timer_reloads_skipped++;
		return;
	}
	this_cpu()->armed_deadline = deadline;
	cpu_stats()->timer_reloads++;
	lapic_timer_arm(deadline);
}

void cpu_park(uint64_t deadline_ns, volatile bool *wake_flag)
{
	irq_disable();
	/* A signal posted since the wait loop last looked (the console's Ctrl-C)
	 * is delivered by that loop, not after the next unrelated interrupt. */
	if ((wake_flag && *wake_flag) || signal_pending_here()) {
		irq_enable();
		return;
	}
	if (deadline_ns != UINT64_MAX) {
		if (clock_ns() >= deadline_ns) {
			irq_enable();
			return;
		}
		timer_program_oneshot(deadline_ns);
	}
	cpu_stats()->parks++;
	uint64_t t0 = cpu_cycles();
	irq_enable_and_halt(); /* the waking interrupt's handler has run when this returns */
	stats_phase_add(PHASE_PARK, cpu_cycles() - t0);
	/* Under KVM the halt blocked the vCPU's thread, and its scheduling in
	 * again set the host's pause filters back to their defaults (ple.h). */
	ple_reset(&this_cpu_ptr()->ple);
}

static bool never_ready(void *ctx)
{
	(void)ctx;
	return false;
}

/* A sleeping app still owns a network: the executor keeps the stack running
 * (frames taken off the ring, ACKs and retransmissions sent, timers fired)
 * while it waits, as any other blocking call does. */
void sleep_until(uint64_t deadline_ns)
{
	block_on(never_ready, NULL, deadline_ns);
}
