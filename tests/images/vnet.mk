# vnet.mk: test images for the virtio-net driver alone.
$(eval $(call app_image,vnet_arp,tests/images/vnet_arp.c))
TEST_DEPS += $(BUILD)/apps/vnet_arp.elf
