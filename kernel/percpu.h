/*
 * percpu.h: each CPU's own data. Every CPU has one struct percpu, and its GS
 * base points at it (the boot CPU's is set in start.S before any C runs, an
 * AP's first thing in smp_ap_main), so this_cpu()->field is one GS-relative
 * access: `incq %gs:OFFSET` for a counter, the same one instruction a global
 * counter costs. Nothing changes GS after boot: there is no user mode and no
 * SWAPGS.
 *
 * What is here is what each CPU has of its own by nature: its number and
 * APIC ID, its counters, the executor's wait state, its timer heap and what
 * its one-shot holds, KVM's paravirtual EOI word, its descriptor tables and
 * stacks, and the mailbox other CPUs use to make it run a function. What
 * stays global is shared, and docs/design/smp.md names its lock or its one
 * owner (today the boot CPU owns all that the app and the network touch).
 *
 * The host unit tests build executor.c and timer.c too: there this_cpu() is
 * one plain variable, percpu_host, which each such test defines.
 */
#ifndef PERCPU_H
#define PERCPU_H

#include <stdbool.h>
#include <stdint.h>
#include "cpu.h"
#include "ple.h"
#include "spinlock.h"
#include "spinwin.h"
#include "stats.h"
#include "timerq.h"

#define SMP_MAX_CPUS 64 /* CPUs the kernel keeps track of; the firmware's others are left out */

/* Where a CPU is in its life (percpu.state). */
enum cpu_state {
	CPU_ABSENT,   /* not started (or not yet) */
	CPU_STARTING, /* the boot CPU sent INIT-SIPI-SIPI and waits for it */
	CPU_ONLINE,   /* running the kernel: parked in its idle loop or at work */
	CPU_LOST,     /* it stopped answering (a start or a call timed out): never asked again */
};

/* A function another CPU asks this one to run (smp_call, smp.c): one at a
 * time, the sender holding `lock` until the answer comes. */
struct smp_mailbox {
	struct spinlock lock;                 /* held by the one sender whose call is posted */
	uint64_t (*volatile fn)(uint64_t arg); /* what to run */
	volatile uint64_t arg;                /* its argument */
	volatile uint64_t result;             /* what it returned */
	volatile uint32_t posted;             /* bumped by the sender once fn and arg are set */
	volatile uint32_t done;               /* set to posted by this CPU once fn has returned */
};

struct percpu {
	struct percpu *self;        /* this area's own address: this_cpu_ptr() reads it */
	uint32_t cpu;               /* the kernel's number for it: 0 the boot CPU, then in firmware order */
	uint32_t apic_id;           /* its local APIC's ID */
	struct kstats stats;        /* the counters bumped on this CPU */

	/* The executor (executor.c): each CPU waits on a source of its own. */
	const struct wait_source *source; /* what this CPU's waits poll; NULL: none */
	struct spin_window spin;    /* how long its waits spin before they park */
	bool device_quiet;          /* its last park heard nothing from the source */
	bool in_source_poll;        /* the source is being polled: no wait may begin */
	struct ple_model ple;       /* a KVM host's pause filters for this vCPU, as ple.h models them */
	bool signals_held;          /* the app's CPU waits for a call another CPU runs for it: its
				     * signals wait for the answer (handoff.c) */
	uint32_t lent;              /* calls of the app's this CPU is running (handoff.c): while one
				     * runs, what the app owns (the descriptor table) is lent to it */

	/* Timers (timer.c). */
	struct timerq *timers;      /* this CPU's timer heap */
	volatile uint64_t armed_deadline; /* what its LAPIC one-shot holds; 0: nothing */

	/* The local APIC (lapic.c). */
	volatile uint32_t pv_eoi_word; /* KVM's paravirtual EOI bit for this vCPU (4-byte aligned) */

	/* Bring-up and calls (smp.c). */
	volatile uint32_t state;    /* enum cpu_state */
	struct smp_mailbox mailbox; /* calls other CPUs make to this one */
	void (*volatile run)(void); /* what its idle loop is to run next (smp_run_on); NULL: none */
	struct cpu_tables tables;   /* its GDT and TSS */
	uint64_t stack_top;         /* its kernel stack (the boot CPU's: start.S's) */
	uint64_t ist_top;           /* its IST1 stack: double faults, NMIs, machine checks, page faults */
};

#if __STDC_HOSTED__
/* A host unit test: one CPU, a plain variable the test defines. */
extern struct percpu percpu_host;
static inline struct percpu *this_cpu(void) { return &percpu_host; }
#else
/* This CPU's area, as a GS-relative pointer: this_cpu()->stats.parks++ is
 * `addq $1, %gs:OFFSET`. Not to be handed to code that takes a plain
 * pointer: this_cpu_ptr() gives that. */
static inline struct percpu __seg_gs *this_cpu(void) { return (struct percpu __seg_gs *)0; }
#endif

/* This CPU's area as a plain pointer (one load). */
static inline struct percpu *this_cpu_ptr(void) { return this_cpu()->self; }
/* This CPU's counters (kernel/stats.h). */
#if __STDC_HOSTED__
static inline struct kstats *cpu_stats(void) { return &this_cpu()->stats; }
#else
static inline struct kstats __seg_gs *cpu_stats(void) { return &this_cpu()->stats; }
#endif
/* This CPU's number: 0 on the boot CPU. */
static inline uint32_t cpu_id(void) { return this_cpu()->cpu; }
/* The boot CPU runs the app and owns the network, the descriptor table, the
 * heap and the pages (docs/design/smp.md): KASSERT(on_boot_cpu()) where
 * they are entered catches another CPU touching them in debug builds. */
static inline bool on_boot_cpu(void) { return this_cpu()->cpu == 0; }
/* The app's own state may be touched here: on its CPU, or on one running a
 * call it handed over and is waiting for (handoff.c). */
static inline bool acting_for_app(void) { return this_cpu()->cpu == 0 || this_cpu()->lent; }
/* This CPU holds newlib's heap lock (malloc_lock.c, with a design that
 * shares the heap between CPUs). */
bool malloc_lock_held(void);

/* The boot CPU's area (smp.c); start.S points its GS base there. */
extern struct percpu percpu_boot;
/* The boot CPU's timer heap (timer.c); an AP's comes with its area. */
extern struct timerq timer_queue_boot;
/* Every CPU's area by number, NULL where none was started; smp_cpus_online
 * CPUs of smp_cpus_known are running. */
extern struct percpu *percpu_of[SMP_MAX_CPUS];
extern uint32_t smp_cpus_known;
extern volatile uint32_t smp_cpus_online;

/* GS base := p, an AP's area (its first thing; the boot CPU's: start.S). */
void percpu_install(struct percpu *p);

#endif
