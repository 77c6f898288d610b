# lwip.mk: lwIP's core (the same files the guest links, net/net.mk's
# LWIP_SRCS) built for the host, into one archive the socket unit tests link.
# Configured by the guest's own net/lwipopts.h and net/arch/cc.h, so the TCP
# sizes and hooks are the guest's; compiled with the same forced rename
# header and sanitizers as the tests. lwIP is not our code: warnings do not
# fail its build (-w), as in the guest build.

LWIP_HOST_DIR := $(BUILD)/tests/unit/lwip
LWIP_HOST_LIB := $(LWIP_HOST_DIR)/liblwip.a
LWIP_HOST_OBJS := $(LWIP_SRCS:%.c=$(LWIP_HOST_DIR)/%.o)
# Include paths and the rename header, shared by lwIP and the tests' own files.
SOCKET_TEST_INCLUDES := -include tests/unit/socket/rename.h -Inet/include -Ikernel/include -Inet \
                        -I$(LWIP_DIR)/src/include
LWIP_HOST_CONFIG := net/lwipopts.h net/arch/cc.h net/lwip_hooks.h tests/unit/socket/rename.h

# The sources appear when the stamp's fetch has run. Naming them as targets
# of that fetch lets a fresh clone's make choose the pattern rule below before
# deps/lwip exists (a pattern rule whose prerequisite neither exists nor can
# be made is skipped).
$(LWIP_SRCS:%=$(LWIP_DIR)/%): | $(LWIP_STAMP) ;

$(LWIP_HOST_DIR)/%.o: $(LWIP_DIR)/%.c $(LWIP_HOST_CONFIG) tests/unit/socket/lwip.mk | $(LWIP_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$<)$(HOST_CC) $(UNIT_BASE_CFLAGS) -w -I. $(SOCKET_TEST_INCLUDES) -c -o $@ $<

$(LWIP_HOST_LIB): $(LWIP_HOST_OBJS)
	$(Q)rm -f $@
	$(call say,AR,$@)ar rcs $@ $^
