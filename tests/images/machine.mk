# machine.mk: test images for the machine layer: memcheck (all of RAM, above
# 4 GiB included: test 08) and exitcheck (the ways a guest ends that are not
# an exit status: test 07).
$(eval $(call app_image,memcheck,tests/images/memcheck.c))
TEST_DEPS += $(BUILD)/apps/memcheck.elf
$(eval $(call app_image,exitcheck,tests/images/exitcheck.c))
TEST_DEPS += $(BUILD)/apps/exitcheck.elf
