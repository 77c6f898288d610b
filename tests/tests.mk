# tests.mk: `make test` = host unit tests (cmocka) + integration tests (QEMU).
#
# A unit test is tests/unit/test_NAME.c, registered in tests/unit/unit.mk with
#   UNIT_TESTS += NAME
#   UNIT_SRCS_NAME := the project sources it tests (pure C, built for the host)
# An integration test is an executable tests/integration/NN-name.sh: exit 0
# passes, 77 skips, anything else fails. tests/run-integration runs them all.

include tests/unit/unit.mk

HOST_CC      ?= gcc
UNIT_CFLAGS  := -std=gnu11 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined \
                -fno-sanitize-recover=all -DUNIT_TEST -I. -Iinclude
UNIT_BINS    := $(UNIT_TESTS:%=$(BUILD)/tests/unit/test_%)

define unit_rule
$(BUILD)/tests/unit/test_$(1): tests/unit/test_$(1).c $(UNIT_SRCS_$(1)) $(wildcard tests/unit/*.h) | $(PKG_STAMP)
	@mkdir -p $$(@D)
	$(HOST_CC) $(UNIT_CFLAGS) -o $$@ tests/unit/test_$(1).c $(UNIT_SRCS_$(1)) -lcmocka
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_rule,$(t))))

# Images and tools the integration tests boot; layers add to it.
TEST_DEPS += all

.PHONY: test test-unit test-integration
test: test-unit test-integration

test-unit: $(UNIT_BINS)
	@fail=0; for t in $(UNIT_BINS); do echo "== $$t"; $$t || fail=1; done; exit $$fail

test-integration: $(TEST_DEPS)
	BUILD=$(BUILD) tests/run-integration $(TESTS)
