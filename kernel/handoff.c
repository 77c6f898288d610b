/*
 * handoff.c: the application's calls run on a CPU of their own (switch
 * SW_SMP_NET_CORE; net/net_core.c starts it for the network). The serving
 * CPU owns the subsystem and waits on its source, as the boot CPU does with
 * one CPU; the app's CPU, which owns the app, its descriptor table and its
 * signals, ships each call and waits for the answer:
 *
 *   app's CPU                              serving CPU
 *   push the request (ring 1)  ------->    its wait's spin or park sees it
 *   wake it if it is parked                runs fn(args): lwIP, the sockets
 *   spin, then park, on ring 2  <-------   pushes the answer, wakes the app
 *                                          if it is parked
 *
 * The rings are kernel/spsc.h's: one producer and one consumer each, no
 * lock. The app is one thread, so one call is in flight at a time; while it
 * runs, what the app owns is lent to the serving CPU (percpu.h's `lent`:
 * the descriptor table a call installs into), and the app's CPU runs
 * nothing of the app's: it holds its signals (signals_held) and relays them
 * instead. A wait inside the call (handoff_block_on) ends for a relayed
 * signal; the app then runs the handler and ships the call again if it had
 * done nothing, which is how a wait under SA_RESTART behaves on one CPU.
 *
 * Waking, both ways, by a flag per side that says "parked", set before the
 * side's last look at its ring and read by the other after its push, with a
 * full fence between on both sides: either the parker's look sees the item,
 * or the pusher sees the flag and sends the wake (its park flag raised
 * first, so a wake between the parker's look and its HLT ends the HLT at
 * once: cpu_park). One wake IPI per park: a second would pile onto a
 * pending one for nothing.
 *
 * At exit the app asks the serving CPU whether the source is drained; the
 * answer that says so is its last: it then stops with interrupts off, so
 * the exit's report reads a subsystem that stands still, and later calls
 * run on the app's CPU.
 */
#include <errno.h>
#include "arch.h"
#include "handoff.h"
#include "percpu.h"
#include "smp.h"
#include "spsc.h"
#include "switches.h"

#if SW_SMP_NET_CORE

/* One call is in flight at a time (the app is one thread, and its signal
 * handlers run between calls, never during one): the ring's room is spare,
 * and a push that finds it full is a broken invariant (KCHECK). */
#define RING_SLOTS 8

/* One call, on the app's stack from its push to its answer. */
struct handoff_req {
	handoff_fn fn;             /* what to run */
	const long *args;          /* its arguments */
	long result;               /* fn's result, written before the answer is pushed */
	bool interrupted;          /* a wait in it ended for a relayed signal */
	bool intr_wait;            /* ... a wait that signals interrupt (poll) */
	volatile bool relay;       /* the app's CPU saw a signal posted meanwhile: written by it */
	volatile bool waiting;     /* the serving CPU waits inside it (handoff_block_on): the
				    * answer comes with that wait's end, the app's CPU parks */
	bool answered;             /* the app's CPU took its answer off ring 2 */
};

static struct spsc_ring requests; /* app -> serving CPU */
static struct spsc_ring answers;  /* serving CPU -> app */
static void *request_slots[RING_SLOTS], *answer_slots[RING_SLOTS];

static uint32_t server_cpu;
/* Calls go to server_cpu: set before it starts, cleared once it stopped. */
static volatile bool serving;
static const struct wait_source *inner; /* the subsystem's own source */
static void (*server_first)(void);      /* what the serving CPU does first */
/* The call the serving CPU runs now; its own. */
static struct handoff_req *current;
/* The call the app's CPU waits for; its own. */
static struct handoff_req *awaited;
static bool stop_after;                 /* the answer just pushed was the last */
static volatile bool server_stopped;

static volatile bool app_parked;    /* the app's CPU is between its arm and disarm */
static volatile bool server_parked; /* the serving CPU is between its arm and disarm */
static volatile bool app_wake;      /* the app's CPU's park flag */
static volatile bool app_woken;     /* a wake IPI went to the app's CPU for this park */
static volatile bool server_woken;  /* ... to the serving CPU */
/* Parks each side had begun when it armed: a park its wake ended halted. */
static uint64_t app_parks_at_arm, server_parks_at_arm;

static struct {
	uint64_t calls;             /* calls shipped */
	uint64_t restarts;          /* ... shipped again after a relayed signal */
	uint64_t relays;            /* signals relayed to a call's wait */
	uint64_t served_local;      /* calls run where they were made (nested, or after the stop) */
	uint64_t app_wakes;         /* wake IPIs to the app's CPU */
	uint64_t app_parks_woken;   /* app's CPU parks one of them ended */
	uint64_t app_wakes_early;   /* ... that came before it halted */
	uint64_t server_wakes;      /* wake IPIs to the serving CPU */
	uint64_t server_parks_woken;
	uint64_t server_wakes_early;
} counters;

