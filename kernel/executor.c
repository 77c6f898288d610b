/*
 * executor.c: how a blocking call waits, in the shape of Hermit's block_on on
 * one core. The caller gives a readiness test and a deadline; the loop polls
 * the wait source (the network) when it is due, runs expired timers, and when
 * nothing can happen soon it spins briefly with the device interrupt off, then
 * re-arms the interrupt, looks once more, and parks until the interrupt or the
 * earliest deadline (the caller's, the source's, a kernel timer's).
 *
 * The spin is the one place where an instruction's cost under emulation
 * decides the design: under QEMU's TCG, PAUSE ends the translated block and
 * the vCPU thread goes back to QEMU's loop and takes the big lock, which the
 * I/O thread needs to hand us the very frame we spin for; under KVM (and on
 * hardware) PAUSE is what a polite spin is made of. So the spin relaxes with
 * PAUSE except under TCG, where a compiler barrier does (kernel option
 * spin_relax=pause|barrier overrides). Where a park is dear (not under TCG)
 * the spin's length follows the gaps the device's wakes show (spinwin.h).
 * Either way one turn costs a load and a compare of the device's used index,
 * and every SPIN_BATCH turns the TSC is compared with a deadline worked out
 * before the spin began.
 *
 * Signals the kernel posted (the console's Ctrl-C) are delivered at each
 * turn (executor_poll), so their handlers run in the task's context; a wait
 * that may be interrupted (block_on_intr: poll()) then ends with -EINTR.
 * The console's status key (Ctrl-T) is served there too (stats_service).
 * Either is posted by an interrupt handler while the loop may be anywhere:
 * so the spin looks for them (signal_pending) each SPIN_BATCH turns, and the
 * park does not halt while one waits (cpu_park looks, interrupts off), else
 * the counters or the handler would wait for the next deadline.
 *
 * Each design switch (switches.h) has its naive side here: the timed wait
 * (1), polling when due (4), the spin (9) and the one-shot's reloads (10).
 *
 * The wait loop's own instructions, the spin (wait_spin) and the naive
 * backoff's PAUSEs (wait_backoff_pauses), are functions of their own, never
 * inlined, as is the park (cpu_park, timer.c): an instruction counter that
 * knows only addresses (tools/plugin/insncount.c) tells them from the work
 * by their symbols. Not inlining them costs a call per spin or backoff step,
 * not per turn.
 */
#include <errno.h>
#include "arch.h"
#include "kernel.h"
#include "spinwin.h"
#include "percpu.h"
#include "switches.h"

/* The naive spin's backoff: 2^step PAUSEs at step 0..BACKOFF_STEPS-1, 2,047
 * in all, the "about 2,000 pause exits" of the write-up, before it parks. */
#define BACKOFF_STEPS 11
/* Looks at the device's ring between two reads of the clock in the spin. */
#define SPIN_BATCH 32

enum spin_relax {
	RELAX_PAUSE,   /* PAUSE: hardware and KVM */
	RELAX_BARRIER, /* a compiler barrier: TCG, where PAUSE leaves the translated block */
};

/* How every CPU's spins relax: the hypervisor decides it, for all alike. The
 * rest of a wait's state (its source, spin window, whether the device has
 * gone quiet, whether the source is being polled) is each CPU's own
 * (percpu.h): a CPU waits on the source it registered, no other. */
static enum spin_relax relax = RELAX_PAUSE;

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* percpu.device_quiet is set when a park ended with no word from the
 * device: a timer or the wait's own deadline woke the CPU, so no frame came
 * in the whole park. Such a guest is idle, and a spin after its timer's work
 * would wait for a frame nobody sends: under TCG a spin is host CPU at full
 * tilt, and at one timer a second it was most of what an idle instance cost
 * the host. The waits park without a spin until the device wakes a park or
 * shows work at a re-arm. */

