# bench.mk: the Linux guest and the benchmark (`make bench`).
#
#   make linux-guest     Debian's kernel + our initramfs (init, httpd, virtio modules)
#                        The kernel is booted as the ELF inside the bzImage (QEMU's
#                        PVH entry): see bench/linux/extract-vmlinux.py for why.
#   make bench           the full benchmark (bench/run-bench; ~20 min here)
#   make bench QUICK=1   one short repetition: a smoke run of a few minutes
#   make bench-quick     the same
#   make bench-summary DIR=bench/results/<timestamp>   summarise a run again
# Settings pass through to bench/run-bench: GUESTS (e.g. "linux native
# uk:build/apps/httpd.elf"), BACKENDS (tap user), REPS, LOAD_SECS, REF, OUT.

LINUX_STAMP  := $(DEPS)/linux/.stamp
LINUX_DIR    := $(BUILD)/linux
LINUX_KERNEL := $(LINUX_DIR)/vmlinux
LINUX_INIT   := $(LINUX_DIR)/init
LINUX_INITRD := $(LINUX_DIR)/initrd.img

$(LINUX_STAMP): | $(PKG_STAMP)
	mk/deps.sh linux

$(LINUX_KERNEL): $(LINUX_STAMP) bench/linux/extract-vmlinux.py | $(PKG_STAMP)
	@mkdir -p $(@D)
	bench/linux/extract-vmlinux.py $$(ls $(DEPS)/linux/root/boot/vmlinuz-* | head -n1) $@

$(LINUX_INIT): bench/linux/init.c | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(or $(HOST_CC),gcc) -std=gnu11 -O2 -g -Wall -Wextra -Werror -static -o $@ $<

$(LINUX_INITRD): $(LINUX_INIT) $(HTTPD_HOST) bench/linux/mkinitramfs.sh $(LINUX_STAMP)
	bench/linux/mkinitramfs.sh $@ $(DEPS)/linux/root $(LINUX_INIT) $(HTTPD_HOST)

.PHONY: linux-guest bench bench-quick bench-summary
linux-guest: $(LINUX_KERNEL) $(LINUX_INITRD)

TEST_DEPS += linux-guest

# Only the settings given are passed: run-bench has its own defaults.
BENCH_ENV = BUILD=$(BUILD) $(foreach v,QUICK GUESTS BACKENDS REPS LOAD_SECS IDLE_SECS LOADS REF OUT,$(if $($(v)),$(v)='$($(v))'))

bench: $(HTTPD_HOST) linux-guest
	$(BENCH_ENV) bench/run-bench

bench-quick:
	$(MAKE) bench QUICK=1

bench-summary:
	@test -n "$(DIR)" || { echo "usage: make bench-summary DIR=bench/results/<timestamp>" >&2; exit 2; }
	python3 bench/summarise.py $(if $(REF),--ref $(REF)) $(DIR)
