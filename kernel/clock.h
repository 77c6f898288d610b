/*
 * clock.h: kernel-internal clock and local-APIC set-up.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdbool.h>
#include <stdint.h>

void clock_init(uint64_t tsc_at_boot);
void lapic_init(void);
void lapic_paravirt_init(void); /* under KVM: x2APIC, and the paravirtual EOI where offered (after the command line) */
bool lapic_pv_eoi(void);         /* the paravirtual EOI is on */
bool lapic_x2apic(void);         /* the APIC is in x2APIC mode */
void lapic_self_ipi(uint8_t vector); /* an interrupt to this CPU */
/* Program the LAPIC one-shot timer to fire at deadline_ns (clock_ns() time). */
void lapic_timer_arm(uint64_t deadline_ns);
uint64_t lapic_timer_hz(void);

#endif
