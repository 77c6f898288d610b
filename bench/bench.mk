# bench.mk: the benchmark's guests and targets. Every batch is a spec of the
# one runner, bench/run (bench/specs/NAME.toml names its settings and their
# defaults; docs/benchmarks.md explains each batch and how to read it):
#
#   make bench             httpd in each guest under ab/wrk (spec bench; the
#                          runner prints its estimate; QUICK=1 or make
#                          bench-quick: a smoke run)
#   make bench-fixes       what each design switch is worth (spec fixes;
#                          FIXES_SET=steps|loo|ideas|all picks the variants)
#   make bench-bulk        iperf3 and large HTTP bodies (spec bulk)
#   make bench-boot        boot to first answer, the guest's own boot time and
#                          QEMU's memory, uk and Linux on pc and microvm (spec
#                          boot; QUICK=1: 2 boots each; MIN_MEM=1 bisects -m)
#   make soak              a long run that must fail and leak nothing (spec soak;
#                          SOAK_X sets its X)
#   make density           how many guests serve at once, started how fast, idle
#                          at what cost (spec density; QUICK=1: a few unikernels)
#   make bench-kvm, bench-costs, kvm-stress   the nested-KVM batches
#                          (tools/nested/nested.mk; specs kvm, costs, kvm-stress)
#   make bench-summary DIR=...   every table of a batch again (bench/run summarise)
#   make linux-guest, linux-nginx-guest, linux-iperf-guest   the Linux guests
#                          (docs/linux-guests.md)
#   make test-qemu10       the integration tests that exercise the emulator,
#                          under QEMU 10
# A setting given to make (`make bench REPS=3 GUESTS="linux uk"`) reaches the
# spec through the environment; COUNT=1 builds the instruction-counting
# plugin first. QEMU=7.2|10|PATH (make run, make test, make bench) reaches
# tools/qemu-run the same way.

# costs: what each primitive the design trades costs under what runs it
# (make bench-costs; built by `all`, so the build checks it).
$(eval $(call app_image,costs,bench/images/costs.c))

LINUX_STAMP  := $(DEPS)/linux/.stamp
LINUX_DIR    := $(BUILD)/linux
LINUX_KERNEL := $(LINUX_DIR)/vmlinux
LINUX_INIT   := $(LINUX_DIR)/init
LINUX_INITRD := $(LINUX_DIR)/initrd.img

$(LINUX_STAMP): | $(PKG_STAMP)
	$(Q)mk/deps.sh linux

$(LINUX_KERNEL): $(LINUX_STAMP) bench/linux/extract-vmlinux.py | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,GEN,$@)bench/linux/extract-vmlinux.py $$(ls $(DEPS)/linux/root/boot/vmlinuz-* | head -n1) $@

$(LINUX_INIT): bench/linux/init.c | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) -std=gnu11 -O2 -g -Wall -Wextra -Werror -static -o $@ $<

# The linux, linux-tuned and linux-epoll guests boot this one image: init's
# app= picks httpd (the default) or httpd-epoll.
$(LINUX_INITRD): $(LINUX_INIT) $(HTTPD_HOST) $(HTTPD_EPOLL) bench/linux/mkinitramfs.sh $(LINUX_STAMP)
	$(Q)bench/linux/mkinitramfs.sh $@ $(DEPS)/linux/root $(LINUX_INIT) $(HTTPD_HOST) /bin/httpd-epoll=$(HTTPD_EPOLL)

# The flags each benchmark image was built with, for meta.txt (the variants
# write theirs: mk/variants.mk).
$(HTTPD_HOST).flags: $(HTTPD_HOST) apps/httpd/httpd.mk
	$(call say,GEN,$@)echo '$(or $(HOST_CC),gcc) $(HTTPD_CFLAGS) -static ($(shell $(or $(HOST_CC),gcc) -dumpfullversion))' >$@
$(HTTPD_EPOLL).flags: $(HTTPD_EPOLL) apps/httpd/httpd.mk
	$(call say,GEN,$@)echo '$(or $(HOST_CC),gcc) $(HTTPD_CFLAGS) -static, ready_epoll.c ($(shell $(or $(HOST_CC),gcc) -dumpfullversion))' >$@
$(BUILD)/apps/httpd.flags: $(BUILD)/apps/httpd.elf mk/toolchain.mk
	$(call say,GEN,$@)echo '$(strip $(GUEST_CFLAGS))' >$@

