/*
 * copy.c: the network path's byte copy, net_copy(), and the choice of its
 * routine at boot (net_copy_init). lwIP's MEMCPY (lwipopts.h) and the socket
 * layer's send buffer use it: every byte an application reads passes through
 * it (pbufs -> application), and so does a received frame copied out of the
 * driver's buffer into pool pbufs; every byte it writes passes twice
 * (application -> send buffer -> lwIP's segments). Its price per byte is a
 * price per byte of the whole path.
 *
 * What makes a copy cheap depends on what runs the guest:
 *   - Under TCG every guest instruction runs as translated code, and a string
 *     instruction with REP runs one translated iteration per element: `rep
 *     movsb` pays the emulator's loop once per byte. newlib's memcpy copies
 *     256 bytes and more with an unrolled loop of 8-byte stores, but uses
 *     `rep movsb` for the destination's alignment (up to 7 bytes) and for the
 *     last 0-127 bytes, and `rep movsq` below 256: a 1,460-byte segment pays
 *     about 50 single-byte iterations beside 11 turns of the loop. A loop of
 *     8-byte moves ending in one overlapping 8-byte move has no per-byte step.
 *   - On hardware and under KVM, `rep movsb` is the copy the processor
 *     makes fast where CPUID says so (ERMS), with stores that stay in the
 *     cache, where the reader of the copy looks next; newlib's big-copy loop
 *     stores around the cache (MOVNTI).
 *
 * Kernel option copy=libc|words|movsb chooses; the default is `words` under
 * TCG, `movsb` elsewhere when the CPU has ERMS, `words` otherwise. The
 * receive and transmit copies are counted (net/stats.c prints them).
 */
#include <string.h>
#include "kernel/arch.h"
#include "kernel/kernel.h"
#include "net_internal.h"

enum copy_routine {
	COPY_LIBC,  /* newlib's memcpy */
	COPY_WORDS, /* 8-byte moves, the last one overlapping */
	COPY_MOVSB, /* one `rep movsb` */
};

static const char *const routine_names[] = { "libc", "words", "movsb" };

/* memcpy until net_copy_init chooses (the host's test harnesses never do). */
static enum copy_routine routine = COPY_LIBC;

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	__builtin_memcpy(&v, p, sizeof v);
	return v;
}

static inline void store64(uint8_t *p, uint64_t v) { __builtin_memcpy(p, &v, sizeof v); }

/* GCC would turn these loops back into a call to memcpy, the routine they
 * replace, or into SSE moves, which TCG runs at half the speed of the
 * general registers' (each goes through the vCPU's register file in
 * memory). */
#if defined(__GNUC__) && !defined(__clang__)
#define PLAIN_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns", "no-tree-vectorize")))
#else
#define PLAIN_LOOP
#endif

static PLAIN_LOOP void copy_words(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n < 8) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
		return;
	}
	uint64_t last = load64(s + n - 8);
	size_t i = 0;
	for (; i + 64 <= n; i += 64) {
		uint64_t w0 = load64(s + i), w1 = load64(s + i + 8), w2 = load64(s + i + 16), w3 = load64(s + i + 24);
		uint64_t w4 = load64(s + i + 32), w5 = load64(s + i + 40), w6 = load64(s + i + 48);
		uint64_t w7 = load64(s + i + 56);
		store64(d + i, w0), store64(d + i + 8, w1), store64(d + i + 16, w2), store64(d + i + 24, w3);
		store64(d + i + 32, w4), store64(d + i + 40, w5), store64(d + i + 48, w6), store64(d + i + 56, w7);
	}
	for (; i + 8 <= n; i += 8)
		store64(d + i, load64(s + i));
	store64(d + n - 8, last); /* the 0-7 bytes left, and some again */
}

static void copy_movsb(uint8_t *d, const uint8_t *s, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

void *net_copy(void *dst, const void *src, size_t n)
{
	switch (routine) {
	case COPY_WORDS:
		copy_words(dst, src, n);
		break;
	case COPY_MOVSB:
		copy_movsb(dst, src, n);
		break;
	case COPY_LIBC:
		memcpy(dst, src, n);
		break;
	}
	return dst;
}

/* Whether the CPU says `rep movsb` is its fast copy (CPUID.7.0:EBX bit 9). */
static bool cpu_has_erms(void)
{
	uint32_t r[4];
	cpuid(0, 0, r);
	if (r[0] < 7)
		return false;
	cpuid(7, 0, r);
	return r[1] & (1u << 9);
}

/* Under a sanitizer the default never hides the copies in an instruction
 * the sanitizer cannot see into. */
#ifdef __SANITIZE_ADDRESS__
#define COPY_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COPY_SANITIZED 1
#endif
#endif
#ifndef COPY_SANITIZED
#define COPY_SANITIZED 0
#endif

bool net_copy_choose(const char *name)
{
	for (size_t i = 0; i < sizeof routine_names / sizeof routine_names[0]; i++)
		if (!strcmp(name, routine_names[i])) {
			routine = (enum copy_routine)i;
			return true;
		}
	return false;
}

void net_copy_init(void)
{
	const char *opt = kopt_text(KOPT_COPY);
	if (opt) {
		if (!net_copy_choose(opt)) /* the table's words are the routines' names */
			panic("net: copy=%s: no such routine", opt);
		return;
	}
	bool fast_movsb = cpu_hypervisor() != HYPERVISOR_TCG && cpu_has_erms() && !COPY_SANITIZED;
	routine = fast_movsb ? COPY_MOVSB : COPY_WORDS;
}

const char *net_copy_routine(void) { return routine_names[routine]; }
