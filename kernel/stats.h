/*
 * stats.h: the kernel's event counters. Plain increments (one CPU; interrupt
 * handlers only touch counters the thread never writes). Printed at shutdown.
 */
#ifndef STATS_H
#define STATS_H

#include <stdint.h>
#include "kernel.h"

struct kstats {
	uint64_t interrupts;            /* every vector but spurious */
	uint64_t interrupts_unexpected; /* a vector nobody registered */
	uint64_t timer_interrupts;      /* LAPIC timer fired */
	uint64_t eoi_writes;            /* ends of interrupt written to the LAPIC (an exit under KVM) */
	uint64_t eoi_paravirtual;       /* ends of interrupt left to KVM (paravirtual EOI): no write */
	uint64_t timer_reloads;         /* LAPIC one-shot programmed */
	uint64_t timer_reloads_skipped; /* it already held that deadline */
	uint64_t parks;                 /* halts waiting for an interrupt */
	uint64_t timers_run;            /* timer callbacks run */
	uint64_t waits;                 /* block_on calls */
	uint64_t wait_polls;            /* source polls from wait loops */
	uint64_t wait_polls_idle;       /* ... that found nothing to do */
	uint64_t spins;                 /* spin-loop turns (naive: backoff turns) */
	uint64_t spin_hits;             /* spins that ended because work arrived */
	uint64_t parks_unspun;          /* parks with no spin before: the last park heard nothing from the device */
	uint64_t spin_window_grew;      /* the spin's length doubled after a short wait (spinwin.h) */
	uint64_t spin_window_shrank;    /* ... halved after a long one */
	uint64_t backoff_pauses;        /* PAUSEs of the naive wait's backoff */
	uint64_t fast_wakes;            /* idea-fast-wake: polls right after an interrupt's wake */
	uint64_t arm_rechecks;          /* work found right after re-arming */
	uint64_t exit_drain_polls;      /* source polls at exit, waiting for it to drain */
	uint64_t exit_drain_gave_up;    /* exits that left with the source not drained */
	uint64_t phase_cycles[NPHASES]; /* TSC cycles per enum stats_phase */
};

extern struct kstats stats;
void stats_print(void);

#endif