# QEMU 10, for QEMU=10 or EMULATORS="... 10 ...": fetched on first use.
QEMU10_STAMP := $(DEPS)/qemu10/.stamp
$(QEMU10_STAMP): mk/deps.sh | $(PKG_STAMP)
	$(Q)mk/deps.sh qemu10
ifneq ($(filter 10,$(QEMU) $(EMULATORS)),)
deps: $(QEMU10_STAMP)
endif

.PHONY: linux-guest bench bench-quick bench-summary
linux-guest: $(LINUX_KERNEL) $(LINUX_INITRD)

TEST_DEPS += linux-guest $(HTTPD_HOST).flags $(HTTPD_EPOLL).flags

# ---- nginx: Debian's, for the linux-nginx and native-nginx guests ----------
# bench/nginx/nginx-run runs it as the benchmark runs httpd (options, the
# shutdown request, one exit status); the configuration it writes for nginx
# is bench/nginx/nginx.conf, built into it as a C string.
NGINX_PROG   := /usr/sbin/nginx
NGINX_RUN    := $(BUILD)/host/nginx-run
LINUX_NGINX_INITRD := $(LINUX_DIR)/initrd-nginx.img
$(NGINX_PROG): | $(PKG_STAMP)

$(BUILD)/host/nginx-conf.inc: bench/nginx/nginx.conf
	@mkdir -p $(@D)
	$(call say,GEN,$@)sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@

$(NGINX_RUN): bench/nginx/nginx-run.c $(APP_COMMON_SRCS) $(APP_COMMON_HDRS) $(BUILD)/host/nginx-conf.inc | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) -std=gnu11 -O2 -g -Wall -Wextra -Werror -static -I. -I$(BUILD)/host -o $@ \
		bench/nginx/nginx-run.c $(APP_COMMON_SRCS)

# What meta.txt says the native-nginx guest ran.
$(NGINX_RUN).flags: $(NGINX_RUN) $(NGINX_PROG)
	$(call say,GEN,$@)echo "$$($(NGINX_PROG) -v 2>&1 | sed 's/^nginx version: //') (Debian $$(dpkg-query -W -f='$${Version}' nginx)," \
		"$(NGINX_PROG)), bench/nginx/nginx.conf, run by nginx-run" >$@

$(LINUX_NGINX_INITRD): $(LINUX_INIT) $(HTTPD_HOST) $(NGINX_RUN) $(NGINX_PROG) bench/nginx/passwd bench/nginx/group \
		bench/linux/mkinitramfs.sh $(LINUX_STAMP)
	$(Q)bench/linux/mkinitramfs.sh $@ $(DEPS)/linux/root $(LINUX_INIT) $(HTTPD_HOST) /bin/nginx-run=$(NGINX_RUN) \
		/usr/sbin/nginx=$(NGINX_PROG) /etc/passwd=bench/nginx/passwd /etc/group=bench/nginx/group

.PHONY: linux-nginx-guest
linux-nginx-guest: $(LINUX_KERNEL) $(LINUX_NGINX_INITRD)
TEST_DEPS += linux-nginx-guest $(NGINX_RUN) $(NGINX_RUN).flags

# Only the settings given are passed: bench/specs/bench.toml has the defaults.
BENCH_SETTINGS := QUICK GUESTS BACKENDS EMULATORS PLACEMENTS PIN PIN_CORES SMP LOADGEN REPS LOAD_SECS \
	IDLE_SECS IDLE_REPS LOADS REF OUT MAX_LOAD FORCE LOADAVG_FILE BUSY_PCT INCLUDE_BUSY WRK_THREADS UK_HTTPD \
	UK_FLOOR ORDER COUNT COUNT_REPS COUNT_WARMUP
# COUNT=1 counts instructions: the plugin of every emulator the batch runs.
BENCH_PLUGINS = $(if $(filter 1,$(COUNT)),$(PLUGIN_72) $(if $(filter 10,$(QEMU) $(EMULATORS)),$(PLUGIN_10)))
BENCH_ENV = BUILD=$(BUILD) $(foreach v,$(BENCH_SETTINGS),$(if $($(v)),$(v)='$($(v))'))

# The host's own speed, recorded at the start and end of a batch.
HOSTPROBE := $(BUILD)/bench/hostprobe
$(HOSTPROBE): bench/hostprobe.c | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror -o $@ $<
TEST_DEPS += $(HOSTPROBE)

