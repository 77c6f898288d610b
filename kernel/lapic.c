/*
 * lapic.c: the local APIC: enabled in xAPIC (MMIO) mode, then under KVM
 * switched to x2APIC (MSRs) where the CPU has it; spurious vector set,
 * end-of-interrupt (KVM's paravirtual one where offered), and its timer in
 * one-shot mode, calibrated against the TSC. Every CPU has its own local
 * APIC at the same address; an AP's is set up the way the boot CPU's is by
 * then (lapic_init_ap): the same mode, timer rate and EOI. Interrupts to
 * other CPUs (IPIs) go through the interrupt command register: lapic_send_ipi.
 */
#include "arch.h"
#include "clock.h"
#include "cpu.h"
#include "kernel.h"
#include "percpu.h"

#define MSR_APIC_BASE   0x1b
#define APIC_ENABLE     (1ULL << 11)
#define APIC_X2APIC     (1ULL << 10)
#define MSR_X2APIC_BASE 0x800      /* register at MMIO offset R: MSR 0x800 + R / 16 */
#define MSR_X2APIC_ICR  0x830      /* the ICR's two halves as one 64-bit MSR */
#define REG_ID          0x020
#define REG_TPR         0x080
#define REG_EOI         0x0b0
#define REG_SVR         0x0f0
#define REG_LVT_TIMER   0x320
#define REG_TIMER_INIT  0x380
#define REG_TIMER_COUNT 0x390
#define REG_TIMER_DIV   0x3e0
#define REG_ICR_LOW     0x300
#define REG_ICR_HIGH    0x310      /* xAPIC: the destination's APIC ID in bits 24-31 */
#define ICR_SELF        (1u << 18) /* destination shorthand: this CPU */
#define ICR_PENDING     (1u << 12) /* xAPIC delivery status: the last IPI not sent yet */
#define LVT_MASKED      (1u << 16)
#define DIV_BY_16       0x3
#define DIV_BY_1        0xb

static volatile uint32_t *lapic;
static uint64_t timer_hz; /* LAPIC timer ticks per second after the divider */
static bool x2apic;       /* registers are MSRs (x2APIC mode), not MMIO */

/* Under KVM an xAPIC access is an MMIO exit whose instruction KVM must
 * fetch and decode; an x2APIC access is an MSR exit, which it reads off the
 * exit itself. The number of exits is the same. */
static inline uint32_t rd(uint32_t reg)
{
	return x2apic ? (uint32_t)rdmsr(MSR_X2APIC_BASE + reg / 16) : lapic[reg / 4];
}
static inline void wr(uint32_t reg, uint32_t v)
{
	if (x2apic)
		wrmsr(MSR_X2APIC_BASE + reg / 16, v);
	else
		lapic[reg / 4] = v;
}

/*
 * Under KVM a write to the EOI register is an exit. With KVM's paravirtual
 * EOI (CPUID 0x40000001 feature 6), KVM sets bit 0 of a word we register
 * when it injects an interrupt whose end it can see to itself; the handler
 * then clears the bit instead of writing the register, and KVM completes
 * the EOI at its next exit. KVM touches the word only while this vCPU is
 * out of the guest, but that can be between any two of our instructions:
 * at an exit that finds the bit still set KVM clears it itself and expects
 * the register write after all. So the test and the clear must be one
 * instruction (BTR): a load, then a store, with an exit between them, would
 * skip the write KVM now waits for, leave the vector in service, and block
 * every interrupt of its priority and below for good.
 */
#define MSR_KVM_PV_EOI_EN  0x4b564d04
#define KVM_FEATURE_PV_EOI 6

static bool pv_eoi_on; /* every CPU registers its word (percpu.pv_eoi_word) */

uint32_t lapic_id(void) { return x2apic ? rd(REG_ID) : rd(REG_ID) >> 24; }
uint64_t lapic_timer_hz(void) { return timer_hz; }

/* Clears the paravirtual EOI bit; true when it was set. One instruction. */
static inline bool pv_eoi_take(void)
{
	bool was_set;
	__asm__ volatile("btrl $0, %0" : "+m"(this_cpu()->pv_eoi_word), "=@ccc"(was_set) : : "memory");
	return was_set;
}

void lapic_eoi(void)
{
	if (pv_eoi_on && pv_eoi_take()) {
		cpu_stats()->eoi_paravirtual++;
		return;
	}
	cpu_stats()->eoi_writes++;
	wr(REG_EOI, 0);
}

/* After the command line, under KVM: x2APIC mode where the CPU has it
 * (kernel option x2apic=0 keeps xAPIC; the registers keep their values
 * across the switch), and the paravirtual EOI where KVM offers it (pv_eoi=0
 * keeps the register write). The word's address is its physical one (RAM is
 * identity-mapped). */
