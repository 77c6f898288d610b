# vnet.mk: test images for the virtio-net driver alone (vnet_arp) and for the
# socket layer inside the guest (sockcheck).
$(eval $(call app_image,vnet_arp,tests/images/vnet_arp.c))
TEST_DEPS += $(BUILD)/apps/vnet_arp.elf
$(eval $(call app_image,sockcheck,tests/images/sockcheck.c))
TEST_DEPS += $(BUILD)/apps/sockcheck.elf
