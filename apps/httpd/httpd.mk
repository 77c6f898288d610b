# httpd.mk: the HTTP benchmark app (apps/httpd), for both guests.
#
# $(HTTPD_HOST) is the static Linux build: it runs natively (the `native`
# guest of the benchmark, the loopback integration test) and inside the Linux
# guest's initramfs. $(BUILD)/apps/httpd.elf is the unikernel build of the
# same sources (newlib and the project's socket layer, through apps.mk's
# app_image); http.c/httpd.c carry no #ifdef for either target. Both wait
# with poll() (ready_poll.c).
#
# $(HTTPD_EPOLL) is the same static Linux build with epoll behind the loop's
# wait (ready_epoll.c in place of ready_poll.c, see ready.h): the Linux
# guest's /bin/httpd-epoll (the benchmark's linux-epoll guest), so the cost
# of poll() itself can be told apart from the rest of the server.

HTTPD_COMMON := apps/httpd/httpd.c apps/httpd/conn.c apps/httpd/guard.c apps/httpd/http.c \
		apps/httpd/body.c $(APP_COMMON_SRCS)
HTTPD_SRCS   := $(HTTPD_COMMON) apps/httpd/ready_poll.c
HTTPD_HDRS   := apps/httpd/http.h apps/httpd/httpd.h apps/httpd/ready.h $(APP_COMMON_HDRS)
HTTPD_HOST   := $(BUILD)/host/httpd
HTTPD_EPOLL  := $(BUILD)/host/httpd-epoll
HTTPD_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror

$(HTTPD_HOST): $(HTTPD_SRCS) $(HTTPD_HDRS) apps/httpd/httpd.mk | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) $(HTTPD_CFLAGS) -static -I. -o $@ $(HTTPD_SRCS)

$(HTTPD_EPOLL): $(HTTPD_COMMON) apps/httpd/ready_epoll.c $(HTTPD_HDRS) apps/httpd/httpd.mk | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) $(HTTPD_CFLAGS) -static -I. -o $@ $(HTTPD_COMMON) apps/httpd/ready_epoll.c

$(eval $(call app_image,httpd,$(HTTPD_SRCS)))

.PHONY: httpd-host
httpd-host: $(HTTPD_HOST) $(HTTPD_EPOLL)

TEST_DEPS += $(HTTPD_HOST) $(HTTPD_EPOLL)
