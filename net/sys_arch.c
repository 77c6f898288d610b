/*
 * sys_arch.c: what lwIP needs from the system when it runs without threads
 * (NO_SYS=1): a millisecond clock for its timers, and random numbers.
 */
#include "lwip/sys.h"
#include "kernel/kernel.h"

/* Milliseconds since boot; lwIP's timers compare these with wrap-around. */
u32_t sys_now(void)
{
	return (u32_t)(clock_ns() / 1000000);
}

/* Ticks for lwIP's few "some time value" uses; milliseconds will do. */
u32_t sys_jiffies(void)
{
	return sys_now();
}

static bool cpu_has_rdrand(void)
{
	uint32_t eax, ebx, ecx, edx;
	__asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(1), "c"(0));
	return ecx & (1u << 30);
}

/* RDRAND (retried a few times, as Intel advises) when the CPU has it;
 * otherwise the TSC run through a mixing step, which at least differs
 * between boots and calls. */
uint32_t net_random_u32(void)
{
	static int has_rdrand = -1; /* -1: not asked yet */
	if (has_rdrand < 0)
		has_rdrand = cpu_has_rdrand();
	if (has_rdrand) {
		for (int i = 0; i < 10; i++) {
			uint32_t v;
			unsigned char ok;
			__asm__ volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok));
			if (ok)
				return v;
		}
	}
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	uint64_t x = ((uint64_t)hi << 32 | lo) * 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(x >> 32);
}