bool handoff_serving(void)
{
	return serving;
}

/* ---- waking the other side ------------------------------------------------------ */

/* After a push (or a relay) by the app's CPU. */
static void wake_server(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (server_parked && !__atomic_exchange_n(&server_woken, true, __ATOMIC_SEQ_CST)) {
		*inner->wake = true; /* the serving CPU's park flag */
		counters.server_wakes++;
		smp_wake(server_cpu);
	}
}

/* After the serving CPU pushed an answer. */
static void wake_app(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (app_parked && !__atomic_exchange_n(&app_woken, true, __ATOMIC_SEQ_CST)) {
		app_wake = true;
		counters.app_wakes++;
		smp_wake(0);
	}
}

/* ---- the app's side ---------------------------------------------------------------- */

static bool answered(void *arg)
{
	struct handoff_req *c = arg;
	if (!c->answered && !c->relay && signal_posted()) {
		c->relay = true;
		counters.relays++;
		wake_server();
	}
	return c->answered;
}

long handoff_call(handoff_fn fn, const long *args)
{
	if (!serving || cpu_id() == server_cpu) {
		counters.served_local += serving;
		return fn(args);
	}
	KASSERT(on_boot_cpu());
	for (;;) {
		struct handoff_req c = { .fn = fn, .args = args };
		KCHECK(spsc_push(&requests, &c));
		counters.calls++;
		wake_server();
		bool held = this_cpu()->signals_held;
		this_cpu()->signals_held = true;
		awaited = &c;
		block_on(answered, &c, UINT64_MAX);
		awaited = NULL;
		this_cpu()->signals_held = held;
		if (!c.interrupted || c.result >= 0)
			return c.result;
		/* A wait in it ended for a signal: the handler runs here, now. */
		bool ran = signal_service_here();
		if (c.intr_wait && ran)
			return c.result;
		counters.restarts++;
	}
}

static bool answer_waiting(void)
{
	return spsc_nonempty(&answers);
}

static bool app_poll(void)
{
	bool any = false;
	struct handoff_req *c;
	while ((c = spsc_pop(&answers)) != NULL) {
		c->answered = true;
		any = true;
	}
	return any;
}

/* A call that waits on the serving CPU (a poll() with nothing ready, an
 * accept with nothing queued) ends with that CPU's wait, which spins on the
 * device itself: the app's CPU parks at once rather than spin beside it.
 * Under TCG two spinning vCPUs take two host cores' instructions; under
 * KVM the park costs its waker an ICR write exit and itself a HLT exit,
 * but spinning there was measured worse on a two-CPU host, the spinning
 * vCPU taking the host CPU vhost's thread needs (docs/design/smp.md). */
static bool app_quiet(void)
{
	return awaited && awaited->waiting && !spsc_nonempty(&answers);
}

static uint64_t app_next_deadline(void)
{
	return UINT64_MAX; /* the subsystem's timers are the serving CPU's */
}

static bool app_arm(void)
{
	app_woken = false;
	app_parks_at_arm = cpu_stats()->parks;
	app_parked = true;
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* before the last look: see the top */
	return spsc_nonempty(&answers);
}

static void app_disarm(void)
{
	app_parked = false;
	if (app_woken) {
		if (cpu_stats()->parks != app_parks_at_arm)
			counters.app_parks_woken++;
		else
			counters.app_wakes_early++;
	}
}

/* At exit (executor_drain): the serving CPU says whether its source is
 * drained, and if so stops after the answer. */
static long drained_then_stop(const long *args)
{
	(void)args;
	bool r = inner->drained();
	if (r)
		stop_after = true;
	return r;
}

static bool app_drained(void)
{
	if (!serving)
		return inner->drained();
	if (!handoff_call(drained_then_stop, NULL))
		return false;
	/* Its last answer is out; it stops next (bounded: a second). */
	uint64_t until = clock_ns() + NSEC_PER_SEC;
	while (!server_stopped && clock_ns() < until)
		cpu_relax();
	serving = false; /* what it owned is the app's CPU's again */
	return true;
}

static const struct wait_source app_source = {
	.due = answer_waiting,
	.device_ready = answer_waiting,
	.poll = app_poll,
	.next_deadline = app_next_deadline,
	.arm = app_arm,
	.disarm = app_disarm,
	.wake = &app_wake,
	.drained = app_drained,
	.quiet = app_quiet,
};

