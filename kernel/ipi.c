/*
 * ipi.c: interrupts between CPUs and what they carry (see smp.h).
 *
 * Two fixed vectors. IRQ_VECTOR_WAKE does nothing but end the target's park:
 * the waker first makes visible whatever the target is to find, then sends
 * it; the target looks with interrupts off before it halts (cpu_park, the
 * idle loop), so a wake that lands between the look and the HLT is held
 * pending and ends the HLT at once. IRQ_VECTOR_CALL runs the function in the
 * target's mailbox (percpu.h) in its interrupt handler: the sender takes the
 * mailbox's lock, posts fn and arg, bumps `posted`, sends the IPI and spins
 * until `done` equals it. A target that never answers is marked lost and its
 * lock stays held: a late answer then writes only into its own mailbox.
 *
 * An AP's idle loop parks with HLT and interrupts on and nothing armed: an
 * idle AP costs the host nothing until an interrupt comes.
 *
 * Counters, per CPU (stats.h): IPIs sent and received, wakes sent, calls
 * run, the PAUSEs of a call's wait and the pause-loop exits a KVM host would
 * take for them (ple.h: a wait is one run of PAUSEs), the idle loop's parks;
 * smp_print_stats prints them, with the executor's spins and the locks'
 * waits on the same CPU, so that a benchmark can read each CPU's share.
 */
#include <errno.h>
#include "arch.h"
#include "clock.h"
#include "cpu.h"
#include "kernel.h"
#include "percpu.h"
#include "smp.h"

#define ICR_FIXED  0x000       /* delivery mode: fixed */
#define ICR_ASSERT (1u << 14)  /* level: assert (the SDM's value for every mode but INIT de-assert) */
#define RFLAGS_IF  (1u << 9)

static struct percpu *running(uint32_t cpu)
{
	if (cpu >= SMP_MAX_CPUS || !percpu_of[cpu] || percpu_of[cpu]->state != CPU_ONLINE)
		return NULL;
	return percpu_of[cpu];
}

void smp_send_ipi(uint32_t cpu, uint8_t vector)
{
	KCHECK(cpu < SMP_MAX_CPUS && percpu_of[cpu]);
	lapic_send_ipi(percpu_of[cpu]->apic_id, ICR_ASSERT | ICR_FIXED | vector);
	cpu_stats()->ipis_sent++;
}

void smp_wake(uint32_t cpu)
{
	if (running(cpu)) {
		smp_send_ipi(cpu, IRQ_VECTOR_WAKE);
		cpu_stats()->wakes_sent++;
	}
}

/* A call's wait ended after `pauses` PAUSEs over `cycles` TSC cycles: one
 * run of PAUSEs, priced as the executor's spins are (ple.h). */
static void account_call_wait(uint64_t pauses, uint64_t cycles)
{
	uint64_t amd, intel;
	ple_spin(&this_cpu_ptr()->ple, pauses, cycles, &amd, &intel);
	cpu_stats()->call_pauses += pauses;
	cpu_stats()->call_ple_amd += amd;
	cpu_stats()->call_ple_intel += intel;
}

static void wake_interrupt(void *arg)
{
	(void)arg;
	cpu_stats()->ipis_received++;
}

/* The call posted in this CPU's mailbox, if one waits. */
static void call_interrupt(void *arg)
{
	(void)arg;
	cpu_stats()->ipis_received++;
	struct smp_mailbox *mb = &this_cpu_ptr()->mailbox;
	uint32_t posted = __atomic_load_n(&mb->posted, __ATOMIC_ACQUIRE);
	if (posted == mb->done)
		return; /* answered already (a late second IPI) */
	mb->result = mb->fn(mb->arg);
	__atomic_store_n(&mb->done, posted, __ATOMIC_RELEASE);
	cpu_stats()->calls_run++;
}

void smp_ipi_init(void)
{
	if (irq_bind(IRQ_VECTOR_WAKE, wake_interrupt, NULL) < 0 ||
	    irq_bind(IRQ_VECTOR_CALL, call_interrupt, NULL) < 0)
		panic("the IPI vectors are taken");
}