void executor_set_source(const struct wait_source *src)
{
	this_cpu()->source = src;
	this_cpu()->device_quiet = false; /* nothing heard from it yet */
	/* The window grows only where a park is dear (spinwin.h): under KVM and
	 * on hardware. Under TCG a park costs no exit, and a longer spin would
	 * take the host CPU that the emulated device and the client need. */
	bool tcg = cpu_hypervisor() == HYPERVISOR_TCG;
	long base_us = kopt_number(KOPT_SPIN_US);
	long max_us = kopt_number_or(KOPT_SPIN_MAX_US, tcg ? base_us : SPIN_MAX_NS_DEFAULT / 1000);
	struct spin_window *spin = &this_cpu_ptr()->spin;
	spin_window_init(spin, (uint64_t)base_us * 1000, (uint64_t)max_us * 1000);
	if (kopt_is(KOPT_SPIN_RELAX, "pause"))
		relax = RELAX_PAUSE;
	else if (kopt_is(KOPT_SPIN_RELAX, "barrier"))
		relax = RELAX_BARRIER;
	else
		relax = tcg ? RELAX_BARRIER : RELAX_PAUSE;
	if (kopt_flag(KOPT_VERBOSE))
		kprintf("executor: spin %lu us (at most %lu), relax %s (hypervisor %s)\n",
			spin->base_ns / 1000, spin->max_ns / 1000, relax == RELAX_PAUSE ? "pause" : "barrier",
			cpu_hypervisor_name(cpu_hypervisor()));
}

/* percpu.in_source_poll is set while the source polls: what it calls (lwIP
 * and the socket layer's callbacks, with NO_SYS) must not wait, as a wait
 * would poll the source again from inside itself. */

static bool poll_source_now(void)
{
	this_cpu()->in_source_poll = true;
	bool progress = this_cpu()->source->poll();
	this_cpu()->in_source_poll = false;
	return progress;
}

/* Poll the source if it has work (or always, when poll-when-due is off). */
static bool poll_source(void)
{
	if (!this_cpu()->source || (SW_POLL_WHEN_DUE && !this_cpu()->source->due()))
		return false;
	cpu_stats()->wait_polls++;
	uint64_t t0 = cpu_cycles();
	bool progress = poll_source_now();
	stats_phase_add(PHASE_POLL, cpu_cycles() - t0);
	if (!progress)
		cpu_stats()->wait_polls_idle++;
	return progress;
}

/* Bumped when executor_poll ran a signal's handler: an interruptible wait
 * ends when it moves. */
static unsigned long signals_run;

bool executor_poll(void)
{
	if (!SMP_DESIGN || on_boot_cpu())
		stats_service();
	if (signal_service_here())
		signals_run++;
	bool progress = poll_source();
	if (timer_run_expired())
		progress = true;
	return progress;
}

/*
 * An exit must not take the last frames with it: QEMU's device sends what we
 * publish from its own thread, after our notify, and isa-debug-exit ends the
 * process at once, so a reply sent just before exit() (a UDP echo's last
 * datagram) could be lost. The exit polls until the device has taken every
 * frame (held notifies decided, egress handed to lwIP), within a bound a
 * dead device cannot stretch. Data lwIP still waits to have acknowledged is
 * the application's to wait for (close, then read to EOF, or linger).
 */
#define EXIT_DRAIN_NS (NSEC_PER_SEC / 5) /* 200 ms */

void executor_drain(void)
{
	static bool draining; /* an exit() from inside a poll must not poll again */
	if (!this_cpu()->source || draining)
		return;
	draining = true;
	uint64_t until = clock_ns() + EXIT_DRAIN_NS;
	while (!this_cpu()->source->drained()) {
		if (clock_ns() >= until) {
			cpu_stats()->exit_drain_gave_up++;
			break;
		}
		cpu_stats()->exit_drain_polls++;
		poll_source_now();
	}
	draining = false;
}

/* ---- when to wake: the timed wait (switch 1) ------------------------------------ */

/* The deadline a park of a wait ending at deadline_ns programs. */
static uint64_t park_deadline(uint64_t deadline_ns)
{
	uint64_t queued = timer_next_deadline();
	if (this_cpu()->source)
		queued = min_u64(queued, this_cpu()->source->next_deadline());
	if (SW_TIMED_WAIT)
		return min_u64(deadline_ns, queued);
	/* Naive, the write-up's two bugs: the deadline goes to the park as
	 * wall-clock time where a timeout from now is expected, and it replaces
	 * the deadlines already queued (the network's, the kernel timers'). */
	if (deadline_ns == UINT64_MAX)
		return queued;
	uint64_t wall_deadline = clock_realtime_ns() - clock_ns() + deadline_ns; /* the same instant */
	return clock_ns() + wall_deadline; /* taken as a timeout from now */
}

/* ---- the design's wait: spin, then park (switch 9 on) ------------------------------ */

