/*
 * stats.h: the kernel's event counters. Plain increments (one CPU; interrupt
 * handlers only touch counters the thread never writes). Printed at shutdown.
 */
#ifndef STATS_H
#define STATS_H

#include <stdint.h>

struct kstats {
	uint64_t interrupts;            /* every vector but spurious */
	uint64_t interrupts_unexpected; /* a vector nobody registered */
	uint64_t timer_interrupts;      /* LAPIC timer fired */
	uint64_t timer_reloads;         /* LAPIC one-shot programmed */
	uint64_t timer_reloads_skipped; /* it already held that deadline */
	uint64_t parks;                 /* halts waiting for an interrupt */
	uint64_t timers_run;            /* timer callbacks run */
};

extern struct kstats stats;
void stats_print(void);

#endif
