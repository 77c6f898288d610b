# variants.mk: named builds of the httpd image with some of the design's
# switches (kernel/switches.h) turned to their naive side, so alternating
# builds can measure what each is worth, and builds that try the reference
# write-up's "ideas that were wrong" again.
#
#   make VARIANT=NAME     build/apps/httpd-NAME.elf (objects in build/variants/NAME),
#                         and beside it httpd-NAME.flags (its compiler flags, which
#                         the benchmark records: every variant is a release build,
#                         -DNDEBUG, KASSERTs off; `all` is the benchmark's uk guest),
#                         and the apps VARIANT_APPS_NAME lists beside it the same way,
#                         build/apps/APP-NAME.elf
#   make variants         every variant below
#   make list-variants    their names and what each changes
#
# Names: `baseline` (every switch off); the cumulative steps in the reference
# write-up's commit order, step1-timed-wait ... step10-timer-reload (= `all`);
# `all`; all-minus-SWITCH for each switch; and the ideas, each `all` with one
# change (IDEAS below).

# Switches in the write-up's order: short name -> macro in kernel/switches.h.
SWITCH_NAMES := timed-wait writev nodelay poll-when-due egress-list deadlines no-mark listener-flag spin-park timer-reload
SWITCH_MACRO_timed-wait    := SW_TIMED_WAIT
SWITCH_MACRO_writev        := SW_WRITEV_ONE_SEND
SWITCH_MACRO_nodelay       := SW_NODELAY
SWITCH_MACRO_poll-when-due := SW_POLL_WHEN_DUE
SWITCH_MACRO_egress-list   := SW_EGRESS_LIST
SWITCH_MACRO_deadlines     := SW_EGRESS_DEADLINES
SWITCH_MACRO_no-mark       := SW_READ_NO_MARK
SWITCH_MACRO_listener-flag := SW_LISTENER_FLAG
SWITCH_MACRO_spin-park     := SW_SPIN_THEN_PARK
SWITCH_MACRO_timer-reload  := SW_TIMER_NO_RELOAD

# The write-up's ideas that were wrong, each measured against `all`:
#   idea-zero-spin    park at once instead of spinning first (spin 0 us)
#   idea-backlog16    listen backlogs capped at 16 (resets under ab -c 64: counted)
#   idea-buf4k        4 KiB send buffers and a 4 KiB receive window
#   idea-accept-skip  listener readiness by walking the backlog (listener flag
#                     off) but with a count of waiting connections that lets
#                     accept() and the walk skip an empty backlog
#   idea-fast-wake    the NIC interrupt handler polls the network itself when it
#                     wakes a parked wait, before the wait loop runs again
IDEAS := idea-zero-spin idea-backlog16 idea-buf4k idea-accept-skip idea-fast-wake
IDEA_CFLAGS_idea-zero-spin   := -DSPIN_NS_DEFAULT=0
IDEA_CFLAGS_idea-backlog16   := -DBACKLOG_MAX=16
IDEA_CFLAGS_idea-buf4k       := -DSOCK_BUF_BYTES=4096
IDEA_CFLAGS_idea-accept-skip := -DIDEA_ACCEPT_SKIP=1
IDEA_CFLAGS_idea-fast-wake   := -DIDEA_FAST_WAKE=1
VARIANT_OFF_idea-accept-skip := listener-flag
# The designs for more than one CPU (issue 39), each `all` with one turned on:
#   smp-lock          one global lock around the network, CPU 1 its loop (smp=2)
#   smp-netcore       CPU 1 owns the network; the app's calls reach it by rings (smp=2)
SMP_DESIGNS := smp-lock smp-netcore
IDEA_CFLAGS_smp-lock := -DSW_SMP_GLOBAL_LOCK=1
IDEA_CFLAGS_smp-netcore := -DSW_SMP_NET_CORE=1
# What a variant builds besides httpd: `all` the iperf server (make
# bench-bulk) and the floor (the benchmark's), each SMP design the iperf
# server, rxsink and sockcheck, whose tests make test-smp reruns at -smp 2.
VARIANT_APPS_all := iperf floor
$(foreach d,$(SMP_DESIGNS),$(eval VARIANT_APPS_$(d) := iperf rxsink sockcheck))
# Variants whose change reaches into lwIP's own options get a build of it.
IDEAS_OWN_LWIP := idea-buf4k