/* One turn's relax; 1 when it was a PAUSE. */
static inline unsigned spin_relax(void)
{
	if (relax == RELAX_PAUSE) {
		cpu_relax();
		return 1;
	}
	__asm__ volatile("" ::: "memory");
	return 0;
}

/* The source says the work will come from another CPU's wait, not soon:
 * park without spinning (compiled in with the network core only). */
static inline bool source_quiet(void)
{
	return SW_SMP_NET_CORE && this_cpu()->source->quiet && this_cpu()->source->quiet();
}

/* A run of PAUSEs ended: counted, and priced in the pause-loop exits a KVM
 * host with default settings would have taken (ple.h; the nested host this
 * is measured under takes none). */
static void spin_pauses_account(uint64_t pauses, uint64_t cycles)
{
	if (!pauses)
		return;
	uint64_t amd, intel;
	ple_spin(&this_cpu_ptr()->ple, pauses, cycles, &amd, &intel);
	cpu_stats()->spin_pauses += pauses;
	cpu_stats()->ple_exits_amd += amd;
	cpu_stats()->ple_exits_intel += intel;
}

uint64_t executor_spin_window_ns(void) { return this_cpu()->spin.ns; }

/* How a spin ended. */
enum spin_end {
	SPIN_HIT,      /* the device handed us work */
	SPIN_RAN_OUT,  /* the window passed: park */
	SPIN_DEADLINE, /* a deadline came first (a timer, the network's): poll, then spin again */
	SPIN_POSTED,   /* an interrupt handler posted work for the loop (a signal, the status key) */
};

/* Poll the device, interrupt off, until it has work, the earliest deadline
 * comes, the window (ending at window_end) is spent or an interrupt handler
 * posts work for the loop. Nothing else can make the source due meanwhile:
 * egress is queued only by code that runs. */
static __attribute__((noinline, noclone)) enum spin_end wait_spin(uint64_t window_end, uint64_t deadline_ns)
{
	uint64_t t0 = cpu_cycles();
	uint64_t due = park_deadline(deadline_ns);
	uint64_t until = clock_tsc_at(min_u64(window_end, due));
	enum spin_end end = due < window_end ? SPIN_DEADLINE : SPIN_RAN_OUT;
	uint64_t pauses = 0;
	for (;;) {
		/* The clock is read once per SPIN_BATCH looks at the ring: under TCG,
		 * RDTSC is a call into QEMU that takes a lock. */
		for (int i = 0; i < SPIN_BATCH; i++) {
			cpu_stats()->spins++;
			if (this_cpu()->source->device_ready()) {
				cpu_stats()->spin_hits++;
				end = SPIN_HIT;
				goto out;
			}
			pauses += spin_relax();
		}
		if (signal_pending_here()) {
			end = SPIN_POSTED;
			break;
		}
		if (source_quiet())
			break; /* as if the window ran out */
		if (rdtsc() >= until)
			break;
	}
out:;
	uint64_t cycles = cpu_cycles() - t0;
	stats_phase_add(PHASE_SPIN, cycles);
	spin_pauses_account(pauses, cycles);
	return end;
}

/* A wait that spun and then parked: the window learns how long it lasted. */
static void spin_window_after(uint64_t waited_ns, bool device_ended)
{
	switch (spin_window_update(&this_cpu_ptr()->spin, waited_ns, device_ended)) {
	case SPIN_WINDOW_GREW:
		cpu_stats()->spin_window_grew++;
		break;
	case SPIN_WINDOW_SHRANK:
		cpu_stats()->spin_window_shrank++;
		break;
	case SPIN_WINDOW_KEPT:
		break;
	}
}


