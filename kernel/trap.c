/*
 * trap.c: what happens when the CPU is interrupted. Exceptions are fatal: they
 * print the vector, error code, RIP, CR2, the registers and a symbolized
 * backtrace, then end QEMU with KERNEL_PANIC_STATUS. Device vectors go to the
 * handler irq_alloc() bound to them. Also panic() and kernel_exit().
 */
#include "arch.h"
#include "cpu.h"
#include "kernel.h"
#include "mem.h"
#include "percpu.h"
#include "symbols.h"

#define DEBUG_EXIT_PORT 0xf4

static const char *const exception_names[32] = {
	"divide error", "debug", "NMI", "breakpoint", "overflow", "bound range",
	"invalid opcode", "device not available", "double fault", "coprocessor overrun",
	"invalid TSS", "segment not present", "stack fault", "general protection",
	"page fault", "reserved", "x87 floating point", "alignment check", "machine check",
	"SIMD floating point", "virtualization", "control protection",
};

struct irq_slot {
	irq_handler_t fn; /* NULL: vector free */
	void *arg;
};
static struct irq_slot irq_slots[256];
static volatile int panic_cpu = -1; /* the CPU reporting a panic; -1: none */

/*
 * isa-debug-exit makes QEMU exit with (status << 1) | 1, so status 0 comes out
 * as 1, which is also QEMU's own failure code, and QEMU's own exit 0 (a triple
 * fault or reset under -no-reboot) looks like no status at all. So the last
 * console line says the status too: qemu-run accepts an exit code only when
 * that line confirms it (KERNEL_EXIT_LINE).
 */
__attribute__((noreturn)) void kernel_exit(int status)
{
	irq_disable();
	status &= 0x7f; /* what the port's code carries */
	kprintf(KERNEL_EXIT_LINE "%d\n", status);
	console_drain(); /* the line must reach QEMU before QEMU ends */
	outb(DEBUG_EXIT_PORT, (uint8_t)status);
	/* No such device: stop here rather than run on. */
	for (;;)
		__asm__ volatile("cli; hlt");
}

void backtrace_print(uint64_t rbp, uint64_t rip)
{
	uint64_t off;
	const char *name = symbol_lookup(rip, &off);
	kprintf("backtrace:\n  #0  0x%lx %s+0x%lx\n", rip, name ? name : "?", name ? off : 0);
	for (int depth = 1; depth < 32 && rbp; depth++) {
		/* Follow only frame pointers into mapped RAM, so a corrupt chain stops the
		 * walk instead of faulting inside the panic handler. */
		if ((rbp & 7) || !mem_is_mapped_ram(rbp, 16))
			break;
		uint64_t ret = ((uint64_t *)rbp)[1];
		uint64_t next = ((uint64_t *)rbp)[0];
		if (ret == 0)
			break;
		if (!mem_is_mapped_ram(ret, 1)) { /* a smashed frame: say so, stop */
			kprintf("  #%-2d 0x%lx (not code: the frame is corrupt)\n", depth, ret);
			break;
		}
		name = symbol_lookup(ret - 1, &off);
		kprintf("  #%-2d 0x%lx %s+0x%lx\n", depth, ret, name ? name : "?", name ? off + 1 : 0);
		if (next <= rbp)
			break;
		rbp = next;
	}
}

/*
 * One CPU reports a panic and ends the machine. A panic inside that report,
 * on the same CPU, ends it at once; one on another CPU meanwhile halts that
 * CPU for good, leaving the console and the exit to the first.
 */
static void panic_begin(void)
{
	int none = -1;
	if (__atomic_compare_exchange_n(&panic_cpu, &none, (int)cpu_id(), false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return;
	if (none == (int)cpu_id())
		kernel_exit(KERNEL_PANIC_STATUS);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/* Which CPU, once there is more than one. */
static void say_which_cpu(void)
{
	if (smp_cpus_known > 1)
		kprintf("  on CPU %u (APIC ID %u)\n", cpu_id(), this_cpu()->apic_id);
}

static __attribute__((noreturn)) void exception(struct trap_frame *f)
{
	panic_begin();
	const char *name = exception_names[f->vector] ? exception_names[f->vector] : "reserved";
	kprintf("\npanic: %s (vector %lu), error code 0x%lx\n", name, f->vector, f->error);
	say_which_cpu();
	uint64_t off;
	const char *fn = symbol_lookup(f->rip, &off);
	kprintf("  rip 0x%016lx %s+0x%lx  cr2 0x%016lx\n", f->rip, fn ? fn : "?", fn ? off : 0,
		read_cr2());
	kprintf("  rax 0x%016lx rbx 0x%016lx rcx 0x%016lx rdx 0x%016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
	kprintf("  rsi 0x%016lx rdi 0x%016lx rbp 0x%016lx rsp 0x%016lx\n", f->rsi, f->rdi, f->rbp, f->rsp);
	kprintf("  r8  0x%016lx r9  0x%016lx r10 0x%016lx r11 0x%016lx\n", f->r8, f->r9, f->r10, f->r11);
	kprintf("  r12 0x%016lx r13 0x%016lx r14 0x%016lx r15 0x%016lx\n", f->r12, f->r13, f->r14, f->r15);
	kprintf("  rflags 0x%lx cs 0x%lx ss 0x%lx\n", f->rflags, f->cs, f->ss);
	backtrace_print(f->rbp, f->rip);
	kernel_exit(KERNEL_PANIC_STATUS);
}

void trap_dispatch(struct trap_frame *f)
{
	if (f->vector < 32)
		exception(f);
	if (f->vector == IRQ_VECTOR_SPURIOUS)
		return; /* spurious interrupts take no EOI */
	cpu_stats()->interrupts++;
	if (f->vector == IRQ_VECTOR_TIMER)
		timer_interrupt();
	else if (irq_slots[f->vector].fn)
		irq_slots[f->vector].fn(irq_slots[f->vector].arg);
	else
		cpu_stats()->interrupts_unexpected++;
	lapic_eoi();
}

int irq_alloc(irq_handler_t handler, void *arg)
{
	KASSERT(on_boot_cpu()); /* the table is written at boot, read by every CPU */
	for (int v = IRQ_VECTOR_FIRST; v < IRQ_VECTOR_ALLOC_END; v++) {
		if (!irq_slots[v].fn) {
			irq_slots[v] = (struct irq_slot){ handler, arg };
			return v;
		}
	}
	return -1;
}

int irq_bind(int vector, irq_handler_t handler, void *arg)
{
	KASSERT(on_boot_cpu());
	if (vector < IRQ_VECTOR_ALLOC_END || vector >= IRQ_VECTOR_SPURIOUS || irq_slots[vector].fn)
		return -1;
	irq_slots[vector] = (struct irq_slot){ handler, arg };
	return 0;
}

/* The canary (set in start.S) and what a protected function calls when its
 * frame's copy was overwritten. Ours, not newlib's, so the report is a panic
 * with a backtrace through the smashed function's caller. */
uintptr_t __stack_chk_guard;

__attribute__((noreturn)) void __stack_chk_fail(void)
{
	panic("stack smashing detected");
}

void panic(const char *fmt, ...)
{
	irq_disable();
	panic_begin();
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	kvsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	kprintf("\npanic: %s\n", buf);
	say_which_cpu();
	backtrace_print((uint64_t)__builtin_frame_address(0), (uint64_t)&panic);
	kernel_exit(KERNEL_PANIC_STATUS);
}
