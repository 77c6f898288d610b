# httpd.mk: the HTTP benchmark app (apps/httpd), for both guests.
#
# $(HTTPD_HOST) is the static Linux build: it runs natively (the `native`
# guest of the benchmark, the loopback integration test) and inside the Linux
# guest's initramfs. $(BUILD)/apps/httpd.elf is the unikernel build of the
# same sources (newlib and the project's socket layer, through apps.mk's
# app_image); http.c/httpd.c carry no #ifdef for either target.

HTTPD_SRCS   := apps/httpd/httpd.c apps/httpd/conn.c apps/httpd/guard.c apps/httpd/http.c \
		apps/httpd/body.c
HTTPD_HDRS   := apps/httpd/http.h apps/httpd/httpd.h
HTTPD_HOST   := $(BUILD)/host/httpd
HTTPD_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror

$(HTTPD_HOST): $(HTTPD_SRCS) $(HTTPD_HDRS) apps/httpd/httpd.mk | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) $(HTTPD_CFLAGS) -static -o $@ $(HTTPD_SRCS)

$(eval $(call app_image,httpd,$(HTTPD_SRCS)))

.PHONY: httpd-host
httpd-host: $(HTTPD_HOST)

TEST_DEPS += $(HTTPD_HOST)
