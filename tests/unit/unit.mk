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
