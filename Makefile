# Top-level build: one non-recursive make over the fragments each layer keeps
# beside its sources (*.mk). `make` installs what is missing, fetches and builds
# the third-party sources into deps/, then builds the loader and the images.
#
#   make            build everything (first run: install packages, fetch, build newlib)
#   make run        boot the default app under QEMU
#   make debug      boot it paused with a gdb stub and print the gdb command
#   make test       unit tests (host, cmocka) and integration tests (QEMU)
#   make clean      remove build/;  make distclean also removes deps/
#   make help       the targets and the settings that matter, one line each

ROOT   := $(CURDIR)
BUILD  := build
DEPS   := deps

.DEFAULT_GOAL := all
.SUFFIXES:
.DELETE_ON_ERROR:

include mk/quiet.mk

# ---- third-party dependencies (stamps make a second run a no-op) ----------
PKG_STAMP    := $(DEPS)/.packages.stamp
LWIP_STAMP   := $(DEPS)/lwip/.stamp
NEWLIB_STAMP := $(DEPS)/newlib/.stamp

$(PKG_STAMP): mk/deps.sh
	$(Q)mk/deps.sh packages
	@mkdir -p $(@D) && touch $@
$(LWIP_STAMP): | $(PKG_STAMP)
	$(Q)mk/deps.sh lwip
$(NEWLIB_STAMP): mk/deps.sh | $(PKG_STAMP)
	$(Q)mk/deps.sh newlib

.PHONY: deps
deps: $(PKG_STAMP) $(LWIP_STAMP) $(NEWLIB_STAMP)

