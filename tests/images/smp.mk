# smp.mk: smpcheck, the test image for the kernel's CPUs (test 29): calls
# and wakes to every AP, loops handed to them, a descriptor looked up from
# the wrong CPU, a spinlock taken by all at once.
$(eval $(call app_image,smpcheck,tests/images/smpcheck.c))
TEST_DEPS += $(BUILD)/apps/smpcheck.elf
