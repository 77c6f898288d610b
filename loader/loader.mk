# loader.mk: the multiboot loader. Built as x86_64 code, linked at 1 MiB, then
# converted to ELF32 because QEMU's -kernel accepts multiboot images only as
# ELF32 (or a.out kludge).

LOADER        := $(BUILD)/loader/loader.elf
LOADER64      := $(BUILD)/loader/loader64.elf
LOADER_SRCS   := loader/entry.S loader/loader.c loader/cpu.c loader/image.c loader/paging.c
# The memory map's free ranges (boot/boot.mk) find the loader's free pages.
LOADER_OBJS   := $(LOADER_SRCS:%=$(BUILD)/%.o) $(BOOT_LOADER_OBJS)
LOADER_CFLAGS := -std=gnu11 -O2 -g -ffreestanding -fno-pic -fno-pie -mno-red-zone \
                 -mgeneral-regs-only -mcmodel=small -fno-stack-protector -fno-builtin \
                 -Wall -Wextra -Werror -MMD -MP -I. -Iloader

$(BUILD)/loader/%.c.o: loader/%.c | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)$(KCC) $(LOADER_CFLAGS) -c -o $@ $<
$(BUILD)/loader/%.S.o: loader/%.S | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,AS,$<)$(KCC) $(LOADER_CFLAGS) -c -o $@ $<

$(LOADER64): $(LOADER_OBJS) loader/loader.ld
	$(call say,LD,$@)$(KLD) -nostdlib -static -z max-page-size=0x1000 -z noexecstack -T loader/loader.ld -o $@ $(LOADER_OBJS)
$(LOADER): $(LOADER64)
	$(call say,OBJCOPY,$@)objcopy -O elf32-i386 $< $@

-include $(LOADER_OBJS:.o=.d)
