# unit.mk: the host unit tests and the project sources each one tests.
# (See tests/tests.mk for the convention.) A test that runs kernel code which
# may panic links tests/unit/panic.c ($(UNIT_PANIC)): a panic fails the test.

UNIT_PANIC := tests/unit/panic.c

# httpd's request parser and response builder (issue 4)
UNIT_TESTS += http
UNIT_SRCS_http := apps/httpd/http.c apps/httpd/body.c

# httpd's readiness wait (issue 23), over poll() and over epoll: one test
# source, both implementations.
UNIT_TESTS += ready_poll ready_epoll
UNIT_SRCS_ready_poll := apps/httpd/ready_poll.c
UNIT_MAIN_ready_poll := tests/unit/test_ready.c
UNIT_DEPS_ready_poll := apps/httpd/ready.h
UNIT_SRCS_ready_epoll := apps/httpd/ready_epoll.c
UNIT_MAIN_ready_epoll := tests/unit/test_ready.c
UNIT_DEPS_ready_epoll := apps/httpd/ready.h

UNIT_TESTS += cmdline
UNIT_SRCS_cmdline := kernel/cmdline.c

# The table of kernel options (issue 36): the boot's check of a command
# line, the typed accessors, and docs/kernel-options.md as the table
# generates it (tools/kernel-options).
UNIT_TESTS += options
UNIT_SRCS_options := kernel/options.c kernel/cmdline.c tools/kernel-options/doc.c
UNIT_DEPS_options := kernel/options.h kernel/cmdline.h kernel/kernel.h kernel/switches.h \
                     tools/kernel-options/doc.h

# The descriptor table's close (issue 36): out of the table before the
# object's close runs.
UNIT_TESTS += fd
UNIT_SRCS_fd := kernel/fd.c $(UNIT_PANIC)
UNIT_DEPS_fd := kernel/kernel.h

UNIT_TESTS += image
UNIT_SRCS_image := loader/image.c

UNIT_TESTS += memmap
UNIT_SRCS_memmap := boot/memmap.c

# The PVH start info to the kernel's bootinfo (issue 38), hostile records too.
UNIT_TESTS += pvh
UNIT_SRCS_pvh := boot/pvh.c
UNIT_DEPS_pvh := boot/pvh.h boot/bootinfo.h

UNIT_TESTS += physmem
UNIT_SRCS_physmem := kernel/physmem.c

# The loader's page tables, at loader.ld's addresses (no PIE, so they are
# absolute symbols).
UNIT_TESTS += paging
UNIT_SRCS_paging := loader/paging.c boot/memmap.c
UNIT_CFLAGS_paging := -no-pie -Wl,--defsym=__loader_start=0x100000,--defsym=__loader_text_end=0x102000 \
                      -Wl,--defsym=__loader_rodata_end=0x103000,--defsym=__loader_end=0x11e000
UNIT_DEPS_paging := loader/paging.h loader/image.h

UNIT_TESTS += timerq
UNIT_SRCS_timerq := kernel/timerq.c

# The clock's sources (issue 38): the TSC's rate from CPUID leaves, the
# hypervisor leaf, kvmclock's scale and calibration counts; and the ACPI
# tables' checks and fields, over hostile tables.
UNIT_TESTS += tsc_rate acpi
UNIT_SRCS_tsc_rate := kernel/tsc_rate.c
UNIT_DEPS_tsc_rate := kernel/tsc_rate.h
UNIT_SRCS_acpi := kernel/acpi_tables.c
UNIT_DEPS_acpi := kernel/acpi.h

# virtio-mmio devices in the ACPI DSDT (issue 38): the AML walk, the
# resource template and the FADT's DSDT pointer, over AML composed by the
# test, hostile AML too.
UNIT_TESTS += acpi_dsdt acpi_crs
UNIT_SRCS_acpi_dsdt := kernel/acpi_dsdt.c kernel/acpi_aml.c kernel/acpi_crs.c kernel/mmio_windows.c
UNIT_DEPS_acpi_dsdt := kernel/acpi.h kernel/acpi_aml.h kernel/mmio_windows.h tests/unit/aml_build.h
UNIT_SRCS_acpi_crs := kernel/acpi_crs.c kernel/acpi_aml.c kernel/acpi_tables.c
UNIT_DEPS_acpi_crs := kernel/acpi.h kernel/acpi_aml.h kernel/mmio_windows.h tests/unit/aml_build.h