include mk/variants.mk
include mk/toolchain.mk
include boot/boot.mk
include loader/loader.mk
include kernel/kernel.mk
include drivers/virtio/virtio.mk
include net/net.mk
include apps/apps.mk
-include $(wildcard tests/images/*.mk)
-include apps/httpd/httpd.mk
-include apps/iperf/iperf.mk
-include apps/floor/floor.mk
include tools/plugin/plugin.mk
-include bench/bench.mk
-include tools/nested/nested.mk
include tests/tests.mk
include tests/fuzz/fuzz.mk

.PHONY: all
all: deps $(LOADER) $(APP_IMAGES)

# ---- running ---------------------------------------------------------------
# `make run` serves the httpd image on 127.0.0.1:$(PORT); RUN_APP=iperf serves
# the iperf3 server on 127.0.0.1:5201 (PORT= to change; `iperf3 -c 127.0.0.1`);
# RUN_APP=hello (or any image) boots that one instead, with RUN_APPEND as its
# command line. The servers run under tools/serve: over passt where it is
# installed, else QEMU's user networking (NET=passt|user chooses); Ctrl-T
# prints the counters, Ctrl-C stops the server (docs/running.md).
# MACHINE=microvm runs it on QEMU's microvm machine, the image booted alone
# by its PVH entry (MACHINE=pc, the default: the loader boots it).
PORT       ?= 8080
MACHINE    ?= pc
RUN_APP    ?= httpd
RUN_APPEND ?= -- hello from make run
GDB_PORT   ?= 1234
# What qemu-run boots: the loader and the image, or on microvm the image alone.
RUN_FILES   = $(if $(filter microvm,$(MACHINE)),,$(LOADER)) $(BUILD)/apps/$(RUN_APP).elf

.PHONY: run debug
run: all
ifeq ($(RUN_APP),httpd)
	PORT=$(PORT) MACHINE=$(MACHINE) tools/serve $(BUILD)/apps/httpd.elf
else ifeq ($(RUN_APP),iperf)
	PORT=$(if $(filter command line environment,$(origin PORT)),$(PORT),5201) MACHINE=$(MACHINE) tools/serve $(BUILD)/apps/iperf.elf
else
	@echo "booting $(RUN_APP) under QEMU ($(or $(ACCEL),auto) accel); Ctrl-A X quits"
	tools/qemu-run --machine $(MACHINE) --append "$(RUN_APPEND)" $(RUN_FILES)
endif

debug: all
	@echo "QEMU waits for gdb on 127.0.0.1:$(GDB_PORT). In another terminal:"
	@echo "  gdb -ex 'target remote 127.0.0.1:$(GDB_PORT)' $(BUILD)/apps/$(RUN_APP).elf"
	@echo "(hbreak kernel_main, then continue; the loader's symbols: add-symbol-file $(BUILD)/loader/loader64.elf)"
	tools/qemu-run --machine $(MACHINE) --accel tcg --gdb $(GDB_PORT) --append "$(RUN_APPEND)" $(RUN_FILES)

.PHONY: clean distclean
clean:
	rm -rf $(BUILD)
	@# layouts.sh's worktrees lived under build/: drop git's records of them
	@git worktree prune 2>/dev/null || true
distclean: clean
	rm -rf $(DEPS)

# ---- help ------------------------------------------------------------------
.PHONY: help
help:
	@echo 'Targets:'
	@echo '  all (default)        install what is missing, fetch and build deps/, build the loader and images'
	@echo '  run                  serve httpd on 127.0.0.1:8080 under QEMU; Ctrl-T counters, Ctrl-C stops'
	@echo '  debug                boot RUN_APP paused under TCG with a gdb stub; prints the gdb command'
	@echo '  test                 test-unit, then test-integration'
	@echo '  test-unit            host unit tests (cmocka, ASan+UBSan) and the fuzz corpus replays'
	@echo '  test-integration     the QEMU integration tests (TESTS="30 31" for some)'
	@echo '  test-microvm         the PC machine's tests again on QEMU's microvm machine'
	@echo '  test-smp             the socket layer'"'"'s tests again at -smp 2, for each SMP design (SMP_DESIGNS)'
	@echo '  test-qemu10          the emulator-facing integration tests under QEMU 10 (fetches it)'
	@echo '  test-bench           the benchmark harness'"'"'s own tests (tests/integration/bench) alone'
	@echo '  fuzz                 every libFuzzer harness for FUZZ_SECS s (FUZZ=http for one)'
	@echo '  bench                the benchmark: Linux guest, unikernel, native (settings: bench/bench.mk)'
	@echo '  bench-quick          one short repetition of it'
	@echo '  bench-fixes          what each design switch is worth (variants against Linux)'
	@echo '  bench-bulk           iperf3 bulk transfers against each guest'
	@echo '  bench-boot           boot to first answer, guest boot time, memory: uk and Linux, pc and microvm'
	@echo '  nested               the nested-KVM host (L1) that runs our images under KVM'
	@echo '  bench-kvm            VM exits per request by reason, uk against Linux (nested KVM)'
	@echo '  bench-costs          what each primitive costs under TCG 7.2, TCG 10 and KVM'
	@echo '  kvm-stress           10 nested-KVM boots of 10,000 new connections each'
	@echo '  soak                 a long run that must fail no request and leak nothing'
	@echo '  density              how many instances serve at once, uk against Linux, pc and microvm'
	@echo '  linux-guest          the Linux guest (Debian kernel, our init and httpd)'
	@echo '  variants             every named variant; list-variants names them'
	@echo '  kernel-options-doc   write docs/kernel-options.md from the options table (kernel/options.c)'
	@echo '  clean                remove build/; distclean also removes deps/'
	@echo 'Settings:'
	@echo '  V=1                  print full commands instead of "  CC  file" lines'
	@echo '  RUN_APP=NAME         what make run and debug boot: httpd (default), iperf, hello, any image'
	@echo '  RUN_APPEND="..."     kernel options and argv for RUN_APP other than httpd and iperf'
	@echo '  PORT=8080            the host port make run forwards (iperf: 5201)'
	@echo '  NET=passt|user       make run'"'"'s back-end (default passt where installed, else user)'
	@echo '  ACCEL=tcg|kvm        QEMU'"'"'s accelerator (default kvm where usable, else tcg)'
	@echo '  QEMU=7.2|10|PATH     the emulator (10: deps/qemu10, fetched by mk/deps.sh qemu10)'
	@echo '  GDB_PORT=1234        make debug'"'"'s gdb stub'
	@echo '  VARIANT=NAME         build httpd with some design switches off (make list-variants)'
	@echo '  LAYOUT_PAD=N         link images with code and data moved by N bytes (docs/benchmarks.md)'
	@echo '  TESTS="NN ..."       the integration tests to run (folders, numbers or name parts)'
