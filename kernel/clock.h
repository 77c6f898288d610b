/*
 * clock.h: kernel-internal clock and local-APIC set-up.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* Learns the TSC's rate (the `clock` option's source, or the best there
 * is; the boot is refused with KERNEL_NO_CLOCK_STATUS where none gives
 * one) and the wall-clock time. ebda: where the firmware's memory map puts
 * the EBDA (0: unknown), where ACPI's RSDP may lie. After the command line. */
void clock_init(uint64_t tsc_at_boot, uint64_t ebda);
const char *clock_source_used(void); /* the source's name, as `clock=` writes it */
bool clock_rate_given(void);         /* the TSC's rate was read (CPUID, the hypervisor), not measured */
bool clock_rate_from_lapic(void);    /* it was measured against the local APIC's timer (clock=lapic) */
void lapic_init(void);
void lapic_paravirt_init(void); /* under KVM: x2APIC, and the paravirtual EOI where offered (after the command line) */
bool lapic_pv_eoi(void);         /* the paravirtual EOI is on */
bool lapic_x2apic(void);         /* the APIC is in x2APIC mode */
void lapic_self_ipi(uint8_t vector); /* an interrupt to this CPU */
/* An IPI: icr_low (vector, delivery mode) to the CPU with APIC ID apic_id;
 * false when an xAPIC was still busy with the last one after ~1 ms. */
bool lapic_send_ipi(uint32_t apic_id, uint32_t icr_low);
/* An AP's local APIC set up as the boot CPU's (lapic.c); false when its
 * registers are not where the boot CPU's are. */
bool lapic_init_ap(void);
/* Program the LAPIC one-shot timer to fire at deadline_ns (clock_ns() time). */
void lapic_timer_arm(uint64_t deadline_ns);
uint64_t lapic_timer_hz(void);
/* The local APIC's timer as a free-running reference for clock=lapic:
 * started undivided and masked, read, stopped (before lapic_init). */
void lapic_reference_start(void);
uint32_t lapic_reference_count(void);
void lapic_reference_stop(void);

#endif
