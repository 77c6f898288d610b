/*
 * cpu.c: the processor's own tables. Each CPU has a GDT with 64-bit kernel
 * code and data and a TSS whose IST1 stack catches double faults, NMIs,
 * machine checks and page faults (so a stack overflow still reaches the
 * panic handler); one IDT, shared, points every vector at its isr.S stub;
 * the legacy PICs are masked, and SSE's control register set (start.S
 * enabled SSE: newlib and the compiler use it). (start.S has pointed the
 * boot CPU's GS base at its per-CPU area; an AP's is set in smp.c.) Also
 * what runs us: the hypervisor CPUID leaf (TCG, KVM, another, or none), and
 * the CPU facts the `verbose` line reports. (The loader has already refused a
 * CPU without a feature the kernel needs: loader/cpu.c.)
 */
#include <string.h>
#include "arch.h"
#include "cpu.h"
#include "clock.h"
#include "kernel.h"
#include "percpu.h"

struct idt_entry {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t ist;      /* IST index, 0 = current stack */
	uint8_t type;     /* 0x8e: present, ring 0, interrupt gate */
	uint16_t offset_mid;
	uint32_t offset_hi;
	uint32_t reserved;
} __attribute__((packed));

struct table_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

#define SEL_CODE 0x08
#define SEL_DATA 0x10
#define SEL_TSS  0x18

#define GDT_CODE_64 0x00af9a000000ffff
#define GDT_DATA    0x00cf92000000ffff
#define MSR_GS_BASE 0xc0000101

static struct idt_entry idt[256];
static uint8_t ist1_stack[16384] __attribute__((aligned(16))); /* the boot CPU's */
extern uint64_t isr_stub_table[256];

void percpu_install(struct percpu *p)
{
	wrmsr(MSR_GS_BASE, (uint64_t)p);
}

/* This CPU's GDT and TSS, filled in and loaded; IST1 at ist_top. */
static void gdt_init(struct cpu_tables *t, uint64_t ist_top)
{
	uint64_t base = (uint64_t)&t->tss, limit = sizeof t->tss - 1;
	t->tss.ist[0] = ist_top;
	t->tss.iomap = sizeof t->tss;
	t->gdt[0] = 0;
	t->gdt[1] = GDT_CODE_64;
	t->gdt[2] = GDT_DATA;
	t->gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ULL << 40) |
		    (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	t->gdt[4] = base >> 32;

	struct table_ptr p = { sizeof t->gdt - 1, (uint64_t)t->gdt };
	__asm__ volatile("lgdt %0\n\t"
			 "pushq %1\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "lretq\n"
			 "1:\n\t"
			 "movw %2, %%ax\n\t"
			 "movw %%ax, %%ds\n\t"
			 "movw %%ax, %%es\n\t"
			 "movw %%ax, %%ss\n\t"
			 "ltr %w3"
			 :
			 : "m"(p), "i"(SEL_CODE), "i"(SEL_DATA), "r"(SEL_TSS)
			 : "rax", "memory");
}

static void idt_load(void)
{
	struct table_ptr p = { sizeof idt - 1, (uint64_t)idt };
	__asm__ volatile("lidt %0" : : "m"(p));
}

static void idt_init(void)
{
	for (int v = 0; v < 256; v++) {
		uint64_t a = isr_stub_table[v];
		int on_ist = v == 2 || v == 8 || v == 14 || v == 18; /* NMI, #DF, #PF, #MC */
		idt[v] = (struct idt_entry){
			.offset_lo = (uint16_t)a, .selector = SEL_CODE, .ist = on_ist ? 1 : 0,
			.type = 0x8e, .offset_mid = (uint16_t)(a >> 16), .offset_hi = (uint32_t)(a >> 32),
		};
	}
	idt_load();
}

/* Remap the 8259 PICs away from the exception vectors, then mask them all:
 * the kernel uses the local APIC and MSI-X only. */
