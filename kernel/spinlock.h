/*
 * spinlock.h: a lock for what more than one CPU must write (the console,
 * a CPU's mailbox: docs/design/smp.md lists each shared structure and what
 * guards it). A holder never sleeps; a waiter spins with PAUSE until the
 * holder lets go. Each lock counts what it cost, under the lock itself:
 * acquisitions, the acquisitions that found it held, and the PAUSEs those
 * waits took (a KVM host's pause-loop exiting acts on runs of PAUSE, so
 * every spin of the kernel counts its PAUSEs: issue 39 item 5).
 *
 * The _irqsave forms keep this CPU's interrupts off while the lock is held,
 * for a lock an interrupt handler on the same CPU may also take (the
 * console's: a panic prints from any context).
 */
#ifndef SPINLOCK_H
#define SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct spinlock {
	volatile uint32_t locked;  /* 0: free; 1: held */
	uint32_t owner;            /* the holder's CPU number (meaningful while held) */
	const char *name;          /* for the counters' line */
	uint64_t acquisitions;     /* times taken */
	uint64_t contended;        /* ... that found it held and had to wait */
	uint64_t pauses;           /* PAUSEs spun by those waits */
	uint64_t broken;           /* times a bounded wait gave up and took it (spin_lock_bounded) */
};

#define SPINLOCK_INIT(label) { .name = (label) }

void spin_lock(struct spinlock *l);
void spin_unlock(struct spinlock *l);
/* Interrupts off on this CPU, then the lock; the flags to hand back. */
uint64_t spin_lock_irqsave(struct spinlock *l);
void spin_unlock_irqrestore(struct spinlock *l, uint64_t flags);
/* The lock, unless this CPU holds it already (a panic inside the holder's
 * own critical section): true when taken, and so to be released. A holder
 * on another CPU that keeps it past max_pauses PAUSEs (a CPU that died
 * holding it) loses it: counted in `broken`, and the lock is taken. For the
 * console, whose output matters most when something went wrong. */
bool spin_lock_bounded(struct spinlock *l, uint64_t max_pauses);
/* True while some CPU holds it (for assertions; a snapshot). */
bool spin_is_locked(const struct spinlock *l);
/* Lists the lock on the `kernel: locks` line of the counters (a few). */
void spinlock_register(struct spinlock *l);
/* That line, when some lock is listed. */
void spinlock_print_all(void);

#endif
