/*
 * net_lock.c: the global-lock design (switch SW_SMP_GLOBAL_LOCK), the
 * baseline other unikernels have: one spinlock around lwIP, the driver and
 * the socket layer's shared state, taken by whichever CPU enters, on every
 * entry, no batching. With a second CPU (smp=2), CPU 1 runs the network's
 * loop: the device's interrupt is routed to it, and its executor waits on
 * the network (the poll, lwIP's timers, the driver, the egress pass), each
 * of the source's steps under the lock. The boot CPU runs the application,
 * whose socket calls take the lock (socket.c, net_lock_ops.c) and whose
 * waits wait for the network CPU's word.
 *
 * Waking, both ways, by a flag per CPU that says "parked in a wait" and is
 * read and written around the lock:
 *
 * - The network CPU bumps `notices` under the lock when a poll did work
 *   (only a poll changes what a socket is ready for). The app CPU's wait
 *   source polls by taking note of `notices`, so its wait re-checks the
 *   sockets when it moves; before it parks it sets app_parked and then
 *   looks at `notices` once more under the lock. The network CPU reads
 *   app_parked under the lock after its bump, and if it is set raises
 *   app_wake and sends the wake IPI after letting go.
 * - The app CPU, when a socket call leaves the network due (egress listed,
 *   a frame held, a timer), reads net_parked under the lock; the network
 *   CPU sets net_parked before its arm, which looks at whether the network
 *   is due under the lock.
 *
 * No wake is lost: the lock's acquisitions are ordered (each is a locked
 * exchange, a full barrier on x86). If the waker's critical section comes
 * first, the parker's last look under the lock sees what it did; if the
 * parker's comes first, its flag, stored before its exchange, is seen by
 * the waker's read after its own exchange, which raises the wake flag and
 * sends the IPI. cpu_park looks at the wake flag with interrupts off and
 * halts with `sti; hlt`, so an IPI that comes after that look ends the
 * halt, and one that came before it left the flag raised.
 *
 * With one CPU the boot CPU waits on the network itself, as without the
 * switch, but each of the source's steps takes the lock too.
 */
#include "drivers/virtio/virtio.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
#include "net.h"
#include "net_lock.h"
#include "sock.h"

#if SW_SMP_GLOBAL_LOCK

/* The CPU that runs the network's loop when there are two or more. */
#define NET_CPU 1

static struct spinlock big_lock = SPINLOCK_INIT("net");
/* How many times the holder has taken it: only the holder writes it. */
static uint32_t lock_depth;

/* The one network source, net_source of sock_wait.c, run under the lock. */
static const struct wait_source *inner;
/* The network runs on NET_CPU (else on the boot CPU, alone). */
static bool net_cpu_running;

/* Written by the network CPU under the lock; read by the app CPU's spin
 * without it (a hint) and under it before a park. */
static volatile uint64_t notices;
/* The last value of notices the app CPU's wait took note of. */
static uint64_t notices_seen;

static volatile bool app_parked; /* the app CPU is in its arm-to-disarm window */
static volatile bool net_parked; /* the network CPU is in its arm-to-disarm window */
static volatile bool app_wake;   /* raised before a wake IPI to the app CPU: its park's flag */
static volatile bool net_xwake;  /* raised with vnet_wake before a wake IPI to the network CPU:
				  * one wake per park, or IPIs pile up on a pending one */
/* Decided under the lock, sent by the last net_unlock (holder's). */
static bool send_app_wake, send_net_wake;

/* Parks each CPU had begun when it armed: a park ended by the wake halted. */
static uint64_t app_parks_at_arm, net_parks_at_arm;

