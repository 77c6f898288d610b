# virtio.mk: the virtio-net driver.
