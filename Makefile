# Top-level build: one non-recursive make over the fragments each layer keeps
# beside its sources (*.mk). `make` installs what is missing, fetches and builds
# the third-party sources into deps/, then builds the loader and the images.
#
#   make            build everything (first run: install packages, fetch, build newlib)
#   make run        boot the default app under QEMU
#   make debug      boot it paused with a gdb stub and print the gdb command
#   make test       unit tests (host, cmocka) and integration tests (QEMU)
#   make clean      remove build/;  make distclean also removes deps/

ROOT   := $(CURDIR)
BUILD  := build
DEPS   := deps

.DEFAULT_GOAL := all
.SUFFIXES:
.DELETE_ON_ERROR:

# ---- third-party dependencies (stamps make a second run a no-op) ----------
PKG_STAMP    := $(DEPS)/.packages.stamp
LWIP_STAMP   := $(DEPS)/lwip/.stamp
NEWLIB_STAMP := $(DEPS)/newlib/.stamp

$(PKG_STAMP): mk/deps.sh
	mk/deps.sh packages
	@mkdir -p $(@D) && touch $@
$(LWIP_STAMP): | $(PKG_STAMP)
	mk/deps.sh lwip
$(NEWLIB_STAMP): mk/deps.sh | $(PKG_STAMP)
	mk/deps.sh newlib

.PHONY: deps
deps: $(PKG_STAMP) $(LWIP_STAMP) $(NEWLIB_STAMP)

include mk/variants.mk
include mk/toolchain.mk
include loader/loader.mk
include kernel/kernel.mk
include drivers/virtio/virtio.mk
include net/net.mk
include apps/apps.mk
-include $(wildcard tests/images/*.mk)
-include apps/httpd/httpd.mk
-include apps/iperf/iperf.mk
include tools/plugin/plugin.mk
-include bench/bench.mk
include tests/tests.mk
include tests/fuzz/fuzz.mk

.PHONY: all
all: deps $(LOADER) $(APP_IMAGES)

# ---- running ---------------------------------------------------------------
# `make run` serves the httpd image on 127.0.0.1:$(PORT); RUN_APP=iperf serves
# the iperf3 server on 127.0.0.1:5201 (PORT= to change; `iperf3 -c 127.0.0.1`);
# RUN_APP=hello (or any image) boots that one instead, with RUN_APPEND as its
# command line.
PORT       ?= 8080
RUN_APP    ?= httpd
RUN_APPEND ?= -- hello from make run
GDB_PORT   ?= 1234

.PHONY: run debug
run: all
ifeq ($(RUN_APP),httpd)
	PORT=$(PORT) bench/serve $(BUILD)/apps/httpd.elf
else ifeq ($(RUN_APP),iperf)
	PORT=$(if $(filter command line environment,$(origin PORT)),$(PORT),5201) bench/serve $(BUILD)/apps/iperf.elf
else
	@echo "booting $(RUN_APP) under QEMU ($(or $(ACCEL),auto) accel); Ctrl-A X quits"
	bench/qemu-run --append "$(RUN_APPEND)" $(LOADER) $(BUILD)/apps/$(RUN_APP).elf
endif

debug: all
	@echo "QEMU waits for gdb on 127.0.0.1:$(GDB_PORT). In another terminal:"
	@echo "  gdb -ex 'target remote 127.0.0.1:$(GDB_PORT)' $(BUILD)/apps/$(RUN_APP).elf"
	@echo "(hbreak kernel_main, then continue; the loader's symbols: add-symbol-file $(BUILD)/loader/loader64.elf)"
	bench/qemu-run --accel tcg --gdb $(GDB_PORT) --append "$(RUN_APPEND)" $(LOADER) $(BUILD)/apps/$(RUN_APP).elf

.PHONY: clean distclean
clean:
	rm -rf $(BUILD)
distclean: clean
	rm -rf $(DEPS)
