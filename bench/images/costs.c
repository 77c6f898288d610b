/*
 * costs: the price of each primitive the design trades, measured from inside
 * the guest with the TSC, under whatever runs it (TCG, KVM). `make
 * bench-costs` boots it under QEMU 7.2 and 10's TCG and nested KVM and
 * tabulates what it prints (docs/kvm.md).
 *
 *   costs [ROUNDS]      each primitive ROUNDS times (default 2000)
 *
 * Prints one line per primitive,
 *   cost: NAME NS ns (CYCLES cycles) over N
 * the median of 5 batches of N/5, then "costs: done". The primitives:
 *   notify       a virtio notify: the MMIO write to the receive queue's
 *                doorbell (an ioeventfd under KVM, handled in its kernel)
 *   devread      a read of a virtio register (QEMU's user space under KVM)
 *   pio          an OUT to an unassigned port (QEMU's user space)
 *   ipi          an interrupt to this CPU (LAPIC ICR write), delivered and
 *                ended (EOI: a write, or KVM's paravirtual one)
 *   hlt-wake     arm the one-shot 1 tick out, HLT, wake on its interrupt
 *   timer-arm    a write of the one-shot's count (TMICT)
 *   pause        one PAUSE
 *   cpuid        one CPUID (leaf 0)
 *   rdtsc        one RDTSC
 *   mfence       one MFENCE
 *   copy-R-N     one copy of N bytes (1460: a segment's payload; 16384) by
 *                the data path's copy routine R (net/copy.c: libc, words,
 *                movsb), between buffers the copy before left in the cache
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "drivers/virtio/virtio.h"
#include "drivers/virtio/vnet_internal.h"
#include "kernel/arch.h"
#include "kernel/clock.h"
#include "kernel/kernel.h"
#include "net/net_internal.h"

#define BATCHES 5
#define UNUSED_PORT 0x80 /* POST diagnostics: QEMU swallows writes */

static volatile uint64_t ipis;
static int ipi_vector;
static uint32_t cpuid_out[4];

static void on_ipi(void *arg) { (void)arg, ipis++; }

/* ---- the primitives, each once ------------------------------------------------- */

static void op_notify(void) { virtio_notify(&vnet_dev.rx.vq); }
static void op_devread(void) { virtio_barrier(&vnet_dev.vd); }
static void op_pio(void) { outb(UNUSED_PORT, 0); }
static void op_pause(void) { cpu_relax(); }
static void op_cpuid(void) { cpuid(0, 0, cpuid_out); }
static void op_rdtsc(void) { (void)rdtsc(); }
static void op_mfence(void) { __asm__ volatile("mfence" ::: "memory"); }
static void op_timer_arm(void) { lapic_timer_arm(clock_ns() + 60 * NSEC_PER_SEC); }

static void op_ipi(void)
{
	uint64_t before = ipis;
	lapic_self_ipi((uint8_t)ipi_vector);
	while (ipis == before)
		cpu_relax();
}

#define COPY_MAX 16384
static uint8_t copy_from[COPY_MAX], copy_to[COPY_MAX + 8];

/* The destination one byte off alignment, as a payload behind a 14-byte
 * Ethernet header lands. */
static void op_copy_segment(void) { net_copy(copy_to + 1, copy_from, 1460); }
static void op_copy_16k(void) { net_copy(copy_to, copy_from, COPY_MAX); }

static void op_hlt_wake(void)
{
	irq_disable();
	lapic_timer_arm(clock_ns()); /* one tick: it fires at once */
	irq_enable_and_halt();
}

static const struct primitive {
	const char *name;
	void (*op)(void);
} primitives[] = {
	{ "notify", op_notify },       { "devread", op_devread }, { "pio", op_pio },
	{ "ipi", op_ipi },             { "hlt-wake", op_hlt_wake }, { "timer-arm", op_timer_arm },
	{ "pause", op_pause },         { "cpuid", op_cpuid },     { "rdtsc", op_rdtsc },
	{ "mfence", op_mfence },
};

static const char *const copy_routines[] = { "libc", "words", "movsb" };
static const struct primitive copies[] = { { "1460", op_copy_segment }, { "16384", op_copy_16k } };

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void measure(const char *prefix, const struct primitive *p, int rounds)
{
	uint64_t per[BATCHES], hz = clock_tsc_hz();
	int n = rounds / BATCHES > 0 ? rounds / BATCHES : 1;
	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = rdtsc();
		for (int i = 0; i < n; i++)
			p->op();
		per[b] = (rdtsc() - t0) / (uint64_t)n;
	}
	qsort(per, BATCHES, sizeof per[0], cmp_u64);
	uint64_t cycles = per[BATCHES / 2];
	printf("cost: %s%s %lu ns (%lu cycles) over %d\n", prefix, p->name,
	       (unsigned long)(cycles * NSEC_PER_SEC / hz), (unsigned long)cycles, n * BATCHES);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	if (rounds < BATCHES) {
		fprintf(stderr, "usage: costs [ROUNDS >= %d]\n", BATCHES);
		return 64;
	}
	if (vnet_init() < 0)
		return 1;
	ipi_vector = irq_alloc(on_ipi, NULL);
	if (ipi_vector < 0)
		return 1;
	printf("costs: hypervisor %s, TSC %lu MHz, x2APIC %s, paravirtual EOI %s\n", cpu_hypervisor_name(cpu_hypervisor()),
	       (unsigned long)(clock_tsc_hz() / 1000000), lapic_x2apic() ? "on" : "off", lapic_pv_eoi() ? "on" : "off");
	for (size_t i = 0; i < sizeof primitives / sizeof primitives[0]; i++)
		measure("", &primitives[i], rounds);
	for (size_t r = 0; r < sizeof copy_routines / sizeof copy_routines[0]; r++) {
		char prefix[24];
		snprintf(prefix, sizeof prefix, "copy-%s-", copy_routines[r]);
		net_copy_choose(copy_routines[r]);
		for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++)
			measure(prefix, &copies[i], rounds);
	}
	printf("costs: done\n");
	return 0;
}
