/*
 * main.c: the kernel's boot sequence, from the loader's hand-over to the
 * application's main(). Order matters: the CPU tables first (so faults are
 * reported), then memory (everything else allocates), the command line that
 * becomes argv, whose kernel options are held against their table
 * (options.c) before anything reads them (the clock's source is one) and
 * whose virtio-mmio windows (mmio_windows.c) are checked before a driver
 * maps one, time, the LAPIC (interrupts), the other CPUs, PCI, and on a
 * machine without PCI and without such entries, the windows the ACPI DSDT
 * describes.
 */
#include <stdlib.h>
#include "acpi.h"
#include "cmdline.h"
#include "clock.h"
#include "cpu.h"
#include "kernel.h"
#include "mem.h"
#include "mmio_windows.h"
#include "smp.h"
#include "symbols.h"

#define EX_USAGE 64

extern int main(int argc, char **argv, char **envp);
extern const char app_name[];  /* generated per image by the build */
extern char **environ;
void console_files_init(void);
void kernel_main(const struct bootinfo *bi);

static struct cmdline cmdline;

/* What options.c's accessors read, once kernel_options_check has passed. */
const char *kernel_option(const char *key)
{
	return cmdline_get(&cmdline, key);
}

/* A multiboot loader's command line begins with the path of the image it
 * booted (QEMU writes "PATH APPEND", as GRUB does): that word is neither a
 * kernel option nor the app's. A PVH boot's is -append's alone. */
static const char *after_image_path(const struct bootinfo *bi)
{
	const char *line = bi->cmdline;
	if (bi->protocol == BOOT_PVH)
		return line;
	while (*line == ' ' || *line == '\t')
		line++;
	while (*line && *line != ' ' && *line != '\t')
		line++;
	return line;
}

/* Where the EBDA begins, by the firmware's memory map: the end of the RAM
 * that starts at 0, when it ends between 512 and 640 KiB; else 0. (The BIOS
 * data area's word at 0x40e says the same, but page 0 stays unmapped so that
 * NULL faults.) */
static uint64_t ebda_start(const struct bootinfo *bi)
{
	for (uint32_t i = 0; i < bi->nmem && i < BOOTINFO_MAX_MEM; i++) {
		const struct mem_range *m = &bi->mem[i];
		if (m->type == MEM_USABLE && m->base == 0 && m->len >= 0x80000 && m->len < 0xa0000)
			return m->len;
	}
	return 0;
}

/* Constructors of the app and libraries (this newlib has no __libc_init_array). */
static void run_constructors(void)
{
	extern void (*__preinit_array_start[])(void), (*__preinit_array_end[])(void);
	extern void (*__init_array_start[])(void), (*__init_array_end[])(void);
	for (void (**f)(void) = __preinit_array_start; f < __preinit_array_end; f++)
		(*f)();
	for (void (**f)(void) = __init_array_start; f < __init_array_end; f++)
		(*f)();
}

void kernel_main(const struct bootinfo *bi)
{
	if (bi->magic != BOOTINFO_MAGIC || bi->version != BOOTINFO_VERSION) {
		kprintf("kernel: started without a valid bootinfo record\n");
		kernel_exit(KERNEL_PANIC_STATUS);
	}
	cpu_init();
	symbols_init((const void *)bi->image_base, bi->image_size);
	kmem_init(bi);

	const char *why;
	if (cmdline_parse(&cmdline, after_image_path(bi), app_name, &why) < 0) {
		kprintf("kernel: bad command line: %s\n", why);
		kernel_exit(EX_USAGE);
	}
	/* A mistyped option or value would otherwise boot with the default. */
	char option_error[192];
	if (kernel_options_check(&cmdline, option_error, sizeof option_error) < 0) {
		kprintf("kernel: %s\n", option_error);
		kernel_exit(EX_USAGE);
	}
	if (mmio_windows_set(cmdline.devices, cmdline.ndevices, option_error, sizeof option_error) < 0) {
		kprintf("kernel: %s\n", option_error);
		kernel_exit(EX_USAGE);
	}
	acpi_set_rsdp_hint(bi->acpi_rsdp);
	uint64_t ebda = ebda_start(bi);
	clock_init(bi->tsc_at_entry, ebda);
	lapic_init();
	ioapic_init();
	__asm__ volatile("sti");
	lapic_paravirt_init();
	smp_init(bi, ebda);
	bool verbose = kopt_flag(KOPT_VERBOSE);
	pci_init(verbose);
	/* The command line's virtio_mmio.device= entries win over the DSDT:
	 * Firecracker writes both, and the command line is the one a user can
	 * correct. The DSDT is read only on a machine without PCI (microvm,
	 * Firecracker), where virtio devices can only be virtio-mmio: a PC
	 * machine's boot reads no table it did not read before. */
	if (cmdline.ndevices == 0 && pci_count() == 0)
		acpi_virtio_mmio_windows(ebda, verbose);
	console_files_init();
	console_input_init();
	if (verbose) {
		struct mem_stats m;
		mem_get_stats(&m);
		kprintf("kernel: %lu MiB RAM, heap up to %lu MiB, TSC %lu MHz from %s, booted in %lu us\n",
			m.ram_bytes >> 20, m.heap_limit >> 20, clock_tsc_hz() / 1000000,
			clock_source_used(), clock_ns() / 1000);
		mem_print_layout();
		cpu_print_info();
	}

	run_constructors();
	exit(main(cmdline.argc, cmdline.argv, environ));
}
