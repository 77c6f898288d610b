/*
 * executor.c: how a blocking call waits, in the shape of Hermit's block_on on
 * one core. The caller gives a readiness test; the loop polls the wait source
 * (the network) when it is due, runs expired timers, and when nothing can
 * happen soon it spins briefly with the device interrupt off, then re-arms the
 * interrupt, looks once more, and parks until the interrupt or the earliest
 * deadline (the caller's, the source's, a kernel timer's).
 */
#include <errno.h>
#include "arch.h"
#include "kernel.h"
#include "stats.h"
#include "switches.h"

static const struct wait_source *source;
static uint64_t spin_ns = SPIN_NS_DEFAULT;

void executor_set_source(const struct wait_source *src)
{
	source = src;
	spin_ns = (uint64_t)kernel_option_long("spin_us", SPIN_NS_DEFAULT / 1000) * 1000;
}

/* Poll the source if it has work (or always, when poll-when-due is off). */
static bool poll_source(void)
{
	if (!source || (SW_POLL_WHEN_DUE && !source->due()))
		return false;
	stats.wait_polls++;
	uint64_t t0 = cpu_cycles();
	bool progress = source->poll();
	stats_phase_add(PHASE_POLL, cpu_cycles() - t0);
	if (!progress)
		stats.wait_polls_idle++;
	return progress;
}

bool executor_poll(void)
{
	stats_service();
	bool progress = poll_source();
	if (timer_run_expired())
		progress = true;
	return progress;
}

/* Busy-poll the source's device, interrupt off, until it has work, a timer is
 * due or the spin budget is spent. True when work arrived. */
static bool spin_until_work(uint64_t deadline);

static bool spin(uint64_t deadline)
{
	uint64_t t0 = cpu_cycles();
	bool hit = spin_until_work(deadline);
	stats_phase_add(PHASE_SPIN, cpu_cycles() - t0);
	return hit;
}

static bool spin_until_work(uint64_t deadline)
{
	uint64_t now = clock_ns(), until = now + spin_ns;
	uint64_t next_timer = timer_next_deadline();
	if (until > deadline)
		until = deadline;
	if (until > next_timer)
		until = next_timer;
	while (now < until) {
		stats.spins++;
		if (source->due()) {
			stats.spin_hits++;
			return true;
		}
		cpu_relax();
		now = clock_ns();
	}
	return false;
}

int block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns)
{
	stats.waits++;
	for (;;) {
		bool progress = executor_poll();
		if (ready(ctx))
			return 0;
		if (clock_ns() >= deadline_ns)
			return -ETIMEDOUT;
		if (progress)
			continue;
		if (!source) {
			cpu_park(deadline_ns, NULL);
			continue;
		}
		if (SW_SPIN_THEN_PARK && spin_ns && spin(deadline_ns))
			continue;
		*source->wake = false;
		if (source->arm()) { /* work slipped in before the interrupt was on */
			stats.arm_rechecks++;
			source->disarm();
			continue;
		}
		uint64_t wake_at = source->next_deadline();
		cpu_park(wake_at < deadline_ns ? wake_at : deadline_ns, source->wake);
		source->disarm();
	}
}
