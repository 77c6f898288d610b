# fuzz.mk: libFuzzer harnesses (clang) for the code that reads untrusted
# input, with AddressSanitizer and UndefinedBehaviorSanitizer, and their
# replays (gcc) that make test runs.
#
#   make fuzz                 every harness for FUZZ_SECS seconds (default 60)
#   make fuzz FUZZ=http       one of them
#   make fuzz-build           build only
#
# Each harness keeps its seed corpus in tests/fuzz/corpus/NAME (committed; its
# regressions in tests/fuzz/regress/NAME seed it too); what a run discovers
# goes to build/fuzz/corpus/NAME, crashes to build/fuzz/crashes/NAME. A crash,
# once fixed, goes to tests/fuzz/regress/NAME (see tests/fuzz/regress/README).
#
# A harness is tests/fuzz/fuzz_NAME.c, listed in FUZZ_TARGETS with
#   FUZZ_SRCS_NAME   := the project sources it feeds
# and, when it needs more, any of
#   FUZZ_CFLAGS_NAME := extra compiler flags (include paths, -include)
#   FUZZ_LIBS_NAME   := archives built for it with clang (libFuzzer build)
#   REPLAY_LIBS_NAME := the same built with gcc (replay build)
#   FUZZ_DEPS_NAME   := further files whose change rebuilds it (headers)
#   FUZZ_ORDER_NAME  := what must exist first (e.g. $(LWIP_STAMP))
#
# Replays: tests/fuzz/replay.c is a main() that calls the harness on every
# file of tests/fuzz/corpus/NAME and tests/fuzz/regress/NAME; linked with each
# harness by the host gcc with ASan+UBSan (UNIT_CFLAGS), so make test needs no
# clang. They run in make test-unit, after the cmocka tests, and a crash on any
# file fails it.

FUZZ_CC      ?= clang
FUZZ_SECS    ?= 60
FUZZ_CFLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I.
FUZZ_TARGETS := http cmdline image virtqueue netrx iperf floor dsdt
FUZZ         ?= $(FUZZ_TARGETS)

FUZZ_PKG_STAMP := $(DEPS)/.fuzz-packages.stamp
$(FUZZ_PKG_STAMP): | $(PKG_STAMP)
	$(Q)mk/deps.sh fuzz
	@touch $@

FUZZ_SRCS_http      := apps/httpd/http.c apps/httpd/body.c
FUZZ_SRCS_cmdline   := kernel/cmdline.c kernel/mmio_windows.c
FUZZ_SRCS_image     := loader/image.c
# dsdt: the virtio-mmio devices of a DSDT's AML (issue 38); seeds from
# tests/fuzz/dsdt_seeds.py.
FUZZ_SRCS_dsdt      := kernel/acpi_dsdt.c kernel/acpi_aml.c kernel/acpi_crs.c kernel/mmio_windows.c
FUZZ_DEPS_dsdt      := kernel/acpi.h kernel/acpi_aml.h kernel/mmio_windows.h
FUZZ_SRCS_virtqueue := drivers/virtio/virtqueue.c
FUZZ_SRCS_iperf     := apps/iperf/session.c apps/iperf/proto.c apps/iperf/json.c
FUZZ_DEPS_iperf     := $(wildcard apps/iperf/*.h)
# floor: the floor's receive path (apps/floor) on frames, the driver played
# by the harness, which checks every frame the floor sends.
FUZZ_SRCS_floor     := apps/floor/link.c apps/floor/tcp.c apps/floor/answer.c apps/httpd/http.c
FUZZ_DEPS_floor     := apps/floor/floor.h apps/httpd/http.h kernel/kernel.h drivers/virtio/virtio.h

# ---- netrx: a raw virtio-net buffer through the driver, lwIP and the sockets --
# lwIP is built twice more for it, with the guest's configuration except that
# its pools and heap come from malloc (tests/fuzz/netrx/lwipopts.h, found
# before net/'s), so ASan sees its objects: with clang and the fuzzer's
# coverage for make fuzz, with gcc for the replay. The socket layer's POSIX
# names are renamed uk_* on the host as in its unit test (rename.h).

NETRX_INCLUDES := -include tests/unit/socket/rename.h -Itests/fuzz/netrx -Inet/include \
                  -Ikernel/include -Inet -I$(LWIP_DIR)/src/include
NETRX_LWIP_CONFIG := tests/fuzz/netrx/lwipopts.h net/lwipopts.h net/arch/cc.h net/lwip_hooks.h \
                     tests/unit/socket/rename.h
FUZZ_LWIP_LIB   := $(BUILD)/fuzz/lwip/liblwip.a
REPLAY_LWIP_LIB := $(BUILD)/tests/fuzz/lwip/liblwip.a

$(BUILD)/fuzz/lwip/%.o: $(LWIP_DIR)/%.c $(NETRX_LWIP_CONFIG) tests/fuzz/fuzz.mk | $(LWIP_STAMP) $(FUZZ_PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,FUZZCC,$<)$(FUZZ_CC) -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -w -I. \
		$(NETRX_INCLUDES) -c -o $@ $<
$(BUILD)/tests/fuzz/lwip/%.o: $(LWIP_DIR)/%.c $(NETRX_LWIP_CONFIG) tests/fuzz/fuzz.mk | $(LWIP_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$<)$(HOST_CC) $(UNIT_BASE_CFLAGS) -w -I. $(NETRX_INCLUDES) -c -o $@ $<
$(FUZZ_LWIP_LIB): $(LWIP_SRCS:%.c=$(BUILD)/fuzz/lwip/%.o)
	$(Q)rm -f $@
	$(call say,AR,$@)ar rcs $@ $^
$(REPLAY_LWIP_LIB): $(LWIP_SRCS:%.c=$(BUILD)/tests/fuzz/lwip/%.o)
	$(Q)rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

FUZZ_SRCS_netrx := tests/fuzz/netrx/host.c tests/fuzz/netrx/device.c tests/unit/socket/fdcalls.c \
                   drivers/virtio/virtio_net.c drivers/virtio/vnet_rx.c drivers/virtio/vnet_tx.c \
                   drivers/virtio/virtqueue.c net/netif_gso.c net/netif_ack.c net/frame.c \
                   net/net.c net/netif.c net/stats.c $(NET_SOCKET_SRCS) net/udp.c net/inet.c net/tcp_hooks.c \
                   kernel/fd.c kernel/poll.c kernel/executor.c kernel/spinwin.c kernel/trace.c kernel/options.c
FUZZ_CFLAGS_netrx := $(NETRX_INCLUDES)
FUZZ_LIBS_netrx   := $(FUZZ_LWIP_LIB)
REPLAY_LIBS_netrx := $(REPLAY_LWIP_LIB)
FUZZ_DEPS_netrx   := $(NETRX_LWIP_CONFIG) $(wildcard tests/fuzz/netrx/*.h drivers/virtio/*.h net/*.h \
                     kernel/*.h kernel/include/*.h kernel/include/sys/*.h net/include/*/*.h)