# SMP (issue 39): the CPUs of the firmware's MADT and MP table, hostile
# tables too; the AP trampoline's page and its relocation, with the real
# blob (kernel/trampoline.S, assembled for the host, never run).
UNIT_TESTS += smp_tables trampoline
UNIT_SRCS_smp_tables := kernel/smp_tables.c
UNIT_DEPS_smp_tables := kernel/smp_tables.h
UNIT_SRCS_trampoline := kernel/trampoline.c kernel/trampoline.S
UNIT_DEPS_trampoline := kernel/trampoline.h boot/bootinfo.h boot/memmap.h

# The console's keys end a spin or a park at once (issue 36): the executor
# and kernel/signal.c over kernel/timer.c's park (included by the test).
UNIT_TESTS += wake
UNIT_SRCS_wake := kernel/executor.c kernel/spinwin.c kernel/signal.c kernel/options.c kernel/timerq.c $(UNIT_PANIC)
UNIT_DEPS_wake := kernel/timer.c kernel/switches.h kernel/kernel.h kernel/options.h kernel/spinwin.h

# The spin's window (kernel/spinwin.c): how long the executor spins.
UNIT_TESTS += spinwin
UNIT_SRCS_spinwin := kernel/spinwin.c

# The one-shot's reloads (kernel/timer.c, included by the test), both ways.
UNIT_TESTS += timer timer_naive
UNIT_SRCS_timer := kernel/timerq.c $(UNIT_PANIC)
UNIT_DEPS_timer := kernel/timer.c kernel/switches.h
UNIT_SRCS_timer_naive := kernel/timerq.c $(UNIT_PANIC)
UNIT_DEPS_timer_naive := kernel/timer.c kernel/switches.h
UNIT_MAIN_timer_naive := tests/unit/test_timer.c
UNIT_CFLAGS_timer_naive := -DSW_TIMER_NO_RELOAD=0

UNIT_TESTS += virtqueue
UNIT_SRCS_virtqueue := drivers/virtio/virtqueue.c $(UNIT_PANIC)

# The virtio-net driver over the netrx harness's simulated device, in the
# modes that lose notifications (issue 12); the second build turns the
# repair off (kernel option vnet_repair=0) to show the modes do lose them.
VNET_NOTIFY_SRCS := drivers/virtio/virtio_net.c drivers/virtio/vnet_rx.c drivers/virtio/vnet_tx.c \
                    drivers/virtio/virtqueue.c tests/fuzz/netrx/device.c kernel/trace.c kernel/options.c \
                    tests/unit/vnet_host.c
VNET_NOTIFY_DEPS := $(wildcard drivers/virtio/*.h tests/fuzz/netrx/*.h kernel/kernel.h kernel/options.h)
# vnet_test NAME[,SOURCE]: a driver test over that device; SOURCE, another
# test's file its own includes (a second build of it).
define vnet_test
UNIT_TESTS += $(1)
UNIT_SRCS_$(1) := $$(VNET_NOTIFY_SRCS)
UNIT_DEPS_$(1) := $$(VNET_NOTIFY_DEPS) $(2)
endef
$(eval $(call vnet_test,vnet_notify))
$(eval $(call vnet_test,vnet_notify_off,tests/unit/test_vnet_notify.c))

# Its offloads (issue 14) over the same device, offering them and not.
$(eval $(call vnet_test,vnet_offload))
$(eval $(call vnet_test,vnet_offload_none,tests/unit/test_vnet_offload.c))

# Receive buffers lent to the stack and handed back (issue 21).
$(eval $(call vnet_test,vnet_lend))

# The socket layer ($(NET_SOCKET_SRCS); probe.c looks inside) over real lwIP on an
# in-memory loopback interface; host stand-ins for the kernel and the driver.
# The layer's POSIX names are renamed uk_* on the host (socket/rename.h).
include tests/unit/socket/lwip.mk
SOCKET_TEST_SRCS := tests/unit/socket/probe.c tests/unit/socket/host.c tests/unit/socket/loopnet.c \
                    tests/unit/socket/pairs.c tests/unit/socket/fdcalls.c $(NET_SOCKET_SRCS) \
                    net/inet.c net/udp.c net/tcp_hooks.c kernel/fd.c kernel/poll.c kernel/executor.c kernel/spinwin.c kernel/trace.c \
                    kernel/options.c $(UNIT_PANIC)
SOCKET_TEST_DEPS := $(wildcard tests/unit/socket/*.h net/*.h kernel/*.h kernel/include/*.h \
                    kernel/include/sys/*.h net/include/*/*.h)
