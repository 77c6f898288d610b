# plugin.mk: the instruction-counting TCG plugin (tools/plugin/insncount.c).
#
#   make plugin          build/plugin/insncount-7.2.so, for the system's QEMU
#   make plugin QEMU=10  and build/plugin/insncount-10.so, for deps/qemu10
#                        (also when EMULATORS names 10)
#
# A plugin loads only into a QEMU of its API version, so each is built
# against the qemu-plugin.h of its own QEMU's source package (mk/deps.sh
# qemu-plugin, qemu10-plugin: the header alone, in deps/qemu-plugin/). The
# 7.2 build depends on the system package's file list, which dpkg rewrites
# when it upgrades QEMU: the header of the new version is fetched and the
# plugin built again. QEMU 10's header includes
# glib's (libglib2.0-dev, which mk/deps.sh installs with it).
# tools/qemu-run --count loads the one that matches the emulator, from
# $BUILD/plugin (as test 14 does): so the plugins land under $(BUILD) here,
# and make bench COUNT=1, which names them as prerequisites, builds the file
# that qemu-run then looks for whatever BUILD (or VARIANT) is.

PLUGIN_DIR    := $(BUILD)/plugin
PLUGIN_72     := $(PLUGIN_DIR)/insncount-7.2.so
PLUGIN_10     := $(PLUGIN_DIR)/insncount-10.so
PLUGIN_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -shared -fPIC -pthread

$(PLUGIN_72): tools/plugin/insncount.c tools/plugin/plugin.mk mk/deps.sh \
		$(wildcard /var/lib/dpkg/info/qemu-system-x86.list) | $(PKG_STAMP)
	$(Q)mk/deps.sh qemu-plugin
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) $(PLUGIN_CFLAGS) -I$(DEPS)/qemu-plugin/7.2 -o $@ $<

$(PLUGIN_10): tools/plugin/insncount.c tools/plugin/plugin.mk mk/deps.sh | $(PKG_STAMP)
	$(Q)mk/deps.sh qemu10-plugin
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)$(or $(HOST_CC),gcc) $(PLUGIN_CFLAGS) -I$(DEPS)/qemu-plugin/10 $$(pkg-config --cflags glib-2.0) -o $@ $<

.PHONY: plugin
plugin: $(PLUGIN_72) $(if $(filter 10,$(QEMU) $(EMULATORS)),$(PLUGIN_10))

# The integration tests count instructions (test 14).
TEST_DEPS += $(PLUGIN_72)
