# rawhttp.mk: test images for the network layer (net/): rawhttp, an HTTP
# server on lwIP's raw API.
$(eval $(call app_image,rawhttp,tests/images/rawhttp.c))
# It includes lwIP's headers, which exist once lwIP is unpacked.
$(BUILD)/tests/images/rawhttp.c.o: | $(LWIP_STAMP)
TEST_DEPS += $(BUILD)/apps/rawhttp.elf