nswitches := $(words $(SWITCH_NAMES))
seq_n     := $(shell seq 1 $(nswitches))
step_name  = step$(1)-$(word $(1),$(SWITCH_NAMES))

VARIANTS := baseline $(foreach i,$(seq_n),$(call step_name,$(i))) all \
            $(SWITCH_NAMES:%=all-minus-%) $(IDEAS) $(SMP_DESIGNS)

# The switches each variant turns off.
VARIANT_OFF_baseline := $(SWITCH_NAMES)
VARIANT_OFF_all      :=
$(foreach i,$(seq_n),$(eval VARIANT_OFF_$(call step_name,$(i)) := \
	$(wordlist $(shell expr $(i) + 1),$(nswitches),$(SWITCH_NAMES))))
$(foreach s,$(SWITCH_NAMES),$(eval VARIANT_OFF_all-minus-$(s) := $(s)))

ifneq ($(VARIANT),)
ifeq ($(filter $(VARIANT),$(VARIANTS)),)
$(error unknown VARIANT '$(VARIANT)'; make list-variants shows the names)
endif
BUILD := build/variants/$(VARIANT)
# lwIP does not read the switches: every variant shares one build of it, but
# for those whose idea changes lwIP's options.
LWIP_BUILD := $(if $(filter $(VARIANT),$(IDEAS_OWN_LWIP)),$(BUILD)/net/lwip,build/net/lwip)
VARIANT_CFLAGS := $(foreach s,$(VARIANT_OFF_$(VARIANT)),-D$(SWITCH_MACRO_$(s))=0) \
                  $(IDEA_CFLAGS_$(VARIANT)) -DNDEBUG
.DEFAULT_GOAL := variant
endif

.PHONY: variant variants list-variants
variant:
	@test -n "$(VARIANT)" || { echo "usage: make VARIANT=NAME (make list-variants)" >&2; exit 2; }
	$(Q)$(MAKE) --no-print-directory VARIANT=$(VARIANT) $(BUILD)/apps/httpd.elf $(LOADER) \
		$(VARIANT_APPS_$(VARIANT):%=$(BUILD)/apps/%.elf)
	@mkdir -p build/apps
	$(Q)for app in httpd $(VARIANT_APPS_$(VARIANT)); do \
		cp $(BUILD)/apps/$$app.elf build/apps/$$app-$(VARIANT).elf && \
		echo '$(strip $(GUEST_CFLAGS))' >build/apps/$$app-$(VARIANT).flags || exit 1; \
	done
	@echo "built $(patsubst %,build/apps/%-$(VARIANT).elf,httpd $(VARIANT_APPS_$(VARIANT))) (off: $(or $(VARIANT_OFF_$(VARIANT)),nothing)$(if $(IDEA_CFLAGS_$(VARIANT)),; $(IDEA_CFLAGS_$(VARIANT))))"

variants: deps
	@for v in $(VARIANTS); do $(MAKE) --no-print-directory VARIANT=$$v variant || exit 1; done

list-variants:
	@$(foreach v,$(VARIANTS),echo "$(v): off $(or $(VARIANT_OFF_$(v)),nothing)$(if $(IDEA_CFLAGS_$(v)),; $(IDEA_CFLAGS_$(v)))";)

# The SMP designs' images (build/apps/httpd-smp-lock.elf, and the apps of
# VARIANT_APPS_smp-lock), which the integration tests of the designs boot
# (73, 74, 76, and make test-smp's reruns).
.PHONY: smp-designs
smp-designs: deps
	@for v in $(SMP_DESIGNS); do $(MAKE) --no-print-directory VARIANT=$$v variant >/dev/null || exit 1; done
TEST_DEPS += smp-designs
