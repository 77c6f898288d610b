/*
 * spinlock.c: the spinlock (see spinlock.h). A test-and-set with an atomic
 * exchange, and a wait that reads the lock (no locked bus cycle) with PAUSE
 * between reads until it looks free, then tries again. The counters are
 * written by the holder, under the lock: plain increments. A wait's PAUSEs
 * are one run, from its first PAUSE to the acquisition (or the bounded
 * wait's end), and are priced on the waiting CPU as the executor's spins
 * are: the pause-loop exits a KVM host with default filters would take
 * (ple.h), counted per CPU beside the PAUSEs.
 */
#include "arch.h"
#include "kernel.h"
#include "percpu.h"
#include "spinlock.h"

static inline bool try_take(struct spinlock *l)
{
	return __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) == 0;
}

/* One wait of this CPU ended after `pauses` PAUSEs over `cycles` TSC cycles. */
static void account_wait(uint64_t pauses, uint64_t cycles)
{
	uint64_t amd, intel;
	ple_spin(&this_cpu_ptr()->ple, pauses, cycles, &amd, &intel);
	cpu_stats()->lock_pauses += pauses;
	cpu_stats()->lock_ple_amd += amd;
	cpu_stats()->lock_ple_intel += intel;
}

/* The lock taken (a wait counted if it had to), or false once max_pauses
 * PAUSEs have passed without it. */
static bool take(struct spinlock *l, uint64_t max_pauses)
{
	if (try_take(l)) {
		l->acquisitions++;
		l->owner = cpu_id();
		return true;
	}
	uint64_t pauses = 0, t0 = cpu_cycles();
	for (;;) {
		while (l->locked && pauses < max_pauses) {
			cpu_relax();
			pauses++;
		}
		if (try_take(l))
			break;
		if (pauses >= max_pauses) {
			account_wait(pauses, cpu_cycles() - t0);
			return false;
		}
	}
	l->acquisitions++;
	l->contended++;
	l->pauses += pauses;
	l->owner = cpu_id();
	account_wait(pauses, cpu_cycles() - t0);
	return true;
}

void spin_lock(struct spinlock *l)
{
	take(l, UINT64_MAX);
}

void spin_unlock(struct spinlock *l)
{
	KASSERT(l->locked);
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

uint64_t spin_lock_irqsave(struct spinlock *l)
{
	uint64_t flags = irq_save();
	take(l, UINT64_MAX);
	return flags;
}

void spin_unlock_irqrestore(struct spinlock *l, uint64_t flags)
{
	spin_unlock(l);
	irq_restore(flags);
}

bool spin_lock_bounded(struct spinlock *l, uint64_t max_pauses)
{
	if (l->locked && l->owner == cpu_id())
		return false; /* ours already: a panic inside the holder's section */
	if (take(l, max_pauses))
		return true;
	/* The holder kept it too long: take it over. */
	__atomic_store_n(&l->locked, 1, __ATOMIC_SEQ_CST);
	l->acquisitions++;
	l->broken++;
	l->owner = cpu_id();
	return true;
}

bool spin_is_locked(const struct spinlock *l)
{
	return l->locked != 0;
}

#define MAX_LISTED 8
static struct spinlock *listed[MAX_LISTED];
static int nlisted;

void spinlock_register(struct spinlock *l)
{
	if (nlisted < MAX_LISTED)
		listed[nlisted++] = l;
}

void spinlock_print_all(void)
{
	char line[512] = "";
	size_t len = 0;
	for (int i = 0; i < nlisted && len < sizeof line; i++)
		len += (size_t)ksnprintf(line + len, sizeof line - len, "%s %s %lu (contended %lu, pauses %lu, broken %lu)",
					 i ? ";" : "", listed[i]->name, listed[i]->acquisitions,
					 listed[i]->contended, listed[i]->pauses, listed[i]->broken);
	if (nlisted)
		kprintf("kernel: locks:%s\n", line); /* one write: another CPU's line cannot split it */
}
