# boot.mk: boot/, the interface between the loader and the kernel, in one
# place that both include and neither owns: the record the loader hands over
# (bootinfo.h), the ELF64 structures both read (elf64.h), and the free ranges
# of the firmware's memory map (memmap.h, memmap.c), which both link; and the
# PVH boot's record and its translation to bootinfo (pvh.h, pvh.c), which
# only the kernel links (it is its own loader then). Each
# side builds memmap.c with its own flags:
#
#   $(BOOT_LOADER_OBJS)  for the loader (LOADER_CFLAGS, loader/loader.mk)
#   $(BOOT_KERNEL_OBJS)  for the kernel (KERNEL_CFLAGS, mk/toolchain.mk)
#
# Included before loader.mk and kernel.mk, which list these objects.

BOOT_SRCS        := boot/memmap.c
BOOT_LOADER_OBJS := $(BOOT_SRCS:boot/%=$(BUILD)/boot/loader/%.o)
# The PVH start info's translation (pvh.c) is the kernel's alone.
BOOT_KERNEL_OBJS := $(BOOT_SRCS:boot/%=$(BUILD)/boot/kernel/%.o) $(BUILD)/boot/kernel/pvh.c.o

$(BUILD)/boot/loader/%.c.o: boot/%.c | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$< (loader))$(KCC) $(LOADER_CFLAGS) -c -o $@ $<
$(BUILD)/boot/kernel/%.c.o: boot/%.c mk/toolchain.mk | $(NEWLIB_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)$(KCC) $(KERNEL_CFLAGS) -c -o $@ $<

-include $(BOOT_LOADER_OBJS:.o=.d) $(BOOT_KERNEL_OBJS:.o=.d)