/* The design's counters (the lock's own are on the `kernel: locks` line). */
static struct {
	uint64_t notices;          /* polls with work that told the app CPU */
	uint64_t app_wakes_sent;   /* wake IPIs the network CPU sent the app CPU */
	uint64_t app_parks_woken;  /* app CPU parks one of them ended */
	uint64_t app_wakes_early;  /* ... that came before the app CPU halted (its look saw the flag) */
	uint64_t app_rechecks;     /* app CPU arms that found a notice and looked again */
	uint64_t net_wakes_sent;   /* wake IPIs the app CPU sent the network CPU */
	uint64_t net_parks_woken;  /* network CPU parks one of them ended */
	uint64_t net_wakes_early;  /* ... that came before the network CPU halted */
} lock_counters;

bool net_lock_held(void)
{
	return big_lock.locked && big_lock.owner == cpu_id();
}

/* Does the network need its CPU (called on the app CPU, under the lock)? */
static bool network_due(void)
{
	return sk.egress_head != NULL || net_work_pending();
}

void net_lock(void)
{
	if (net_lock_held()) {
		lock_depth++; /* the app's signal handler, an exit inside a call */
		return;
	}
	spin_lock(&big_lock);
	lock_depth = 1;
}

void net_unlock(void)
{
	KASSERT(net_lock_held() && lock_depth > 0);
	if (--lock_depth)
		return;
	if (net_cpu_running && cpu_id() != NET_CPU && net_parked && !net_xwake && network_due()) {
		net_xwake = true;
		vnet_wake = true; /* the network CPU's park flag */
		send_net_wake = true;
	}
	bool wake_app = send_app_wake, wake_net = send_net_wake;
	send_app_wake = send_net_wake = false;
	/* No CPU's number: a stale owner would make net_lock_held true on this
	 * CPU in the moment between another's exchange and its owner store. */
	big_lock.owner = UINT32_MAX;
	spin_unlock(&big_lock);
	if (wake_app) {
		lock_counters.app_wakes_sent++;
		smp_wake(0);
	}
	if (wake_net) {
		lock_counters.net_wakes_sent++; /* by the app CPU only */
		smp_wake(NET_CPU);
	}
}

/* A wait's readiness test and its argument, for ready_locked. */
struct locked_test {
	bool (*ready)(void *ctx); /* the caller's test, which reads the sockets */
	void *ctx;                /* its argument */
};

static bool ready_locked(void *arg)
{
	struct locked_test *t = arg;
	net_lock();
	bool r = t->ready(t->ctx);
	net_unlock();
	return r;
}

int net_block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns, bool intr)
{
	KASSERT(net_lock_held());
	struct locked_test t = { ready, ctx };
	uint32_t depth = lock_depth;
	lock_depth = 1;
	net_unlock();
	int r = intr ? block_on_intr(ready_locked, &t, deadline_ns) : block_on(ready_locked, &t, deadline_ns);
	net_lock();
	lock_depth = depth;
	return r;
}

/* ---- the network's source, each step under the lock ------------------------------ */

static bool locked_due(void)
{
	net_lock();
	bool r = inner->due();
	net_unlock();
	return r;
}

/* The spin's look, without the lock: a frame on the ring, or egress the app
 * CPU listed (a pointer read; the poll reads it again under the lock). */
static bool locked_device_ready(void)
{
	return vnet_rx_pending() || __atomic_load_n(&sk.egress_head, __ATOMIC_RELAXED) != NULL;
}

static bool locked_poll(void)
{
	net_lock();
	bool did = inner->poll();
	if (did && net_cpu_running) {
		notices++;
		lock_counters.notices++;
		if (app_parked && !app_wake) {
			app_wake = true;
			send_app_wake = true;
		}
	}
	net_unlock();
	return did;
}

static uint64_t locked_next_deadline(void)
{
	net_lock();
	uint64_t r = inner->next_deadline();
	net_unlock();
	return r;
}

static bool locked_arm(void)
{
	if (net_cpu_running) {
		net_xwake = false;
		net_parks_at_arm = cpu_stats()->parks;
		net_parked = true; /* before the look under the lock: see the top */
	}
	net_lock();
	bool r = inner->arm() || inner->due();
	net_unlock();
	return r;
}

