# iperf.mk: the iperf3 server (apps/iperf), built for the host.
#
# $(IPERF_HOST) is the static Linux build: it runs natively (the bulk
# benchmark's `native` guest, test 45) and inside the Linux guest's initramfs
# (/bin/iperf). $(BUILD)/apps/iperf.elf is the unikernel build of the same
# sources (apps.mk's app_image); none of the files has an #ifdef for either
# target.

IPERF_SRCS   := apps/iperf/iperf.c apps/iperf/test.c apps/iperf/session.c apps/iperf/proto.c apps/iperf/json.c \
		$(APP_COMMON_SRCS)
IPERF_HDRS   := $(wildcard apps/iperf/*.h) $(APP_COMMON_HDRS)
IPERF_HOST   := $(BUILD)/host/iperf
IPERF_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror

$(IPERF_HOST): $(IPERF_SRCS) $(IPERF_HDRS) apps/iperf/iperf.mk | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) $(IPERF_CFLAGS) -static -I. -o $@ $(IPERF_SRCS)

# Its flags, for the bulk benchmark's meta.txt.
$(IPERF_HOST).flags: $(IPERF_HOST) apps/iperf/iperf.mk
	$(call say,GEN,$@)echo '$(or $(HOST_CC),gcc) $(IPERF_CFLAGS) -static ($(shell $(or $(HOST_CC),gcc) -dumpfullversion))' >$@

$(eval $(call app_image,iperf,$(IPERF_SRCS)))

.PHONY: iperf-host
iperf-host: $(IPERF_HOST)

TEST_DEPS += $(IPERF_HOST)