static void pic_disable(void)
{
	outb(0x20, 0x11);
	outb(0xa0, 0x11);
	outb(0x21, 0xe0);
	outb(0xa1, 0xe8);
	outb(0x21, 4);
	outb(0xa1, 2);
	outb(0x21, 1);
	outb(0xa1, 1);
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

/* start.S turned SSE on; set its control register to the ABI's default. */
static void sse_defaults(void)
{
	uint32_t mxcsr = 0x1f80;
	__asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
}

/* ---- what runs us -------------------------------------------------------- */

/*
 * CPUID leaf 0x40000000 holds a hypervisor's signature in EBX, ECX, EDX: QEMU's
 * TCG answers "TCGTCGTCGTCG", KVM "KVMKVMKVM\0\0\0". The leaf is read whether
 * or not CPUID.1:ECX.hypervisor is set (a CPU model may clear the flag and
 * keep the leaf); on bare metal it is no signature (Intel repeats the highest
 * basic leaf there, AMD returns zeros), so only the flag then says "other".
 */
static enum hypervisor detect_hypervisor(void)
{
	uint32_t r[4], sig[3];
	cpuid(0x40000000, 0, r);
	sig[0] = r[1], sig[1] = r[2], sig[2] = r[3];
	if (!memcmp(sig, "TCGTCGTCGTCG", 12))
		return HYPERVISOR_TCG;
	if (!memcmp(sig, "KVMKVMKVM\0\0\0", 12))
		return HYPERVISOR_KVM;
	cpuid(1, 0, r);
	return (r[2] >> 31) & 1 ? HYPERVISOR_OTHER : HYPERVISOR_NONE;
}

/* Asked once: under KVM each CPUID is an exit. */
enum hypervisor cpu_hypervisor(void)
{
	static enum hypervisor known = HYPERVISOR_UNKNOWN;
	if (known == HYPERVISOR_UNKNOWN)
		known = detect_hypervisor();
	return known;
}

/* KVM's paravirtual features (CPUID leaf 0x40000001, EAX): bit n is feature
 * n; 0 where KVM is not what runs us or the leaf is missing. */
uint32_t cpu_kvm_features(void)
{
	uint32_t r[4];
	if (cpu_hypervisor() != HYPERVISOR_KVM)
		return 0;
	cpuid(0x40000000, 0, r);
	if (r[0] < 0x40000001)
		return 0;
	cpuid(0x40000001, 0, r);
	return r[0];
}

const char *cpu_hypervisor_name(enum hypervisor h)
{
	switch (h) {
	case HYPERVISOR_TCG: return "TCG";
	case HYPERVISOR_KVM: return "KVM";
	case HYPERVISOR_OTHER: return "another hypervisor";
	default: return "none";
	}
}

/* The `verbose` line: the CPU's brand string, the hypervisor, and the
 * features whose absence changes behaviour rather than stops the boot. */
void cpu_print_info(void)
{
	uint32_t r[4], words[12];
	char brand[49] = "(no brand string)";
	cpuid(0x80000000, 0, r);
	if (r[0] >= 0x80000004) {
		for (uint32_t i = 0; i < 3; i++)
			cpuid(0x80000002 + i, 0, &words[4 * i]);
		memcpy(brand, words, 48);
		brand[48] = 0;
	}
	uint32_t max_ext = r[0], invariant_tsc = 0;
	if (max_ext >= 0x80000007) {
		cpuid(0x80000007, 0, r);
		invariant_tsc = (r[3] >> 8) & 1;
	}
	cpuid(1, 0, r);
	const char *b = brand;
	while (*b == ' ')
		b++;
	kprintf("kernel: CPU %s; hypervisor %s; invariant TSC %s, RDRAND %s, x2APIC %s\n", b,
		cpu_hypervisor_name(cpu_hypervisor()), invariant_tsc ? "yes" : "no",
		(r[2] >> 30) & 1 ? "yes" : "no",
		!((r[2] >> 21) & 1) ? "no" : lapic_x2apic() ? "yes (used)" : "yes (unused)");
}

void cpu_init(void)
{
	percpu_boot.ist_top = (uint64_t)(ist1_stack + sizeof ist1_stack);
	gdt_init(&percpu_boot.tables, percpu_boot.ist_top);
	idt_init();
	pic_disable();
	sse_defaults();
}

void cpu_init_ap(struct cpu_tables *t, uint64_t ist_top)
{
	gdt_init(t, ist_top);
	idt_load();
	sse_defaults();
}
