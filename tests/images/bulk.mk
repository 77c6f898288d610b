# bulk.mk: bulk, a TCP sink, source and echo server for the offload tests
# (16-19: byte-exact transfers with offloads, without, on user networking,
# under loss).
$(eval $(call app_image,bulk,tests/images/bulk.c))
TEST_DEPS += $(BUILD)/apps/bulk.elf