int smp_call(uint32_t cpu, uint64_t (*fn)(uint64_t arg), uint64_t arg, uint64_t *result)
{
	struct percpu *p = running(cpu);
	if (!p)
		return -ENXIO;
	if (cpu == cpu_id()) {
		*result = fn(arg);
		return 0;
	}
	uint64_t flags;
	__asm__ volatile("pushfq; popq %0" : "=r"(flags));
	KCHECK(flags & RFLAGS_IF); /* with interrupts off, two CPUs calling each other would wait for ever */
	struct smp_mailbox *mb = &p->mailbox;
	spin_lock(&mb->lock);
	if (p->state != CPU_ONLINE) {
		spin_unlock(&mb->lock);
		return -ENXIO;
	}
	mb->fn = fn;
	mb->arg = arg;
	uint32_t seq = mb->posted + 1;
	__atomic_store_n(&mb->posted, seq, __ATOMIC_RELEASE);
	smp_send_ipi(cpu, IRQ_VECTOR_CALL);
	uint64_t t0 = clock_ns(), c0 = cpu_cycles(), pauses = 0;
	while (__atomic_load_n(&mb->done, __ATOMIC_ACQUIRE) != seq) {
		cpu_relax();
		pauses++;
		if ((pauses & 1023) == 0 && clock_ns() - t0 > SMP_CALL_TIMEOUT_NS) {
			account_call_wait(pauses, cpu_cycles() - c0);
			p->state = CPU_LOST; /* its mailbox stays locked: never posted to again */
			__atomic_sub_fetch(&smp_cpus_online, 1, __ATOMIC_RELAXED);
			kprintf("kernel: smp: CPU %u (APIC ID %u) did not answer a call within %llu ms; "
				"taken for lost\n", cpu, p->apic_id, SMP_CALL_TIMEOUT_NS / 1000000);
			return -ETIMEDOUT;
		}
	}
	account_call_wait(pauses, cpu_cycles() - c0);
	*result = mb->result;
	spin_unlock(&mb->lock);
	return 0;
}

bool smp_run_on(uint32_t cpu, void (*fn)(void))
{
	struct percpu *p = running(cpu);
	if (!p || cpu == 0)
		return false;
	void (*none)(void) = NULL;
	if (!__atomic_compare_exchange_n(&p->run, &none, fn, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return false;
	smp_wake(cpu);
	return true;
}

void smp_idle(void)
{
	for (;;) {
		irq_disable();
		void (*fn)(void) = __atomic_exchange_n(&this_cpu_ptr()->run, NULL, __ATOMIC_ACQUIRE);
		if (fn) {
			irq_enable();
			fn();
			continue;
		}
		cpu_stats()->idle_parks++;
		ple_reset(&this_cpu_ptr()->ple); /* a halted vCPU's filters start again (ple.h) */
		irq_enable_and_halt(); /* the interrupt's handler has run when this returns */
	}
}

void smp_print_stats(void)
{
	if (smp_cpus_known < 2)
		return;
	for (uint32_t n = 0; n < smp_cpus_known && n < SMP_MAX_CPUS; n++) {
		const struct percpu *p = percpu_of[n];
		if (!p)
			continue;
		const struct kstats *s = &p->stats;
		kprintf("kernel: cpu %u (APIC ID %u, %s): interrupts %lu (timer %lu); eoi writes %lu "
			"(paravirtual %lu); ipis sent %lu, received %lu; calls run %lu; idle parks %lu; "
			"pauses: lock %lu, call %lu\n",
			n, p->apic_id, p->state == CPU_ONLINE ? "online" : p->state == CPU_LOST ? "lost" : "not started",
			s->interrupts, s->timer_interrupts, s->eoi_writes, s->eoi_paravirtual, s->ipis_sent,
			s->ipis_received, s->calls_run, s->idle_parks, s->lock_pauses, s->call_pauses);
		/* A line of its own: with the one above, 20 counters of up to 20
		 * digits would not fit kprintf's 512 bytes. */
		kprintf("kernel: cpu %u spins: parks %lu; wakes sent %lu; spin pauses %lu; "
			"pause-loop exits estimated amd: spin %lu, lock %lu, call %lu; "
			"pause-loop exits estimated intel: spin %lu, lock %lu, call %lu\n",
			n, s->parks, s->wakes_sent, s->spin_pauses, s->ple_exits_amd, s->lock_ple_amd,
			s->call_ple_amd, s->ple_exits_intel, s->lock_ple_intel, s->call_ple_intel);
	}
	spinlock_print_all();
}