FUZZ_ORDER_netrx  := $(LWIP_STAMP)

# ---- building and running --------------------------------------------------------

define fuzz_rule
$(BUILD)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1)) $(FUZZ_LIBS_$(1)) $(FUZZ_DEPS_$(1)) \
		| $(FUZZ_PKG_STAMP) $(FUZZ_ORDER_$(1))
	@mkdir -p $$(@D)
	$$(call say,FUZZCC,$$@)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_CFLAGS_$(1)) -o $$@ tests/fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1)) \
		$(FUZZ_LIBS_$(1))
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_rule,$(t))))

define replay_rule
$(BUILD)/tests/fuzz/replay_$(1): tests/fuzz/replay.c tests/fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1)) \
		$(REPLAY_LIBS_$(1)) $(FUZZ_DEPS_$(1)) | $(PKG_STAMP) $(FUZZ_ORDER_$(1))
	@mkdir -p $$(@D)
	$$(call say,HOSTCC,$$@)$(HOST_CC) $(UNIT_CFLAGS) $(FUZZ_CFLAGS_$(1)) -DREPLAY_NAME='"$(1)"' -o $$@ tests/fuzz/replay.c \
		tests/fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1)) $(REPLAY_LIBS_$(1))
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call replay_rule,$(t))))

# The replays join the unit stage: tests.mk's test-unit runs every program in
# UNIT_BINS (its recipe reads the variable when it runs, after this file), and
# needs them built first.
FUZZ_REPLAY_BINS := $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/replay_%)
UNIT_BINS += $(FUZZ_REPLAY_BINS)
test-unit: $(FUZZ_REPLAY_BINS)

.PHONY: fuzz fuzz-build test-fuzz-replay
fuzz-build: $(FUZZ:%=$(BUILD)/fuzz/fuzz_%)

# The replays alone.
test-fuzz-replay: $(FUZZ_REPLAY_BINS)
	@fail=0; for t in $(FUZZ_REPLAY_BINS); do echo "== $$t"; $$t || fail=1; done; exit $$fail

fuzz: fuzz-build
	@for t in $(FUZZ); do \
		mkdir -p $(BUILD)/fuzz/corpus/$$t $(BUILD)/fuzz/crashes/$$t; \
		echo "== fuzz_$$t for $(FUZZ_SECS) s"; \
		$(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECS) -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/fuzz/crashes/$$t/ \
			$(BUILD)/fuzz/corpus/$$t tests/fuzz/corpus/$$t $$(ls -d tests/fuzz/regress/$$t 2>/dev/null) 2>&1 | \
			grep -E '^(stat::number_of_executed_units|stat::new_units_added|==[0-9]+==ERROR|SUMMARY|netrx:|panic:)' ; \
		test -z "$$(ls -A $(BUILD)/fuzz/crashes/$$t)" || { echo "fuzz_$$t: crash in $(BUILD)/fuzz/crashes/$$t"; exit 1; }; \
	done
