/*
 * handoff.h: the application's calls run on another CPU (the network core,
 * switch SW_SMP_NET_CORE). One CPU serves: it owns a subsystem (lwIP, the
 * driver, the socket layer) and waits on that subsystem's source; the app's
 * CPU hands it each call through a single-producer single-consumer ring and
 * waits for the answer on a second one. Nothing on the way takes a lock.
 */
#ifndef HANDOFF_H
#define HANDOFF_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel.h"
#include "switches.h"

/* A call: its arguments packed as words, its result one word. */
typedef long (*handoff_fn)(const long *args);

#if SW_SMP_NET_CORE

/* A CPU serves the app's calls: handoff_call ships them there. */
bool handoff_serving(void);
/* fn(args) on the serving CPU, this CPU waiting for the answer; on the
 * serving CPU itself, or before one serves, fn(args) here. A signal posted
 * while the call waits on the serving CPU ends that wait (handoff_block_on);
 * the app's CPU then runs the handler and ships the call again when it had
 * done nothing (a negative result), as a wait under SA_RESTART goes on, or,
 * for a wait that signals interrupt (poll), returns its EINTR. */
long handoff_call(handoff_fn fn, const long *args);
/* A wait inside a call (block_on, or block_on_intr when intr): on the
 * serving CPU it also ends with -EINTR when the app's CPU relays a signal,
 * having marked the call interrupted; elsewhere it is block_on itself. */
int handoff_block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns, bool intr);
/* Start serving on CPU cpu: it runs first(), then waits on source (and the
 * ring) for ever; the app's CPU waits on the answers. False when cpu is not
 * running (the calls then run where they are made). */
bool handoff_start(uint32_t cpu, const struct wait_source *source, void (*first)(void));

#else

/* Without the switch every call runs where it is made: not one instruction
 * more than calling fn. */
static inline bool handoff_serving(void) { return false; }
static inline long handoff_call(handoff_fn fn, const long *args) { return fn(args); }
static inline int handoff_block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns, bool intr)
{
	return intr ? block_on_intr(ready, ctx, deadline_ns) : block_on(ready, ctx, deadline_ns);
}

#endif

#endif
