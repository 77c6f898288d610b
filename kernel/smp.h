/*
 * smp.h: more than one CPU. smp_init (smp.c) finds the machine's CPUs and
 * starts the APs, each parked in its idle loop with nothing ticking; ipi.c
 * sends them interrupts: a wake that ends a park, and a call that runs a
 * function on a chosen CPU and brings its result back. What the CPUs share
 * and who guards it: docs/design/smp.md.
 */
#ifndef SMP_H
#define SMP_H

#include <stdbool.h>
#include <stdint.h>
#include "boot/bootinfo.h"

/* Boot, on the boot CPU after the local APIC and its mode (x2APIC under
 * KVM) are set: the CPUs the firmware lists (the MADT, else the MP table),
 * up to kernel option smp=, started and checked with a call each. ebda:
 * where the EBDA begins (0: unknown). */
void smp_init(const struct bootinfo *bi, uint64_t ebda);

/* A fixed-vector IPI to CPU cpu (counted as sent here, received there). */
void smp_send_ipi(uint32_t cpu, uint8_t vector);
/* Ends CPU cpu's park, if it is parked (an IPI on IRQ_VECTOR_WAKE, whose
 * handler does nothing): whatever it waits for must be visible before. */
void smp_wake(uint32_t cpu);
/* Runs fn(arg) on CPU cpu, in its interrupt handler (interrupts off there:
 * fn must be short and must not wait), and waits for it: 0 with fn's
 * return value in *result; -ENXIO when that CPU is not running; -ETIMEDOUT
 * when it did not answer within SMP_CALL_TIMEOUT_NS, after which it is
 * taken for lost and never called again. On this CPU, fn runs at once.
 * Thread context, interrupts on (two CPUs calling each other both answer). */
int smp_call(uint32_t cpu, uint64_t (*fn)(uint64_t arg), uint64_t arg, uint64_t *result);
#define SMP_CALL_TIMEOUT_NS 1000000000ULL /* 1 s: a vCPU the host descheduled for a while is not lost */
/* Hands fn to CPU cpu's idle loop, which runs it in thread context (a CPU's
 * main loop: the network core of a later design); false when that CPU is
 * not running or already has one. */
bool smp_run_on(uint32_t cpu, void (*fn)(void));

/* Binds the IPI vectors' handlers (smp_init, once CPUs are to be started). */
void smp_ipi_init(void);
/* An AP's loop once it is up: parked (HLT, interrupts on) until an
 * interrupt, running what smp_run_on handed it. Never returns. */
__attribute__((noreturn)) void smp_idle(void);
/* One line per CPU (and the locks' line) when more than one was started:
 * stats_print's part. */
void smp_print_stats(void);

#endif
