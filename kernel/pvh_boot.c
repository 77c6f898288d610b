/*
 * pvh_boot.c: the PVH entry's C half (kernel/pvh.S calls it in long mode, on
 * the boot map and the boot stack, before _start). It does the multiboot
 * loader's part of the hand-over for an image the VMM loaded itself:
 *
 *   - the loader's CPU check (loader/cpu.c, built into the kernel too), before
 *     the kernel uses any of those features, with the loader's message and
 *     exit status;
 *   - SSE on (the rest of the kernel is compiled to use it; this file is
 *     built without it) and EFER.NXE (the kernel's tables set NX bits);
 *   - the bootinfo record: the memory map and command line from the VMM's
 *     start info (boot/pvh.c, reading only what the boot map covers), the
 *     image's own extent, the TSC at entry, and the mapped limit.
 *
 * No ELF file lies in memory under PVH (the VMM loaded the segments, not the
 * file), so image_base is 0: symbols_init finds no table and a backtrace
 * prints bare addresses (`addr2line -e IMAGE` names them).
 */
#include "arch.h"
#include "boot/bootinfo.h"
#include "boot/pvh.h"
#include "kernel.h"
#include "loader/cpu.h"

#define COM1         0x3f8
#define DEBUG_EXIT_PORT 0xf4 /* isa-debug-exit, as trap.c's kernel_exit */
#define EFER_MSR     0xC0000080
#define EFER_NXE     (1ULL << 11)
#define CR0_MP       (1ULL << 1)
#define CR0_EM       (1ULL << 2)
#define CR4_OSFXSR   (1ULL << 9)
#define CR4_OSXMMEXCPT (1ULL << 10)
#define GIB          (1ULL << 30)

extern char __image_start[], __image_end[];
extern uint64_t pvh_tsc_at_entry;  /* pvh.S: the TSC at its first instruction */
extern uint32_t pvh_mapped_gib;    /* pvh.S: how far its one-to-one map reaches */
struct bootinfo *pvh_boot(uint32_t start_info);

static struct bootinfo pvh_bootinfo;

/* The reads boot/pvh.c may make: within the boot map, never wrapping, never
 * at address 0 (the ABI's "not present"). Page 0 itself is fair: QEMU's
 * option ROM puts the memory map there. */
static const void *read_mapped(uint64_t addr, uint64_t len, void *ctx)
{
	uint64_t limit = *(const uint64_t *)ctx;
	if (addr == 0 || addr >= limit || len > limit - addr)
		return NULL;
	return (const void *)addr;
}

static void puts_early(const char *s)
{
	for (; *s; s++) {
		while (!(inb(COM1 + 5) & 0x20))
			;
		outb(COM1, (uint8_t)*s);
	}
}

/* A CPU without a feature the kernel uses: the loader's words and status.
 * Plain port writes, as kprintf may run SSE code this CPU lacks. */
static __attribute__((noreturn)) void cpu_fail(const char *why)
{
	char status[] = { '0' + LOADER_NO_CPU_FEATURE / 10, '0' + LOADER_NO_CPU_FEATURE % 10, 0 };
	puts_early("kernel: error: ");
	puts_early(why);
	puts_early("\r\n" KERNEL_EXIT_LINE);
	puts_early(status);
	puts_early("\r\n");
	while (!(inb(COM1 + 5) & 0x40))
		;
	outb(DEBUG_EXIT_PORT, LOADER_NO_CPU_FEATURE);
	for (;;)
		__asm__ volatile("cli; hlt");
}

struct bootinfo *pvh_boot(uint32_t start_info)
{
	const char *why = cpu_missing_feature();
	if (why)
		cpu_fail(why);
	write_cr0((read_cr0() & ~CR0_EM) | CR0_MP);
	write_cr4(read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT);
	wrmsr(EFER_MSR, rdmsr(EFER_MSR) | EFER_NXE);

	struct bootinfo *bi = &pvh_bootinfo;
	unsigned phys_bits = cpu_phys_addr_bits();
	uint64_t mapped = (uint64_t)pvh_mapped_gib * GIB;
	uint64_t cpu_limit = phys_bits >= 47 ? 1ULL << 47 : 1ULL << phys_bits;
	why = pvh_to_bootinfo(start_info, read_mapped, &mapped, bi);
	if (why) {
		kprintf("kernel: error: %s\n", why);
		kernel_exit(KERNEL_PANIC_STATUS);
	}
	bi->protocol = BOOT_PVH;
	bi->tsc_at_entry = pvh_tsc_at_entry;
	bi->cpu_phys_bits = phys_bits;
	/* As the loader's: below both the map's reach and the CPU's address
	 * width, and never below 4 GiB, which the map always covers. */
	bi->ram_limit = cpu_limit < mapped ? cpu_limit : mapped;
	if (bi->ram_limit < 4 * GIB)
		bi->ram_limit = 4 * GIB;
	bi->load_start = (uint64_t)__image_start;
	bi->load_end = (uint64_t)__image_end;
	return bi;
}
