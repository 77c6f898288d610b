# kernel.mk: the kernel library every image links with. It takes in the
# kernel's build of boot/'s memory-map arithmetic (boot/boot.mk).

KERNEL_SRCS := kernel/start.S kernel/pvh.S kernel/pvh_boot.c kernel/isr.S kernel/main.c kernel/cpu.c kernel/trap.c \
               kernel/symbols.c kernel/console.c kernel/physmem.c kernel/mem.c \
               kernel/clock.c kernel/lapic.c kernel/ioapic.c kernel/timerq.c kernel/timer.c \
               kernel/pci.c kernel/cmdline.c kernel/fd.c kernel/syscalls.c kernel/stats.c \
               kernel/executor.c kernel/spinwin.c kernel/trace.c kernel/poll.c kernel/signal.c \
               kernel/options.c kernel/clock_sources.c kernel/tsc_rate.c kernel/acpi.c \
               kernel/acpi_tables.c kernel/acpi_dsdt.c kernel/acpi_aml.c kernel/acpi_crs.c kernel/mmio_windows.c \
               kernel/smp.c kernel/smp_tables.c kernel/trampoline.S kernel/trampoline.c kernel/ipi.c \
               kernel/spinlock.c kernel/malloc_lock.c kernel/handoff.c
# The PVH entry (pvh.S, pvh_boot.c) runs the loader's CPU check, built here
# from loader/cpu.c, before SSE is on: both are built without SSE.
KERNEL_OBJS := $(KERNEL_SRCS:%=$(BUILD)/%.o) $(BOOT_KERNEL_OBJS) $(BUILD)/kernel/loader_cpu.c.o
KERNEL_LIB  := $(BUILD)/kernel/libkernel.a

$(BUILD)/kernel/%.c.o: kernel/%.c mk/toolchain.mk | $(NEWLIB_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)$(KCC) $(KERNEL_CFLAGS) -c -o $@ $<
$(BUILD)/kernel/%.S.o: kernel/%.S mk/toolchain.mk | $(NEWLIB_STAMP)
	@mkdir -p $(@D)
	$(call say,AS,$<)$(KCC) $(KERNEL_CFLAGS) -c -o $@ $<

$(BUILD)/kernel/pvh_boot.c.o: KERNEL_CFLAGS += -mgeneral-regs-only
$(BUILD)/kernel/loader_cpu.c.o: loader/cpu.c mk/toolchain.mk | $(NEWLIB_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$< (kernel))$(KCC) $(KERNEL_CFLAGS) -mgeneral-regs-only -c -o $@ $<

$(KERNEL_LIB): $(KERNEL_OBJS)
	$(Q)rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

-include $(KERNEL_OBJS:.o=.d)

# docs/kernel-options.md is generated from the table of options
# (kernel/options.c) by a host program, tools/kernel-options:
#   make kernel-options-doc   writes it; make test-unit fails while it differs
KOPT_DOC_TOOL := $(BUILD)/tools/kernel-options
KOPT_DOC_SRCS := tools/kernel-options/main.c tools/kernel-options/doc.c kernel/options.c

$(KOPT_DOC_TOOL): $(KOPT_DOC_SRCS) tools/kernel-options/doc.h kernel/options.h kernel/kernel.h \
		kernel/cmdline.h kernel/switches.h
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) -std=gnu11 -O1 -g -Wall -Wextra -Werror -I. -o $@ $(KOPT_DOC_SRCS)

.PHONY: kernel-options-doc
kernel-options-doc: $(KOPT_DOC_TOOL)
	$(call say,GEN,docs/kernel-options.md)$(KOPT_DOC_TOOL) >docs/kernel-options.md.tmp
	$(Q)mv docs/kernel-options.md.tmp docs/kernel-options.md