void lapic_paravirt_init(void)
{
	uint32_t r[4];
	if (cpu_hypervisor() != HYPERVISOR_KVM)
		return;
	cpuid(1, 0, r);
	if ((r[2] >> 21) & 1 && kopt_number(KOPT_X2APIC)) {
		uint64_t irq = irq_save();
		wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_ENABLE | APIC_X2APIC);
		x2apic = true;
		irq_restore(irq);
	}
	if ((cpu_kvm_features() & (1u << KVM_FEATURE_PV_EOI)) && kopt_number(KOPT_PV_EOI)) {
		wrmsr(MSR_KVM_PV_EOI_EN, (uint64_t)(uintptr_t)&this_cpu_ptr()->pv_eoi_word | 1);
		pv_eoi_on = true;
	}
}

bool lapic_pv_eoi(void) { return pv_eoi_on; }
bool lapic_x2apic(void) { return x2apic; }

/* An interrupt to this CPU on `vector` (fixed, edge): what the cost image
 * measures an interrupt's delivery and end with. QEMU's and KVM's APICs
 * deliver it within the write (no delivery-status wait). */
void lapic_self_ipi(uint8_t vector)
{
	if (x2apic)
		wrmsr(MSR_X2APIC_ICR, ICR_SELF | vector);
	else
		wr(REG_ICR_LOW, ICR_SELF | vector);
}

/*
 * An interrupt to the CPU whose APIC ID is apic_id; icr_low is the command's
 * low word (vector and delivery mode: fixed, INIT, STARTUP). In x2APIC mode
 * it is one MSR write, which is not serializing: a fence first makes the
 * stores before it (a mailbox's call) visible before the IPI can land. In
 * xAPIC mode the two halves are two writes that an interrupt handler's own
 * IPI must not split, and an xAPIC still sending the last IPI (its delivery
 * status) may drop a new one, so it is waited for: QEMU's and KVM's APICs
 * send within the write, hardware within microseconds; after ~1 ms the IPI
 * goes anyway and false says so.
 */
bool lapic_send_ipi(uint32_t apic_id, uint32_t icr_low)
{
	if (x2apic) {
		__asm__ volatile("mfence" ::: "memory");
		wrmsr(MSR_X2APIC_ICR, ((uint64_t)apic_id << 32) | icr_low);
		return true;
	}
	uint64_t flags = irq_save();
	bool idle = true;
	if (rd(REG_ICR_LOW) & ICR_PENDING) {
		uint64_t t0 = rdtsc(), limit = clock_tsc_hz() / 1000;
		while ((idle = !(rd(REG_ICR_LOW) & ICR_PENDING)) == false && rdtsc() - t0 < limit)
			cpu_relax();
	}
	wr(REG_ICR_HIGH, apic_id << 24);
	wr(REG_ICR_LOW, icr_low);
	irq_restore(flags);
	return idle;
}

/*
 * KVM's local APIC counts its timer at a fixed 1 GHz before the divider (an
 * APIC bus cycle of 1 ns), and so does QEMU's own under TCG. Under KVM, with
 * the TSC's rate read from KVM (kvmclock) or CPUID rather than measured, that
 * rate is taken as given: both clocks run on the host's, and calibrating
 * would spin ~5 ms of a boot that otherwise takes well under one. Elsewhere
 * the timer is measured against the TSC, whose rate may be a calibration's,
 * so that a deadline read by the TSC is met by the timer.
 */
#define KVM_APIC_BUS_HZ 1000000000ULL
/* Under TCG, with the TSC's rate measured against this very timer
 * (clock=lapic), the timer's own rate is its nominal one and needs no
 * measuring; it is taken a part in TCG_TIMER_LATE_PART faster, so that a
 * one-shot fires a little after its deadline, never before it (a wake that
 * finds nothing due and parks again): the calibration's rounds agree to a
 * few parts per million, but the host may slew its monotonic clock, which
 * QEMU's timer follows and the TSC does not, by up to 500. */
#define TCG_APIC_BUS_HZ 1000000000ULL
#define TCG_TIMER_LATE_PART 2048

/* The timer's ticks per second after the divider, against the TSC: it counts
 * down from the maximum for ~5 ms. The TSC is read after the timer starts and
 * before its count is read, so the timer counted over at least the TSC's
 * span: the rate errs high, and a one-shot fires at or after its deadline.
 * Early, the wake would find nothing due and park again: a wake for nothing
 * every long park (read the other way round, the two register accesses'
 * time, long under TCG, made the rate err low and every long park end
 * early). */