# Every bench target builds what its script needs, so none stops on a fresh
# clone asking for a make of its own: the uk guests boot $(LOADER) (the
# variant's own build under build/variants/ is not the one the scripts
# boot), COUNT=1 needs $(BENCH_PLUGINS).
bench: $(HTTPD_HOST) $(HTTPD_HOST).flags $(HTTPD_EPOLL).flags linux-guest linux-nginx-guest $(NGINX_RUN).flags \
		deps $(LOADER) $(HOSTPROBE) $(BENCH_PLUGINS)
	@$(MAKE) --no-print-directory VARIANT=all variant >/dev/null
	$(BENCH_ENV) bench/run bench

bench-quick:
	$(MAKE) bench QUICK=1

# bench/run summarise's settings from make's: REF, INCLUDE_BUSY.
SUMMARISE_FLAGS = $(if $(REF),--ref $(REF)) $(if $(filter 1,$(INCLUDE_BUSY)),--include-busy)

bench-summary:
	@test -n "$(DIR)" || { echo "usage: make bench-summary DIR=bench/results/<timestamp>" >&2; exit 2; }
	bench/run summarise $(SUMMARISE_FLAGS) $(DIR)

# The integration tests that exercise the emulator itself (boot, traps, the
# loader, virtio-net on each back-end, the Linux guest), under QEMU 10: about
# a minute here. CI may call it after make test (see .ci/run). TEST_DEPS
# is read here before tests/tests.mk adds `all` to it (the loader and the
# images every one of these tests boots), so `all` is named as well.
QEMU10_TESTS ?= 00 01 02 03 04 06 10 30 31 43 56 14 65
.PHONY: test-qemu10
test-qemu10: $(QEMU10_STAMP) $(TEST_DEPS) all $(PLUGIN_10)
	QEMU=10 BUILD=$(BUILD) tests/run-integration $(QEMU10_TESTS)

# ---- bench-fixes: the named variants against each other and Linux ----------
FIXES_SET ?= all
FIXES_STEPS := baseline $(foreach i,$(shell seq 1 $(words $(wordlist 2,$(nswitches),$(SWITCH_NAMES)))),$(call step_name,$(i))) all
FIXES_LOO   := all $(SWITCH_NAMES:%=all-minus-%)
FIXES_IDEAS := all $(IDEAS)
ifneq ($(filter-out 0,$(QUICK)),)
FIXES_VARIANTS := baseline all
else
# Each set's builds, `all` once however many sets name it.
fixes_once = $(if $1,$(firstword $1) $(call fixes_once,$(filter-out $(firstword $1),$1)))
FIXES_VARIANTS := $(strip $(call fixes_once,$(if $(filter steps all,$(FIXES_SET)),$(FIXES_STEPS)) \
	$(if $(filter loo all,$(FIXES_SET)),$(FIXES_LOO)) $(if $(filter ideas all,$(FIXES_SET)),$(FIXES_IDEAS))))
endif
FIXES_GUESTS := linux floor $(foreach v,$(FIXES_VARIANTS),$(v)=uk:build/apps/httpd-$(v).elf)

.PHONY: bench-fixes bench-fixes-report
bench-fixes: linux-guest deps $(LOADER) $(HOSTPROBE) $(BENCH_PLUGINS)
	@case "$(FIXES_SET)" in steps | loo | ideas | all) ;; *) echo "FIXES_SET must be steps, loo, ideas or all" >&2; exit 2 ;; esac
	@for v in $(FIXES_VARIANTS); do $(MAKE) --no-print-directory VARIANT=$$v variant >/dev/null || exit 1; done
	$(BENCH_ENV) GUESTS='$(FIXES_GUESTS)' bench/run fixes

bench-fixes-report:
	@test -n "$(DIR)" || { echo "usage: make bench-fixes-report DIR=bench/results/<folder>" >&2; exit 2; }
	bench/run summarise --kind fixes $(SUMMARISE_FLAGS) $(DIR)

# ---- soak: a long run that must fail nothing and leak nothing --------------
# Only the settings given are passed (SOAK_X becomes bench/specs/soak.toml's X).
SOAK_SETTINGS := KEEPALIVE NEW CONC_K CONC_N TIMEOUT SETTLE SETTLE_MAX WARM_ROUNDS HEADROOM TRIM_SLACK IMAGE SMP KOPTS OUT
SOAK_ENV = $(strip BUILD=$(BUILD) $(foreach v,$(SOAK_SETTINGS),$(if $(SOAK_$(v)),$(v)='$(SOAK_$(v))')))