/* ---- the serving CPU's side --------------------------------------------------------- */

/* The subsystem's source, plus the ring and the current call's relay. */
static bool relayed(void)
{
	return current && current->relay;
}

static bool server_device_ready(void)
{
	return inner->device_ready() || spsc_nonempty(&requests) || relayed();
}

static bool server_arm(void)
{
	server_woken = false;
	server_parks_at_arm = cpu_stats()->parks;
	server_parked = true;
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* before the last look: see the top */
	return inner->arm() || spsc_nonempty(&requests) || relayed();
}

static void server_disarm(void)
{
	inner->disarm();
	server_parked = false;
	if (server_woken) {
		if (cpu_stats()->parks != server_parks_at_arm)
			counters.server_parks_woken++;
		else
			counters.server_wakes_early++;
	}
}

static bool server_due(void) { return inner->due(); }
static bool server_poll(void) { return inner->poll(); }
static uint64_t server_next_deadline(void) { return inner->next_deadline(); }
static bool server_drained(void) { return inner->drained(); }

static struct wait_source server_source = {
	.due = server_due,
	.device_ready = server_device_ready,
	.poll = server_poll,
	.next_deadline = server_next_deadline,
	.arm = server_arm,
	.disarm = server_disarm,
	.drained = server_drained,
	/* .wake: the subsystem's, set at start */
};

/* A wait inside a call, on the serving CPU: the caller's test, or a relay. */
struct relayable {
	bool (*ready)(void *ctx); /* the caller's test */
	void *ctx;                /* its argument */
};

static bool ready_or_relayed(void *arg)
{
	struct relayable *w = arg;
	return w->ready(w->ctx) || relayed();
}

int handoff_block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns, bool intr)
{
	if (!current || cpu_id() != server_cpu)
		return intr ? block_on_intr(ready, ctx, deadline_ns) : block_on(ready, ctx, deadline_ns);
	struct relayable w = { ready, ctx };
	if (ready(ctx))
		return 0;
	struct handoff_req *c = current;
	c->waiting = true;
	int r = block_on(ready_or_relayed, &w, deadline_ns);
	c->waiting = false;
	if (r == 0 && !ready(ctx)) {
		current->interrupted = true;
		current->intr_wait = intr;
		return -EINTR;
	}
	return r;
}

static bool request_waiting(void *ctx)
{
	(void)ctx;
	return spsc_nonempty(&requests);
}

/* After the last answer: nothing more runs here. */
static __attribute__((noreturn)) void server_stop(void)
{
	irq_disable();
	server_stopped = true;
	for (;;)
		__asm__ volatile("hlt");
}

/* The serving CPU's main loop (smp_run_on). */
static void serve(void)
{
	if (server_first)
		server_first();
	executor_set_source(&server_source);
	for (;;) {
		block_on(request_waiting, NULL, UINT64_MAX);
		struct handoff_req *c;
		while ((c = spsc_pop(&requests)) != NULL) {
			current = c;
			this_cpu()->lent++;
			c->result = c->fn(c->args);
			this_cpu()->lent--;
			current = NULL;
			KCHECK(spsc_push(&answers, c)); /* never full: as many answers as requests */
			wake_app();
			if (stop_after)
				server_stop();
		}
	}
}

static void handoff_stats_print(void)
{
	kprintf("handoff: serving cpu %u%s; calls %lu, restarted %lu, signals relayed %lu, run in place %lu; "
		"wakes to the app cpu %lu (ended a park %lu, before the halt %lu); wakes to the serving cpu %lu "
		"(ended a park %lu, before the halt %lu)\n",
		server_cpu, server_stopped ? " (stopped)" : "", counters.calls, counters.restarts,
		counters.relays, counters.served_local, counters.app_wakes, counters.app_parks_woken,
		counters.app_wakes_early, counters.server_wakes, counters.server_parks_woken,
		counters.server_wakes_early);
}

bool handoff_start(uint32_t cpu, const struct wait_source *source, void (*first)(void))
{
	KASSERT(on_boot_cpu() && !serving);
	if (cpu == 0 || cpu >= smp_cpus_online)
		return false;
	KCHECK(spsc_init(&requests, request_slots, RING_SLOTS) == 0);
	KCHECK(spsc_init(&answers, answer_slots, RING_SLOTS) == 0);
	inner = source;
	server_first = first;
	server_source.wake = source->wake;
	server_cpu = cpu;
	serving = true; /* before its first step, which reads it */
	executor_set_source(&app_source);
	if (!smp_run_on(cpu, serve)) {
		serving = false;
		executor_set_source(source);
		return false;
	}
	stats_register(handoff_stats_print);
	return true;
}

#endif
