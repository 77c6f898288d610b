# fuzz.mk: libFuzzer harnesses (clang) for the code that reads untrusted
# input, with AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   make fuzz                 every harness for FUZZ_SECS seconds (default 60)
#   make fuzz FUZZ=http       one of them
#   make fuzz-build           build only
#
# Each harness keeps its seed corpus in tests/fuzz/corpus/NAME (committed);
# what a run discovers goes to build/fuzz/corpus/NAME, crashes to
# build/fuzz/crashes/NAME. A crash found becomes a regression test in make test.

FUZZ_CC      ?= clang
FUZZ_SECS    ?= 60
FUZZ_CFLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I.
FUZZ_TARGETS := http cmdline image virtqueue
FUZZ         ?= $(FUZZ_TARGETS)

FUZZ_SRCS_http      := apps/httpd/http.c
FUZZ_SRCS_cmdline   := kernel/cmdline.c
FUZZ_SRCS_image     := loader/image.c
FUZZ_SRCS_virtqueue := drivers/virtio/virtqueue.c

FUZZ_PKG_STAMP := $(DEPS)/.fuzz-packages.stamp
$(FUZZ_PKG_STAMP): | $(PKG_STAMP)
	mk/deps.sh fuzz
	@touch $@

define fuzz_rule
$(BUILD)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1)) | $(FUZZ_PKG_STAMP)
	@mkdir -p $$(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $$@ tests/fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1))
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_rule,$(t))))

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ:%=$(BUILD)/fuzz/fuzz_%)

fuzz: fuzz-build
	@for t in $(FUZZ); do \
		mkdir -p $(BUILD)/fuzz/corpus/$$t $(BUILD)/fuzz/crashes/$$t; \
		echo "== fuzz_$$t for $(FUZZ_SECS) s"; \
		$(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECS) -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/fuzz/crashes/$$t/ \
			$(BUILD)/fuzz/corpus/$$t tests/fuzz/corpus/$$t 2>&1 | \
			grep -E '^(stat::number_of_executed_units|stat::new_units_added|==[0-9]+==ERROR|SUMMARY)' ; \
		test -z "$$(ls -A $(BUILD)/fuzz/crashes/$$t)" || { echo "fuzz_$$t: crash in $(BUILD)/fuzz/crashes/$$t"; exit 1; }; \
	done
