# apps.mk: application images. Each image is one ELF64 file: the kernel, the
# app and newlib linked together (the unikernel), booted as the loader's -initrd.
#
#   $(eval $(call app_image,NAME,SOURCES))  ->  $(BUILD)/apps/NAME.elf

APP_CFLAGS := $(GUEST_CFLAGS) -Werror -I.
APP_IMAGES :=

# apps/common: what the servers share (option numbers, non-blocking sockets,
# the listener), included as "apps/common/common.h" (-I.). httpd.mk and
# iperf.mk list it among their sources for both guests, bench.mk for
# nginx-run.
APP_COMMON_SRCS := apps/common/common.c
APP_COMMON_HDRS := apps/common/common.h

$(BUILD)/apps/%.c.o: apps/%.c mk/toolchain.mk | $(NEWLIB_STAMP) $(LWIP_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)$(KCC) $(APP_CFLAGS) $(IMAGE_APP_INCLUDES) -c -o $@ $<
# Test images (tests/images/) and the benchmark's (bench/images/) are apps too.
$(BUILD)/tests/images/%.c.o: tests/images/%.c mk/toolchain.mk | $(NEWLIB_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)$(KCC) $(APP_CFLAGS) $(IMAGE_APP_INCLUDES) -c -o $@ $<
$(BUILD)/bench/images/%.c.o: bench/images/%.c mk/toolchain.mk | $(NEWLIB_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)$(KCC) $(APP_CFLAGS) $(IMAGE_APP_INCLUDES) -c -o $@ $<

# argv[0] of an image is its name: a one-line generated source, kept (make
# would otherwise delete it as an intermediate file, and say so).
.PRECIOUS: $(BUILD)/apps/%.name.c
$(BUILD)/apps/%.name.c:
	@mkdir -p $(@D)
	$(call say,GEN,$@)echo 'const char app_name[] = "$*";' >$@
$(BUILD)/apps/%.name.o: $(BUILD)/apps/%.name.c | $(NEWLIB_STAMP)
	$(call say,CC,$<)$(KCC) $(APP_CFLAGS) -c -o $@ $<

# LAYOUT_PAD=N (bytes, default 0) moves the code and data of every image by
# N bytes (kernel/kernel.ld). The stamp changes only with the value, so a
# new value relinks the images and an unchanged one touches nothing.
LAYOUT_PAD ?= 0
ifneq ($(shell echo '$(LAYOUT_PAD)' | grep -qx '[0-9][0-9]*' || echo bad),)
$(error LAYOUT_PAD='$(LAYOUT_PAD)': a number of bytes, e.g. 1296)
endif
.PHONY: FORCE
FORCE:
$(BUILD)/layout-pad: FORCE
	@mkdir -p $(@D)
	@echo '$(LAYOUT_PAD)' | cmp -s - $@ || echo '$(LAYOUT_PAD)' >$@

IMAGE_LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -z noexecstack -T kernel/kernel.ld \
                 $(if $(filter-out 0,$(LAYOUT_PAD)),--defsym=__layout_pad=$(LAYOUT_PAD))

define app_image
$(1)_OBJS := $(2:%=$(BUILD)/%.o)
$(BUILD)/apps/$(1).elf: $$($(1)_OBJS) $$(IMAGE_KERNEL_OBJS) $$(IMAGE_LIBS) $(BUILD)/apps/$(1).name.o kernel/kernel.ld $(BUILD)/layout-pad $(NEWLIB_STAMP)
	$$(call say,LD,$$@)$$(KLD) $$(IMAGE_LDFLAGS) -o $$@ $$(IMAGE_KERNEL_OBJS) $$($(1)_OBJS) $(BUILD)/apps/$(1).name.o \
		--start-group $$(IMAGE_LIBS) $$(GUEST_LIBS) --end-group
APP_IMAGES += $(BUILD)/apps/$(1).elf
-include $$($(1)_OBJS:.o=.d)
endef

# What every image links: the kernel's objects, and the archives of the layers
# above it (drivers, network), from which only what the app uses is pulled in.
# Layers add to IMAGE_LIBS and, for headers apps include, IMAGE_APP_INCLUDES.
IMAGE_KERNEL_OBJS = $(KERNEL_OBJS)
IMAGE_LIBS ?=
IMAGE_APP_INCLUDES ?=

$(eval $(call app_image,hello,apps/hello/hello.c))
# The benchmark's server (httpd) and the iperf3 server are made by
# apps/httpd/httpd.mk and apps/iperf/iperf.mk, which list their sources once
# for both guests.
