# unit.mk: the host unit tests and the project sources each one tests.
# (See tests/tests.mk for the convention.)

# httpd's request parser and response builder (issue 4)
UNIT_TESTS += http
UNIT_SRCS_http := apps/httpd/http.c

UNIT_TESTS += cmdline
UNIT_SRCS_cmdline := kernel/cmdline.c

UNIT_TESTS += image
UNIT_SRCS_image := loader/image.c

UNIT_TESTS += memmap
UNIT_SRCS_memmap := kernel/memmap.c

UNIT_TESTS += timerq
UNIT_SRCS_timerq := kernel/timerq.c

UNIT_TESTS += virtqueue
UNIT_SRCS_virtqueue := drivers/virtio/virtqueue.c

# The virtio-net driver over the netrx harness's simulated device, in the
# modes that lose notifications (issue 12); the second build turns the
# repair off (kernel option vnet_repair=0) to show the modes do lose them.
VNET_NOTIFY_SRCS := drivers/virtio/virtio_net.c drivers/virtio/vnet_rx.c drivers/virtio/vnet_tx.c \
                    drivers/virtio/virtqueue.c tests/fuzz/netrx/device.c
VNET_NOTIFY_DEPS := $(wildcard drivers/virtio/*.h tests/fuzz/netrx/*.h kernel/kernel.h)
UNIT_TESTS += vnet_notify
UNIT_SRCS_vnet_notify := $(VNET_NOTIFY_SRCS)
UNIT_DEPS_vnet_notify := $(VNET_NOTIFY_DEPS)
UNIT_TESTS += vnet_notify_off
UNIT_SRCS_vnet_notify_off := $(VNET_NOTIFY_SRCS)
UNIT_DEPS_vnet_notify_off := $(VNET_NOTIFY_DEPS) tests/unit/test_vnet_notify.c

# Its offloads (issue 14) over the same device, offering them and not.
UNIT_TESTS += vnet_offload
UNIT_SRCS_vnet_offload := $(VNET_NOTIFY_SRCS)
UNIT_DEPS_vnet_offload := $(VNET_NOTIFY_DEPS)
UNIT_TESTS += vnet_offload_none
UNIT_SRCS_vnet_offload_none := $(VNET_NOTIFY_SRCS)
UNIT_DEPS_vnet_offload_none := $(VNET_NOTIFY_DEPS) tests/unit/test_vnet_offload.c

# The socket layer (net/socket.c, through probe.c) over real lwIP on an
# in-memory loopback interface; host stand-ins for the kernel and the driver.
# The layer's POSIX names are renamed uk_* on the host (socket/rename.h).
include tests/unit/socket/lwip.mk
SOCKET_TEST_SRCS := tests/unit/socket/probe.c tests/unit/socket/host.c tests/unit/socket/loopnet.c \
                    tests/unit/socket/pairs.c tests/unit/socket/fdcalls.c \
                    net/inet.c net/udp.c net/tcp_hooks.c kernel/fd.c kernel/poll.c kernel/executor.c
SOCKET_TEST_DEPS := net/socket.c $(wildcard tests/unit/socket/*.h net/*.h kernel/*.h kernel/include/*.h \
                    kernel/include/sys/*.h net/include/*/*.h)

UNIT_TESTS += socket
UNIT_SRCS_socket := $(SOCKET_TEST_SRCS)
UNIT_CFLAGS_socket := $(SOCKET_TEST_INCLUDES)
UNIT_LIBS_socket := $(LWIP_HOST_LIB)
UNIT_DEPS_socket := $(SOCKET_TEST_DEPS)
UNIT_ORDER_socket := $(LWIP_STAMP)

# The same layer built with the naive switches the default tests rule out:
# writev sends each piece on its own, and reading or polling marks a socket.
UNIT_TESTS += socket_naive
UNIT_SRCS_socket_naive := $(SOCKET_TEST_SRCS)
UNIT_CFLAGS_socket_naive := $(SOCKET_TEST_INCLUDES) -DSW_WRITEV_ONE_SEND=0 -DSW_READ_NO_MARK=0
UNIT_LIBS_socket_naive := $(LWIP_HOST_LIB)
UNIT_DEPS_socket_naive := $(SOCKET_TEST_DEPS)
UNIT_ORDER_socket_naive := $(LWIP_STAMP)
