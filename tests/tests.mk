# tests.mk: `make test` = host unit tests (cmocka) + integration tests (QEMU).
#
# A unit test is tests/unit/test_NAME.c, registered in tests/unit/unit.mk with
#   UNIT_TESTS += NAME
#   UNIT_SRCS_NAME := the project sources it tests (pure C, built for the host)
# and, when it needs more than that, any of
#   UNIT_CFLAGS_NAME := extra compiler flags (include paths, -D switches, -include)
#   UNIT_LIBS_NAME   := objects or archives built by rules of their own (e.g. a
#                       third-party library built for the host), linked in
#   UNIT_DEPS_NAME   := further files whose change rebuilds it (headers,
#                       sources it #includes rather than lists)
#   UNIT_MAIN_NAME   := the test's own source when it is not tests/unit/test_NAME.c
#                       (one source built several ways, e.g. test_switches.c)
#   UNIT_ORDER_NAME  := order-only prerequisites: what must exist first but
#                       whose timestamp does not matter, e.g. $(LWIP_STAMP) so
#                       a fresh clone fetches lwIP before compiling against it
# Each test is one gcc command over its file and sources, with UNIT_CFLAGS
# (-Werror, ASan, UBSan). Code a test builds but we do not own uses
# UNIT_BASE_CFLAGS (same language level and sanitizers, no warning flags).
# tests/fuzz/fuzz.mk adds its corpus replays (tests/fuzz/replay.c) to
# UNIT_BINS, so make test-unit runs them after these tests.
# An integration test is an executable tests/integration/SUBJECT/NN-name.sh
# (docs/testing.md lists the folders; the number is the test's alone): exit 0
# passes, 77 skips, anything else fails. tests/run-integration runs them all,
# or the folders, numbers, paths or name parts in TESTS, and prints KTAP.

HOST_CC      ?= gcc
UNIT_BASE_CFLAGS := -std=gnu11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -DUNIT_TEST
UNIT_CFLAGS  := $(UNIT_BASE_CFLAGS) -Wall -Wextra -Werror -I. -Iinclude

include tests/unit/unit.mk

UNIT_BINS    := $(UNIT_TESTS:%=$(BUILD)/tests/unit/test_%)

define unit_rule
$(BUILD)/tests/unit/test_$(1): $(or $(UNIT_MAIN_$(1)),tests/unit/test_$(1).c) $(UNIT_SRCS_$(1)) \
		$(UNIT_LIBS_$(1)) $(UNIT_DEPS_$(1)) $(wildcard tests/unit/*.h) | $(PKG_STAMP) $(UNIT_ORDER_$(1))
	@mkdir -p $$(@D)
	$$(call say,HOSTCC,$$@)$(HOST_CC) $(UNIT_CFLAGS) $(UNIT_CFLAGS_$(1)) -o $$@ $(or $(UNIT_MAIN_$(1)),tests/unit/test_$(1).c) \
		$(UNIT_SRCS_$(1)) $(UNIT_LIBS_$(1)) -lcmocka
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_rule,$(t))))

# Images and tools the integration tests boot; layers add to it.
TEST_DEPS += all

.PHONY: test test-unit test-integration test-microvm test-smp test-bench
test: test-unit test-integration test-microvm test-smp

test-unit: $(UNIT_BINS)
	@fail=0; for t in $(UNIT_BINS); do echo "== $$t"; $$t || fail=1; done; exit $$fail

# MACHINE=microvm runs the tests on that machine: qemu-run's default machine
# becomes microvm (QEMU_MACHINE), booting a loader and image by the loader
# and an image alone by PVH; BOOT=loader|pvh picks the boot of the tests
# that boot through tests/integration/lib/boot.sh. The default is the PC
# machine and the loader.
test-integration: $(TEST_DEPS)
	BUILD=$(BUILD) MACHINE=$(MACHINE) QEMU_MACHINE=$(MACHINE) BOOT=$(BOOT) SMP_DESIGNS="$(SMP_DESIGNS)" \
		tests/run-integration $(TESTS)

# The PC machine's tests of the boot, the driver, httpd over every back-end,
# iperf both ways, UDP and hostile and slow peers, again on QEMU's microvm
# machine (virtio-mmio, the I/O APIC line, no PIT gate, no PC firmware
# tables); tests 25-28 are microvm's own and run with the rest.
MICROVM_TESTS ?= 00 07 10 30 31 43 33 34 35 46 47 48 53
test-microvm: $(TEST_DEPS)
	BUILD=$(BUILD) MACHINE=microvm QEMU_MACHINE=microvm tests/run-integration $(MICROVM_TESTS)

# The socket layer's tests again on two vCPUs (MTTCG), once for each SMP
# design of SMP_DESIGNS (mk/variants.mk): with SMP_DESIGN=NAME the helpers
# that boot an image boot the design's build of it, apps/APP-NAME.elf, with
# --smp 2 and smp=2, and skip a test whose app the design does not build
# (tests/integration/lib/design.sh). The list, what the socket layer does
# under load and against hostile peers, picked to add about 2 minutes a
# design to make test (docs/testing.md): hand-made TCP attacks (22, 24; 23,
# one connection pinning receive buffers where 24 has many, runs on one vCPU),
# httpd on tap (30), on user networking with QEMU's host CPU at idle (31),
# the socket calls in the guest and UDP (32, 33), slow and
# rude peers (34, 35), the short soak (36), floods (37), receive exhaustion
# (38), iperf both ways (46), smuggling (53). The stress of many short
# connections on both CPUs (76) is test-integration's, for every design.
# Each design's logs go to $(BUILD)/tests/integration/NAME/.
SMP_TESTS ?= 22 24 30 31 32 33 34 35 36 37 38 46 53
# The global lock is the baseline the network core is measured against:
# make test runs its soak and floods only (with test 76's stress), to keep
# CI within its time; make test-smp SMP_TESTS_smp-lock="$(SMP_TESTS)" runs
# the whole list on it, which passes.
SMP_TESTS_smp-lock ?= 36 37
smp_tests = $(or $(SMP_TESTS_$(1)),$(SMP_TESTS))
test-smp: $(TEST_DEPS)
	@fail=0; $(foreach d,$(SMP_DESIGNS),echo "== design $(d) at -smp 2: $(call smp_tests,$(d))"; \
		BUILD=$(BUILD) SMP_DESIGN=$(d) SMP_DESIGNS="$(SMP_DESIGNS)" \
			TEST_LOGDIR=$(BUILD)/tests/integration/$(d) tests/run-integration $(call smp_tests,$(d)) || fail=1;) \
	exit $$fail

# The benchmark harness's own tests (tests/integration/bench, 60-72: its
# scripts on fixed inputs, its guests and placements), alone; make test runs
# them with the rest.
BENCH_TESTS := bench
test-bench: $(TEST_DEPS)
	BUILD=$(BUILD) tests/run-integration $(BENCH_TESTS)
