/*
 * net_entry.h: how a call from the application enters the network, as the
 * SMP design built in says (kernel/switches.h). Every socket call and every
 * socket descriptor operation is a function of packed word arguments run
 * through net_run:
 *
 *   no design         it runs here: not one instruction more than the call;
 *   the global lock   it runs here under the lock (net_lock.c);
 *   the network core  it runs on the network's CPU, this one waiting for the
 *                     answer (kernel/handoff.c, net_core.c).
 *
 * Blocking inside a call is net_block_on (net_lock.h), in each design.
 */
#ifndef NET_ENTRY_H
#define NET_ENTRY_H

#include "kernel/handoff.h"
#include "kernel/kernel.h"
#include "kernel/switches.h"
#include "net_lock.h"

static inline long net_run(handoff_fn fn, const long *args)
{
#if SW_SMP_GLOBAL_LOCK
	net_lock();
	long r = fn(args);
	net_unlock();
	return r;
#else
	return handoff_call(fn, args);
#endif
}

#if SW_SMP_NET_CORE
/* With a second CPU, hand it the network (its loop, the device's interrupt)
 * and the app's calls; with one, wait on net_source here. */
void net_core_start(const struct wait_source *net_source);
#endif

/* Once the network is up (sock_net_start, on the boot CPU): where its loop
 * runs, here or on a CPU of its own. */
static inline void net_loop_start(const struct wait_source *net_source)
{
#if SW_SMP_GLOBAL_LOCK
	net_lock_start(net_source);
#elif SW_SMP_NET_CORE
	net_core_start(net_source);
#else
	executor_set_source(net_source);
#endif
}

#endif
