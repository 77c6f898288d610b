/*
 * stats.h: the kernel's event counters, one set per CPU (percpu.h:
 * cpu_stats()->parks++), so that each is a plain increment by the one CPU
 * that owns it (interrupt handlers only touch counters their CPU's thread
 * never writes). Printed at shutdown: the boot CPU's on the lines they have
 * always had, each other CPU's on a line of its own.
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
	uint64_t ipis_sent;             /* interrupts this CPU sent to another (calls, wakes) */
	uint64_t ipis_received;         /* ... that reached this one (IRQ_VECTOR_CALL, IRQ_VECTOR_WAKE) */
	uint64_t calls_run;             /* cross-CPU calls this CPU ran for another */
	uint64_t wakes_sent;            /* wake IPIs this CPU sent to end another's park (smp_wake) */
	uint64_t idle_parks;            /* halts of an AP's idle loop */
	uint64_t lock_pauses;           /* PAUSEs this CPU spun waiting for a spinlock */
	uint64_t call_pauses;           /* PAUSEs this CPU spun waiting for a call's answer */
	uint64_t spin_pauses;           /* PAUSEs of the executor's spins and the naive wait's backoff */
	uint64_t ple_exits_amd;         /* pause-loop exits an AMD KVM host would take for them (ple.h) */
	uint64_t ple_exits_intel;       /* ... an Intel one */
	uint64_t lock_ple_amd;          /* pause-loop exits an AMD host would take for lock_pauses */
	uint64_t lock_ple_intel;        /* ... an Intel one */
	uint64_t call_ple_amd;          /* pause-loop exits an AMD host would take for call_pauses */
	uint64_t call_ple_intel;        /* ... an Intel one */
};

void stats_print(void);

#endif