# socket_test NAME[,CFLAGS,SOURCE]: a test over that harness, with extra
# compiler flags, from its own file or SOURCE.
define socket_test
UNIT_TESTS += $(1)
UNIT_SRCS_$(1) := $$(SOCKET_TEST_SRCS)
UNIT_CFLAGS_$(1) := $$(SOCKET_TEST_INCLUDES) $(2)
UNIT_LIBS_$(1) := $$(LWIP_HOST_LIB)
UNIT_DEPS_$(1) := $$(SOCKET_TEST_DEPS)
UNIT_ORDER_$(1) := $$(LWIP_STAMP)
UNIT_MAIN_$(1) := $(3)
endef
$(eval $(call socket_test,socket))

# The socket layer's receive queue (net/sock_rx.c): what a connection whose
# reader does not read can hold, and the window dropped data gives back.
$(eval $(call socket_test,sock_rx))

# Pure ACKs merged and kept while the ring is full (net/netif_ack.c), over
# the socket harness's lwIP; the driver and the TSO runs played by the test.
$(eval $(call socket_test,netif_ack,,tests/unit/test_netif_ack.c))
UNIT_SRCS_netif_ack += net/netif_ack.c net/frame.c

# The data path's copy routines (net/copy.c).
UNIT_TESTS += copy
UNIT_SRCS_copy := net/copy.c kernel/options.c $(UNIT_PANIC)
UNIT_CFLAGS_copy := $(SOCKET_TEST_INCLUDES)
UNIT_DEPS_copy := net/net_internal.h kernel/options.h
UNIT_ORDER_copy := $(LWIP_STAMP)

# Each design switch on its naive side (kernel/switches.h), one build per
# switch with only that one off, one with all on and one with all off
# (tests/unit/test_switches.c; names and macros from mk/variants.mk).
SWITCHES_MAIN := tests/unit/test_switches.c
$(eval $(call socket_test,switches_all,,$(SWITCHES_MAIN)))
$(eval $(call socket_test,switches_baseline,$(foreach s,$(SWITCH_NAMES),-D$(SWITCH_MACRO_$(s))=0),$(SWITCHES_MAIN)))
$(foreach s,$(SWITCH_NAMES),$(eval $(call socket_test,switches_naive_$(s),-D$(SWITCH_MACRO_$(s))=0,$(SWITCHES_MAIN))))

# virtio-mmio (issue 38): the command line's window entries, and the
# transport's probe, queues, configuration and interrupt line over fake
# register windows (the PCI transport stands in as never reached).
UNIT_TESTS += mmio_windows
UNIT_SRCS_mmio_windows := kernel/mmio_windows.c

UNIT_TESTS += virtio_mmio
UNIT_SRCS_virtio_mmio := drivers/virtio/virtio_mmio.c drivers/virtio/virtio_dev.c drivers/virtio/virtqueue.c \
                         kernel/mmio_windows.c $(UNIT_PANIC)
UNIT_DEPS_virtio_mmio := $(wildcard drivers/virtio/*.h) kernel/mmio_windows.h kernel/kernel.h kernel/mem.h

# The lock-free ring one CPU hands work to another through (issue 39),
# header-only: one thread each side as well as the single-threaded cases.
UNIT_TESTS += spsc
UNIT_SRCS_spsc :=
UNIT_DEPS_spsc := kernel/spsc.h
UNIT_LIBS_spsc := -lpthread

# The pause-loop exits a KVM host's default pause filters would take for a
# spin (issue 39, item 5), header-only.
UNIT_TESTS += ple
UNIT_SRCS_ple :=
UNIT_DEPS_ple := kernel/ple.h
