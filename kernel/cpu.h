/*
 * cpu.h: processor set-up (GDT, TSS, IDT, SSE), each CPU's descriptor
 * tables, and the trap frame that the interrupt entry code builds.
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

/* A task-state segment: in long mode only its stack pointers matter. */
struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];  /* stacks for privilege changes (unused: ring 0 only) */
	uint64_t reserved1;
	uint64_t ist[7];  /* interrupt stacks; ist[0] is IST1 */
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap;   /* offset of the I/O bitmap: none */
} __attribute__((packed));

/* One CPU's descriptor tables: a GDT (null, 64-bit code, data, and its own
 * TSS's 16-byte descriptor) and the TSS, whose IST1 is that CPU's stack for
 * the exceptions that must not run on the interrupted one. The IDT is one
 * for all CPUs. */
struct cpu_tables {
	uint64_t gdt[5]; /* descriptors; selectors 0x08 code, 0x10 data, 0x18 TSS */
	struct tss tss;  /* this CPU's task-state segment */
};

#define IRQ_VECTOR_TIMER    0x20 /* LAPIC timer */
#define IRQ_VECTOR_FIRST    0x30 /* first vector irq_alloc hands out */
#define IRQ_VECTOR_WAKE     0xfc /* IPI: end a park, nothing more (smp.c) */
#define IRQ_VECTOR_CALL     0xfd /* IPI: run the function in this CPU's mailbox (smp.c) */
#define IRQ_VECTOR_ALLOC_END 0xfc /* irq_alloc hands out vectors below this */
#define IRQ_VECTOR_SPURIOUS 0xff

/* The boot CPU: its per-CPU area, tables, the IDT, the PICs off, SSE. */
void cpu_init(void);
/* An AP, on its own stack with its GS base set: its tables (IST1 at
 * ist_top), the shared IDT, SSE's control register. */
void cpu_init_ap(struct cpu_tables *t, uint64_t ist_top);
/* One line (the `verbose` option): brand, hypervisor, optional features. */
void cpu_print_info(void);
void trap_dispatch(struct trap_frame *f);
void lapic_eoi(void);
void timer_interrupt(void);

#endif
