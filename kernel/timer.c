/*
 * timer.c: kernel timers and parking. Timers live in a heap (timerq.c); their
 * callbacks run from wait loops in thread context. The LAPIC one-shot timer is
 * programmed for the deadline a parked CPU waits for (its caller picks the
 * earliest: executor.c), and not reprogrammed when it already holds that
 * deadline or an earlier one (a needless MMIO write that costs a VM exit
 * under KVM and an emulated access under TCG).
 */
#include "arch.h"
#include "clock.h"
#include "cpu.h"
#include "kernel.h"
#include "stats.h"
#include "switches.h"
#include "timerq.h"

#define MAX_TIMERS 1024

static struct timer *timer_storage[MAX_TIMERS];
static struct timerq queue = { timer_storage, 0, MAX_TIMERS };
static volatile uint64_t armed_deadline; /* what the LAPIC holds; 0: nothing */

void timer_init(struct timer *t, void (*fn)(struct timer *t))
{
	t->deadline = 0;
	t->fn = fn;
	t->heap_index = -1;
}

void timer_start(struct timer *t, uint64_t deadline_ns)
{
	timerq_remove(&queue, t);
	t->deadline = deadline_ns;
	if (timerq_add(&queue, t) < 0)
		panic("more than %d timers pending", MAX_TIMERS);
	KASSERT(timerq_valid(&queue));
}

void timer_cancel(struct timer *t) { timerq_remove(&queue, t); }
bool timer_pending(const struct timer *t) { return t->heap_index >= 0; }

uint64_t timer_next_deadline(void)
{
	struct timer *t = timerq_peek(&queue);
	return t ? t->deadline : UINT64_MAX;
}

int timer_run_expired(void)
{
	int ran = 0;
	uint64_t now = clock_ns();
	struct timer *t;
	while ((t = timerq_peek(&queue)) && t->deadline <= now) {
		timerq_pop(&queue);
		t->fn(t);
		ran++;
	}
	stats.timers_run += (uint64_t)ran;
	return ran;
}

void timer_interrupt(void)
{
	stats.timer_interrupts++;
	armed_deadline = 0;
}

/* The design loads the one-shot only when what it holds would wake the CPU
 * too late: not for the deadline it holds, nor for a later one while an
 * earlier has yet to fire (that firing ends the park early at worst; the
 * wait then parks again and loads what it needs). Each load is an MMIO
 * write: an exit under KVM, an emulated access under TCG. */
void timer_program_oneshot(uint64_t deadline)
{
	if (SW_TIMER_NO_RELOAD && armed_deadline && armed_deadline <= deadline) {
		stats.timer_reloads_skipped++;
		return;
	}
	armed_deadline = deadline;
	stats.timer_reloads++;
	lapic_timer_arm(deadline);
}

void cpu_park(uint64_t deadline_ns, volatile bool *wake_flag)
{
	irq_disable();
	/* A signal posted since the wait loop last looked (the console's Ctrl-C)
	 * is delivered by that loop, not after the next unrelated interrupt. */
	if ((wake_flag && *wake_flag) || signal_pending()) {
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
	stats.parks++;
	uint64_t t0 = cpu_cycles();
	irq_enable_and_halt(); /* the waking interrupt's handler has run when this returns */
	stats_phase_add(PHASE_PARK, cpu_cycles() - t0);
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
