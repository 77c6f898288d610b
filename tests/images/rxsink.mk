# rxsink.mk: rxsink, an app that stops reading while clients send (the
# receive-exhaustion test, 38-rx-exhaustion-tap).
$(eval $(call app_image,rxsink,tests/images/rxsink.c))
TEST_DEPS += $(BUILD)/apps/rxsink.elf
