/*
 * cpu.h: processor set-up (GDT, TSS, IDT, SSE) and the trap frame that the
 * interrupt entry code builds.
 */
#ifndef CPU_H
#define CPU_H

#include <stdint.h>

/* Laid out by isr_common: registers in reverse push order, then the stub's
 * vector and error code, then what the CPU pushed. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector; /* interrupt vector number */
	uint64_t error;  /* the CPU's error code, or 0 */
	uint64_t rip, cs, rflags, rsp, ss;
};

#define IRQ_VECTOR_TIMER    0x20 /* LAPIC timer */
#define IRQ_VECTOR_FIRST    0x30 /* first vector irq_alloc hands out */
#define IRQ_VECTOR_SPURIOUS 0xff

void cpu_init(void);
/* One line (the `verbose` option): brand, hypervisor, optional features. */
void cpu_print_info(void);
void trap_dispatch(struct trap_frame *f);
void lapic_eoi(void);
void timer_interrupt(void);

#endif
