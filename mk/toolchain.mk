# toolchain.mk: compilers and flags for code that runs inside the guest.
#
# The host gcc builds the guest: freestanding, no red zone (interrupts and
# exceptions run on the interrupted stack), no PIC, small code model (the image
# is linked at 4 MiB, well below 2 GiB), frame pointers kept and no
# sibling calls (the panic handler's backtrace walks the frames; a tail call
# would drop its caller from it). newlib in deps/ was built with the same flags,
# less the hardening: the stack protector (a global canary, set in start.S
# before any C runs; there is no TLS for gcc's default %fs canary) and
# _FORTIFY_SOURCE (newlib's checked string and stdio functions).

KCC    := gcc
KLD    := ld
NEWLIB := $(DEPS)/newlib/x86_64-elf
GCC_INCLUDE := $(shell $(KCC) -print-file-name=include)
LIBGCC := $(shell $(KCC) -print-libgcc-file-name)

# Flags every guest object shares (kernel, drivers, net, apps). kernel/include
# holds the POSIX headers newlib lacks that the kernel implements (poll, uio,
# ioctl); net/include those of the socket layer.
GUEST_CFLAGS := -std=gnu11 -O2 -g -ffreestanding -fno-pic -fno-pie -mno-red-zone \
                -mcmodel=small -fstack-protector-strong -mstack-protector-guard=global \
                -D_FORTIFY_SOURCE=2 -fno-omit-frame-pointer -fno-optimize-sibling-calls \
                -nostdinc -Ikernel/include -isystem $(NEWLIB)/include -isystem $(GCC_INCLUDE) \
                -D_POSIX_TIMERS=1 -D_POSIX_MONOTONIC_CLOCK=200112L \
                -Wall -Wextra -MMD -MP $(VARIANT_CFLAGS)

# Kernel-side code may not leave warnings behind.
KERNEL_CFLAGS := $(GUEST_CFLAGS) -Werror -I. -Ikernel

GUEST_LIBS := $(NEWLIB)/lib/libc.a $(NEWLIB)/lib/libm.a $(LIBGCC)
