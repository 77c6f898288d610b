# httpd.mk: the HTTP benchmark app (apps/httpd), built for the host.
#
# $(HTTPD_HOST) is the static Linux build: it runs natively (the `native`
# guest of the benchmark, the loopback integration test) and inside the Linux
# guest's initramfs. The unikernel build of the same sources (newlib and the
# project's socket layer) belongs to the apps' own rules: HTTPD_SRCS lists
# what it needs, and http.c/httpd.c carry no #ifdef for either target.

HTTPD_SRCS   := apps/httpd/httpd.c apps/httpd/http.c
HTTPD_HDRS   := apps/httpd/http.h
HTTPD_HOST   := $(BUILD)/host/httpd
HTTPD_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror

$(HTTPD_HOST): $(HTTPD_SRCS) $(HTTPD_HDRS) apps/httpd/httpd.mk | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(or $(HOST_CC),gcc) $(HTTPD_CFLAGS) -static -o $@ $(HTTPD_SRCS)

.PHONY: httpd-host
httpd-host: $(HTTPD_HOST)

TEST_DEPS += $(HTTPD_HOST)
