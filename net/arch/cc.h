/*
 * arch/cc.h: lwIP's compiler and platform port for this unikernel (x86-64,
 * gcc, newlib). It tells lwIP which standard headers exist, how to swap byte
 * order, where diagnostics and assertions go (the kernel console, panic), and
 * where random numbers come from.
 */
#ifndef NET_ARCH_CC_H
#define NET_ARCH_CC_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

/* newlib's ssize_t is a long. Without SSIZE_MAX lwIP would typedef its own
 * (int), which clashes with newlib's in any file that includes both. */
#ifndef SSIZE_MAX
#define SSIZE_MAX LONG_MAX
#endif

/* newlib provides stdint.h, inttypes.h, limits.h, errno.h and stdlib.h, so
 * lwIP's defaults (LWIP_NO_*_H = 0) stand. x86-64 is little-endian; say so
 * explicitly rather than rely on which libc header defined BYTE_ORDER first. */
#ifndef BYTE_ORDER
#define BYTE_ORDER LITTLE_ENDIAN
#endif

/* One instruction each instead of lwIP's portable shift-and-mask versions;
 * defining these makes def.c skip its own. */
#define lwip_htons(x) ((u16_t)__builtin_bswap16((u16_t)(x)))
#define lwip_htonl(x) ((u32_t)__builtin_bswap32((u32_t)(x)))

/* The kernel's console and panic (declared here too so lwIP's sources need
 * not see kernel.h; the declarations match it). */
int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);

/* lwIP's diagnostics (stats_display, LWIP_DEBUGF) take a parenthesised
 * printf argument list. */
#define LWIP_PLATFORM_DIAG(args) do { kprintf args; } while (0)
/* A failed lwIP assertion is a bug in the stack or in our use of it: stop
 * with a backtrace rather than run on with corrupted state. */
#define LWIP_PLATFORM_ASSERT(msg) panic("lwIP assertion \"%s\" failed at %s:%d", (msg), __FILE__, __LINE__)

/* Random numbers for DHCP transaction ids, ephemeral ports and the like:
 * RDRAND when the CPU has it, the TSC otherwise (see sys_arch.c). */
uint32_t net_random_u32(void);
#define LWIP_RAND() net_random_u32()

#endif