static uint64_t calibrate_timer(void)
{
	uint64_t tsc_hz = clock_tsc_hz();
	wr(REG_TIMER_INIT, 0xffffffff);
	uint64_t t0 = rdtsc();
	while (rdtsc() - t0 < tsc_hz / 200)
		cpu_relax();
	uint64_t tsc_elapsed = rdtsc() - t0;
	uint32_t elapsed = 0xffffffff - rd(REG_TIMER_COUNT);
	wr(REG_TIMER_INIT, 0);
	return (uint64_t)elapsed * tsc_hz / tsc_elapsed;
}

/* The local APIC enabled (xAPIC mode) and its registers mapped. */
static void enable_xapic(void)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);
	wrmsr(MSR_APIC_BASE, base | APIC_ENABLE);
	lapic = mmio_map(base & ~0xfffULL, 4096);
}

/*
 * The timer as a reference clock for the TSC (clock_sources.c, `clock=lapic`):
 * masked, undivided, counting down from the maximum. Under QEMU's TCG it
 * counts QEMU's virtual clock, the host's monotonic time, at a fixed 1 GHz:
 * a nanosecond counter that a read reaches without a port access, so a
 * calibration against it needs far fewer milliseconds than the PIT's
 * 0.84 us ticks. Called before lapic_init(), which sets the timer up anew.
 */
void lapic_reference_start(void)
{
	enable_xapic();
	wr(REG_LVT_TIMER, LVT_MASKED | IRQ_VECTOR_TIMER);
	wr(REG_TIMER_DIV, DIV_BY_1);
	wr(REG_TIMER_INIT, 0xffffffff);
}
uint32_t lapic_reference_count(void) { return rd(REG_TIMER_COUNT); }
void lapic_reference_stop(void) { wr(REG_TIMER_INIT, 0); }

void lapic_init(void)
{
	enable_xapic();
	wr(REG_TPR, 0);
	wr(REG_SVR, 0x100 | IRQ_VECTOR_SPURIOUS);

	wr(REG_TIMER_DIV, DIV_BY_16);
	wr(REG_LVT_TIMER, LVT_MASKED | IRQ_VECTOR_TIMER);
	if (cpu_hypervisor() == HYPERVISOR_KVM && clock_rate_given())
		timer_hz = KVM_APIC_BUS_HZ / 16;
	else if (clock_rate_from_lapic())
		timer_hz = TCG_APIC_BUS_HZ / 16 + TCG_APIC_BUS_HZ / 16 / TCG_TIMER_LATE_PART;
	else
		timer_hz = calibrate_timer();
	if (timer_hz == 0) {
		/* A machine without a working LAPIC timer has no clock to park on:
		 * refused as a missing clock is, not as a kernel fault. */
		kprintf("kernel: no clock: the local APIC's timer does not count\n");
		kernel_exit(KERNEL_NO_CLOCK_STATUS);
	}
	wr(REG_LVT_TIMER, IRQ_VECTOR_TIMER); /* one-shot, unmasked */
}

/*
 * An AP's local APIC, the way the boot CPU's is by now: enabled (after INIT
 * it keeps its base register, enabled, in xAPIC mode), switched to x2APIC
 * where the boot CPU's was (xAPIC first, then x2APIC: the one transition
 * the CPU allows from there), the same spurious vector and timer divider,
 * the one-shot unmasked but idle (no count: an AP with nothing to do takes
 * no timer interrupts), and KVM's paravirtual EOI registered for this vCPU
 * where the boot CPU uses it. False when the base differs from the boot
 * CPU's (its registers would not be where lapic points).
 */
bool lapic_init_ap(void)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);
	if (!x2apic && (base & ~0xfffULL) != (uint64_t)(uintptr_t)lapic)
		return false;
	wrmsr(MSR_APIC_BASE, base | APIC_ENABLE);
	if (x2apic)
		wrmsr(MSR_APIC_BASE, base | APIC_ENABLE | APIC_X2APIC);
	wr(REG_TPR, 0);
	wr(REG_SVR, 0x100 | IRQ_VECTOR_SPURIOUS);
	wr(REG_TIMER_DIV, DIV_BY_16);
	wr(REG_TIMER_INIT, 0);
	wr(REG_LVT_TIMER, IRQ_VECTOR_TIMER);
	if (pv_eoi_on)
		wrmsr(MSR_KVM_PV_EOI_EN, (uint64_t)(uintptr_t)&this_cpu_ptr()->pv_eoi_word | 1);
	return true;
}

void lapic_timer_arm(uint64_t deadline_ns)
{
	uint64_t now = clock_ns();
	uint64_t delta = deadline_ns > now ? deadline_ns - now : 0;
	uint64_t ticks = (uint64_t)(((unsigned __int128)delta * timer_hz) / NSEC_PER_SEC);
	if (ticks == 0)
		ticks = 1;
	if (ticks > 0xffffffff)
		ticks = 0xffffffff; /* fires early; the waiter re-arms */
	wr(REG_TIMER_INIT, (uint32_t)ticks);
}