static int wait_spin_then_park(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns, bool intr)
{
	unsigned long signals_before = signals_run;
	uint64_t spin_start = 0; /* when the spin under way began; 0: none */
	for (;;) {
		bool progress = executor_poll();
		if (ready(ctx))
			return 0;
		if (intr && signals_run != signals_before)
			return -EINTR;
		uint64_t now = clock_ns();
		if (now >= deadline_ns)
			return -ETIMEDOUT;
		if (progress) {
			spin_start = 0;
			continue;
		}
		if (!this_cpu()->source) {
			cpu_park(park_deadline(deadline_ns), NULL);
			continue;
		}
		/* A fixed window (TCG's) needs no second look at the clock, which
		 * under TCG is a call into QEMU. */
		bool adapts = this_cpu()->spin.max_ns > this_cpu()->spin.base_ns;
		/* A spin cut short by a deadline goes back to run what fell due (a
		 * timer, the driver's timed hold) rather than park with it past,
		 * then spins out the same window: a deadline neither ends the
		 * window nor starts a new one. */
		if (spin_start == 0)
			spin_start = now;
		if (this_cpu()->spin.ns && (this_cpu()->device_quiet || source_quiet())) {
			cpu_stats()->parks_unspun++;
		} else if (this_cpu()->spin.ns) {
			enum spin_end end = wait_spin(spin_start + this_cpu()->spin.ns, deadline_ns);
			if (end == SPIN_HIT)
				spin_start = 0;
			if (end != SPIN_RAN_OUT)
				continue;
		}
		*this_cpu()->source->wake = false;
		if (this_cpu()->source->arm()) { /* work slipped in before the interrupt was on */
			cpu_stats()->arm_rechecks++;
			this_cpu()->device_quiet = false;
			this_cpu()->source->disarm();
			if (adapts)
				spin_window_after(clock_ns() - spin_start, true);
			spin_start = 0;
			continue;
		}
		cpu_park(park_deadline(deadline_ns), this_cpu()->source->wake);
		bool device_woke = *this_cpu()->source->wake;
		this_cpu()->device_quiet = !device_woke;
		if (IDEA_FAST_WAKE && device_woke) {
			cpu_stats()->fast_wakes++;
			poll_source_now();
		}
		this_cpu()->source->disarm();
		if (adapts)
			spin_window_after(clock_ns() - spin_start, device_woke);
		spin_start = 0;
	}
}

/* ---- the naive wait: exponential backoff, interrupt on (switch 9 off) --------------- */

/* One backoff step: n PAUSEs. */
static __attribute__((noinline, noclone)) void wait_backoff_pauses(unsigned n)
{
	uint64_t t0 = cpu_cycles();
	for (unsigned i = 0; i < n; i++) {
		cpu_relax();
		cpu_stats()->backoff_pauses++;
	}
	spin_pauses_account(n, cpu_cycles() - t0);
}

/* The write-up's naive loop: the NIC interrupt stays on for the whole wait
 * (armed again after every poll, so each frame that arrives interrupts),
 * every turn polls the network and the waited-on objects, and an idle turn
 * backs off through 2^step PAUSEs before the next; once the backoff is spent
 * the CPU parks. */
static int wait_backoff(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns, bool intr)
{
	unsigned long signals_before = signals_run;
	unsigned step = 0;
	int r;
	for (;;) {
		if (this_cpu()->source) {
			*this_cpu()->source->wake = false;
			this_cpu()->source->arm();
		}
		bool progress = executor_poll();
		if (ready(ctx)) {
			r = 0;
			break;
		}
		if (intr && signals_run != signals_before) {
			r = -EINTR;
			break;
		}
		if (clock_ns() >= deadline_ns) {
			r = -ETIMEDOUT;
			break;
		}
		if (progress) {
			step = 0;
			continue;
		}
		if (step < BACKOFF_STEPS) {
			cpu_stats()->spins++;
			wait_backoff_pauses(1u << step);
			step++;
			continue;
		}
		step = 0;
		cpu_park(park_deadline(deadline_ns), this_cpu()->source ? this_cpu()->source->wake : NULL);
	}
	if (this_cpu()->source)
		this_cpu()->source->disarm();
	return r;
}

static int wait_until_ready(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns, bool intr)
{
	KASSERT(!this_cpu()->in_source_poll); /* no wait from inside the network's poll */
	cpu_stats()->waits++;
	int r = SW_SPIN_THEN_PARK ? wait_spin_then_park(ready, ctx, deadline_ns, intr)
				  : wait_backoff(ready, ctx, deadline_ns, intr);
	/* Naive (switch 10): every return from a wait arms the one-shot with the
	 * network's next deadline, so that it is polled on time whatever the
	 * caller does next; the design programs the timer only when it parks. */
	if (!SW_TIMER_NO_RELOAD && this_cpu()->source) {
		uint64_t next = this_cpu()->source->next_deadline();
		if (next != UINT64_MAX)
			timer_program_oneshot(next);
	}
	return r;
}

int block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns)
{
	return wait_until_ready(ready, ctx, deadline_ns, false);
}

int block_on_intr(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns)
{
	return wait_until_ready(ready, ctx, deadline_ns, true);
}
