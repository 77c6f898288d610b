# machine.mk: test images for the machine layer: exitcheck (the ways a guest
# ends that are not an exit status: test 07).
$(eval $(call app_image,exitcheck,tests/images/exitcheck.c))
TEST_DEPS += $(BUILD)/apps/exitcheck.elf