static void locked_disarm(void)
{
	net_lock();
	inner->disarm();
	net_unlock();
	if (!net_cpu_running)
		return;
	net_parked = false;
	if (net_xwake) {
		if (cpu_stats()->parks != net_parks_at_arm)
			lock_counters.net_parks_woken++;
		else
			lock_counters.net_wakes_early++;
	}
}

static bool locked_drained(void)
{
	net_lock();
	bool r = inner->drained();
	net_unlock();
	return r;
}

static const struct wait_source locked_source = {
	.due = locked_due,
	.device_ready = locked_device_ready,
	.poll = locked_poll,
	.next_deadline = locked_next_deadline,
	.arm = locked_arm,
	.disarm = locked_disarm,
	.wake = &vnet_wake,
	.drained = locked_drained,
};

/* ---- the app CPU's source: the network CPU's notices ------------------------------ */

static bool notice_waiting(void)
{
	return notices != notices_seen;
}

static bool app_poll(void)
{
	uint64_t now = notices;
	bool moved = now != notices_seen;
	notices_seen = now;
	return moved;
}

static uint64_t app_next_deadline(void)
{
	return UINT64_MAX; /* the network's timers are the network CPU's */
}

static bool app_arm(void)
{
	app_parks_at_arm = cpu_stats()->parks;
	app_parked = true; /* before the look under the lock: see the top */
	net_lock();
	bool r = notice_waiting();
	net_unlock();
	if (r)
		lock_counters.app_rechecks++;
	return r;
}

static void app_disarm(void)
{
	app_parked = false;
	if (app_wake) {
		if (cpu_stats()->parks != app_parks_at_arm)
			lock_counters.app_parks_woken++;
		else
			lock_counters.app_wakes_early++;
	}
}

/* At exit (executor_drain): once the network has sent all it was given,
 * the lock is kept, so that the exit's report reads a network that stands
 * still; the network CPU stops at its next step. */
static bool app_drained(void)
{
	net_lock();
	bool r = inner->drained();
	if (!r)
		net_unlock();
	return r;
}

static const struct wait_source app_source = {
	.due = notice_waiting,
	.device_ready = notice_waiting,
	.poll = app_poll,
	.next_deadline = app_next_deadline,
	.arm = app_arm,
	.disarm = app_disarm,
	.wake = &app_wake,
	.drained = app_drained,
};

/* ---- starting ------------------------------------------------------------------ */

static bool never_ready(void *ctx)
{
	(void)ctx;
	return false;
}

/* The network CPU's main loop (smp_run_on): the device's interrupt here,
 * then the executor's wait, for ever, on the network under the lock. */
static void net_cpu_main(void)
{
	if (vnet_route_irqs_here() < 0)
		kprintf("net: global lock: the device's interrupt could not be moved to CPU %u\n", cpu_id());
	executor_set_source(&locked_source);
	for (;;)
		block_on(never_ready, NULL, UINT64_MAX);
}

static void net_lock_stats_print(void)
{
	kprintf("net: global lock: network on cpu %d; notices %lu; wakes to the app cpu %lu "
		"(ended a park %lu, before the halt %lu), app rechecks %lu; wakes to the network cpu %lu "
		"(ended a park %lu, before the halt %lu)\n",
		net_cpu_running ? NET_CPU : 0, lock_counters.notices, lock_counters.app_wakes_sent,
		lock_counters.app_parks_woken, lock_counters.app_wakes_early, lock_counters.app_rechecks,
		lock_counters.net_wakes_sent, lock_counters.net_parks_woken, lock_counters.net_wakes_early);
}

void net_lock_start(const struct wait_source *net_source)
{
	inner = net_source;
	spinlock_register(&big_lock);
	stats_register(net_lock_stats_print);
	/* Before the network CPU's first step, which reads it. */
	net_cpu_running = smp_cpus_online > NET_CPU;
	if (net_cpu_running) {
		executor_set_source(&app_source);
		if (!smp_run_on(NET_CPU, net_cpu_main))
			net_cpu_running = false;
	}
	if (!net_cpu_running)
		executor_set_source(&locked_source);
}

#endif
