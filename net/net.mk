# net.mk: the network layer: lwIP 2.1.3's core (raw API, IPv4, Ethernet; no
# threads, no sequential or socket API) and its port in net/, built into one
# archive that images link when they use the network.
#
# lwIP's sources stay in $(DEPS)/lwip (fetched by mk/deps.sh) and are named
# here one by one, so the list does not depend on whether deps/ is unpacked
# yet when make reads this file.

LWIP_DIR := $(DEPS)/lwip
LWIP_CORE_SRCS := def dns inet_chksum init ip mem memp netif pbuf raw stats sys tcp tcp_in \
                  tcp_out timeouts udp
LWIP_IPV4_SRCS := dhcp etharp icmp ip4 ip4_addr ip4_frag
LWIP_SRCS := $(LWIP_CORE_SRCS:%=src/core/%.c) $(LWIP_IPV4_SRCS:%=src/core/ipv4/%.c) \
             src/netif/ethernet.c
LWIP_BUILD ?= $(BUILD)/net/lwip
LWIP_OBJS := $(LWIP_SRCS:%=$(LWIP_BUILD)/%.o)

# The TCP socket layer (net/sock.h says which file holds what); the unit tests
# and the netrx fuzzer build the same list.
NET_SOCKET_SRCS := net/socket.c net/sock_opt.c net/sock_lwip.c net/sock_io.c net/sock_rx.c net/sock_egress.c net/sock_wait.c net/copy.c net/net_lock.c net/net_core.c
NET_SRCS := net/net.c net/netif.c net/netif_gso.c net/netif_ack.c net/frame.c net/sys_arch.c net/stats.c net/tcp_hooks.c $(NET_SOCKET_SRCS) \
            net/udp.c net/inet.c
NET_OBJS := $(NET_SRCS:%=$(BUILD)/%.o)
NET_LIB  := $(BUILD)/net/libnet.a

# lwipopts.h and arch/cc.h come from net/; our files include "kernel/kernel.h"
# and "drivers/virtio/virtio.h" from the top.
NET_INCLUDES := -I. -Inet/include -Inet -I$(LWIP_DIR)/src/include
# lwIP's own code is not ours to keep warning-free; ours must be.
LWIP_CFLAGS := $(GUEST_CFLAGS) $(NET_INCLUDES)
NET_CFLAGS  := $(GUEST_CFLAGS) -Werror $(NET_INCLUDES)

$(LWIP_BUILD)/%.c.o: $(LWIP_DIR)/%.c mk/toolchain.mk net/net.mk | $(LWIP_STAMP) $(NEWLIB_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)$(KCC) $(LWIP_CFLAGS) -c -o $@ $<
$(BUILD)/net/%.c.o: net/%.c mk/toolchain.mk net/net.mk | $(LWIP_STAMP) $(NEWLIB_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)$(KCC) $(NET_CFLAGS) -c -o $@ $<

$(NET_LIB): $(LWIP_OBJS) $(NET_OBJS)
	$(Q)rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

IMAGE_LIBS += $(NET_LIB)
# Apps include "net/net.h" and lwIP's raw API ("lwip/tcp.h").
IMAGE_APP_INCLUDES += $(NET_INCLUDES)

-include $(LWIP_OBJS:.o=.d) $(NET_OBJS:.o=.d)
