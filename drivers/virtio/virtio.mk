# virtio.mk: the virtio-net driver, an archive images pull in when the app
# (through the network stack) uses it.

VIRTIO_SRCS := drivers/virtio/virtqueue.c drivers/virtio/virtio_pci.c drivers/virtio/virtio_mmio.c \
               drivers/virtio/virtio_dev.c drivers/virtio/virtio_net.c \
               drivers/virtio/vnet_rx.c drivers/virtio/vnet_tx.c
VIRTIO_OBJS := $(VIRTIO_SRCS:%=$(BUILD)/%.o)
VIRTIO_LIB  := $(BUILD)/drivers/libvirtio.a

$(BUILD)/drivers/virtio/%.c.o: drivers/virtio/%.c mk/toolchain.mk | $(NEWLIB_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)$(KCC) $(KERNEL_CFLAGS) -c -o $@ $<

$(VIRTIO_LIB): $(VIRTIO_OBJS)
	$(Q)rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

IMAGE_LIBS += $(VIRTIO_LIB)
IMAGE_APP_INCLUDES += -I.

-include $(VIRTIO_OBJS:.o=.d)
