/*
 * net_lock.h: the global-lock design (switch SW_SMP_GLOBAL_LOCK, issue 39):
 * one spinlock around lwIP, the driver and the socket layer's shared state,
 * taken by whichever CPU enters. The socket calls and the descriptor
 * operations take it (net_lock.c, net_lock_ops.c); a blocking call lets go
 * of it for its wait (net_block_on). With the switch off every function here
 * is an empty inline, or block_on itself: not one instruction changes.
 */
#ifndef NET_LOCK_H
#define NET_LOCK_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/handoff.h"
#include "kernel/kernel.h"
#include "kernel/switches.h"

#if SW_SMP_GLOBAL_LOCK

/* Take the lock (again, when this CPU holds it already: a nesting count). */
void net_lock(void);
/* Let go once per net_lock; the last one sends the wakes decided under it. */
void net_unlock(void);
/* This CPU holds it (the owner check of lwIP's and the driver's entries). */
bool net_lock_held(void);
/* block_on (block_on_intr when intr) for a caller holding the lock: let go
 * of it for the wait, ready(ctx) runs under it, and it is held again after. */
int net_block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns, bool intr);
/* Once the network is up (sock_net_start, on the boot CPU): with a second
 * CPU, hand it the network's loop and make the boot CPU's waits wait for the
 * network CPU's notices; with one, wait on net_source as before, under the
 * lock. */
void net_lock_start(const struct wait_source *net_source);

#else

static inline void net_lock(void) {}
static inline void net_unlock(void) {}
/* Without the lock a wait is the executor's, or, on the network core, one
 * a relayed signal ends (kernel/handoff.h). */
static inline int net_block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns, bool intr)
{
	return handoff_block_on(ready, ctx, deadline_ns, intr);
}

#endif

#endif