.PHONY: soak
soak: all
	$(SOAK_ENV) bench/run soak

# ---- density: how many guests this host keeps serving at once --------------
# bench/specs/density.toml has the settings; only those given are passed.
DENSITY_SETTINGS := QUICK CONFIGS STEPS LINUX_STEPS MAX MEM LINUX_MEM SHARE PROBE_TIMEOUT PROBE_CONC BOOTING \
	BOOT_TIMEOUT SETTLE IDLE_SECS RESERVE_MIB LIFETIME ACCEL MEM_BACKEND UK_HTTPD OUT MAX_LOAD FORCE LOADAVG_FILE
DENSITY_ENV = BUILD=$(BUILD) $(foreach v,$(DENSITY_SETTINGS),$(if $($(v)),$(v)='$($(v))'))

.PHONY: density
density: all linux-guest
	@$(MAKE) --no-print-directory VARIANT=all variant >/dev/null
	$(DENSITY_ENV) bench/run density

# ---- the Linux guest for iperf (bench/run bulk, test 49) -------------------
#   make linux-iperf-guest   the same kernel, init and httpd, and the iperf3
# servers (ours, and Debian's with its libraries; init's app= picks one) in
# an initramfs of its own, so the HTTP benchmark's guest stays as it was:
# Debian's iperf3 and libcrypto add about 4 MB of gzip'd initramfs to unpack.
LINUX_IPERF_INITRD := $(LINUX_DIR)/initrd-iperf.img
IPERF3_PROG := /usr/bin/iperf3
$(IPERF3_PROG): | $(PKG_STAMP)

$(LINUX_IPERF_INITRD): $(LINUX_INIT) $(HTTPD_HOST) $(IPERF_HOST) $(IPERF3_PROG) bench/linux/mkinitramfs.sh $(LINUX_STAMP)
	$(Q)bench/linux/mkinitramfs.sh $@ $(DEPS)/linux/root $(LINUX_INIT) $(HTTPD_HOST) /bin/iperf=$(IPERF_HOST) \
		/bin/iperf3=$(IPERF3_PROG)

.PHONY: linux-iperf-guest
linux-iperf-guest: $(LINUX_KERNEL) $(LINUX_IPERF_INITRD)
TEST_DEPS += linux-iperf-guest

# ---- bulk transfers: iperf3 (and ab -k on big bodies) against each guest ---
# bench/specs/bulk.toml has the settings; only those given are passed.
BULK_ENV = BUILD=$(BUILD) $(foreach v,QUICK GUESTS LOADS HTTP_LOADS HTTP_PATH REPS SECS WARMUP KICKS OUT MAX_LOAD FORCE LOADAVG_FILE UK_IPERF UK_HTTPD BOOT_TIMEOUT,$(if $($(v)),$(v)='$($(v))'))

.PHONY: bench-bulk
bench-bulk: all $(IPERF_HOST) $(IPERF_HOST).flags $(HTTPD_HOST) $(HTTPD_HOST).flags linux-iperf-guest
	@$(MAKE) --no-print-directory VARIANT=all variant >/dev/null
	$(BULK_ENV) bench/run bulk

# ---- bench-boot: boot to first answer, guest boot time, memory --------------
# bench/specs/boot.toml has the settings; only those given are passed. The
# unikernel boots httpd-all.elf (the loader before it on pc, alone on
# microvm), the Linux guest vmlinux and initrd.img on both. ACCELS holding
# nested boots them under KVM in the nested-KVM host too (make nested's L1).
BOOT_ENV = BUILD=$(BUILD) $(foreach v,QUICK GUESTS MACHINES ACCELS BOOTS MEM TIMEOUT MIN_MEM MIN_MEM_LO \
	MIN_MEM_TIMEOUT COUNT OUT MAX_LOAD FORCE LOADAVG_FILE UK_HTTPD,$(if $($(v)),$(v)='$($(v))'))

.PHONY: bench-boot
bench-boot: all linux-guest $(HTTPD_HOST).flags $(if $(filter 1,$(COUNT)),$(PLUGIN_72)) \
		$(if $(filter nested,$(ACCELS)),nested)
	@$(MAKE) --no-print-directory VARIANT=all variant >/dev/null
	$(BOOT_ENV) bench/run boot
