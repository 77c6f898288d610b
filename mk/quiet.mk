# quiet.mk: one short line per build step, as Linux and Unikraft print them
# (`  CC      net/sock_io.c`, `  LD      build/apps/httpd.elf`), so that a
# warning stands out; `make V=1` prints the full commands instead, and
# `make -s` neither. What the compiler says (warnings, errors) shows either way.
#
# In a recipe:
#   $(call say,TAG,WHAT)COMMAND   the line "  TAG     WHAT", then COMMAND, which
#                                 is itself printed only under V=1
#   $(Q)COMMAND                   a step with no line of its own (rm, mkdir, a
#                                 script that reports itself), printed under V=1
# Tags: CC and AS (guest objects), HOSTCC (programs and objects for the host:
# the native servers, the unit tests and their lwIP), FUZZCC (libFuzzer
# builds, clang), LD, AR, OBJCOPY, GEN (generated files).

V ?= 0
ifeq ($(V),1)
Q :=
say =
else
Q := @
ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
say = @
else
say = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif
endif
