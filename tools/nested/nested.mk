# nested.mk: the nested-KVM host (L1) that runs our images under -accel kvm
# on a machine whose own /dev/kvm cannot (tools/nested/run-l1 says how).
#
#   make nested     the base archive of L1 (Debian's kernel and its KVM, tun
#                   and vhost modules, busybox-static, the host's QEMU, ab,
#                   curl, iperf3 and their libraries), the static tools the
#                   scenarios use, the Linux guests and the `all` variant;
#                   QEMU 10, which emulates the SVM CPU that L1's KVM runs
#                   on (QEMU 7.2's emulation loses L2's state under load:
#                   docs/kvm.md)
#   make bench-kvm  VM exits per request by reason (bench/run kvm: bench/specs/kvm.toml)
#   make bench-costs  what each primitive costs per accelerator (bench/run costs)
#   make kvm-stress   10 L1 boots of 10,000 new connections each (bench/run kvm-stress)
#   make bench-boot ACCELS=nested   boots to listening, VM exits by reason (bench/kvm/boot.sh)
#   make test       runs tests/integration/kvm/13-kvm-nested.sh with the rest

NESTED_DIR   := $(BUILD)/nested
NESTED_BASE  := $(NESTED_DIR)/l1-base.cpio.gz
NESTED_TOOLS := $(NESTED_DIR)/bin/udpcheck $(NESTED_DIR)/bin/rudepeer

$(NESTED_BASE): tools/nested/mkl1.sh tools/nested/l1-init $(LINUX_STAMP) | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,GEN,$@)tools/nested/mkl1.sh $@ $(DEPS)/linux/root

# The scenarios' own peers, static: L1 has none of their libraries.
$(NESTED_DIR)/bin/%: tools/nested/%.c | $(PKG_STAMP)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) -std=gnu11 -O2 -Wall -Wextra -Werror -static -o $@ $<

.PHONY: nested
nested: $(NESTED_BASE) $(NESTED_TOOLS) $(QEMU10_STAMP) $(LINUX_KERNEL) linux-guest all
	@$(MAKE) --no-print-directory VARIANT=all variant >/dev/null

TEST_DEPS += nested

# What each primitive costs under TCG (7.2, 10) and nested KVM.
.PHONY: bench-costs
bench-costs: nested $(BUILD)/apps/costs.elf
	bench/run costs

# VM exits per request by reason, our kernel against the Linux guest, per
# back-end in L1 (settings: bench/specs/kvm.toml).
.PHONY: bench-kvm
bench-kvm: nested
	bench/run kvm

# Does the guest ever wedge under KVM (bench/run kvm-stress)?
.PHONY: kvm-stress
kvm-stress: nested
	bench/run kvm-stress
