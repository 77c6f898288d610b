/*
 * host.c: the kernel as the network layer sees it, for the netrx harness: a
 * fake clock that only the harness moves, the kernel options that give the
 * interface a static address, a quiet console, panic (a crash the fuzzer
 * reports), the executor's timer, park and counter hooks, lwIP's sys_now and
 * repeatable random numbers (read/write/close come from
 * tests/unit/socket/fdcalls.c). Like tests/unit/socket/host.c, without cmocka:
 * a failure here must be a crash libFuzzer sees.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kernel/kernel.h"
#include "kernel/percpu.h"
#include "kernel/switches.h"
#include "lwip/sys.h"
#include "netrx.h"

uint64_t fake_now_ns = NSEC_PER_SEC; /* "booted" a second ago */
bool host_verbose;

/* The one CPU: the executor's state and counters (kernel/smp.c's percpu_boot in the guest). */
struct percpu percpu_host = {
	.self = &percpu_host,
	.spin = { SPIN_NS_DEFAULT, SPIN_NS_DEFAULT, SPIN_NS_DEFAULT },
};

uint64_t clock_ns(void) { return fake_now_ns; }
uint64_t clock_realtime_ns(void) { return 1795000000ULL * NSEC_PER_SEC + fake_now_ns; }
uint64_t clock_tsc_at(uint64_t ns) { (void)ns; return 0; } /* no spin: spin_us=0 */
uint64_t clock_tsc_hz(void) { return 1000000000; } /* the request trace reads the real TSC */
enum hypervisor cpu_hypervisor(void) { return HYPERVISOR_NONE; }
const char *cpu_hypervisor_name(enum hypervisor hv) { (void)hv; return "none"; }
u32_t sys_now(void) { return (u32_t)(fake_now_ns / 1000000); }
u32_t sys_jiffies(void) { return sys_now(); }

/* Deterministic "random" numbers, restarted for every input. */
static uint64_t rng_state;
void host_random_reset(void) { rng_state = 0x2545f4914f6cdd1dULL; }

uint32_t net_random_u32(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33);
}

/* A static address (no DHCP): 10.0.0.2/24, gateway 10.0.0.1. quiet: no
 * counter report; spin_us=0: the executor never spins on a clock that does
 * not move by itself. */
const char *kernel_option(const char *key)
{
	static const char *const opts[][2] = {
		{ "ip", "10.0.0.2" }, { "gw", "10.0.0.1" }, { "quiet", "" }, { "spin_us", "0" },
	};
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
		if (!strcmp(key, opts[i][0]))
			return opts[i][1];
	return NULL;
}

int kprintf(const char *fmt, ...)
{
	if (!host_verbose)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	int n = vfprintf(stderr, fmt, ap);
	va_end(ap);
	return n;
}

void trace(const char *fmt, ...)
{
	if (!host_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

__attribute__((noreturn)) static void vfail(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	abort();
}

/* KASSERT and lwIP's assertions land here. */
void panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail("panic", fmt, ap);
}

void harness_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail("netrx", fmt, ap);
}

/* The kernel's counter reports: nothing registers or prints here. */
void stats_register(void (*print)(void)) { (void)print; }
void stats_phase_add(enum stats_phase phase, uint64_t cycles) { (void)phase, (void)cycles; }
void stats_service(void) {}
/* Nothing posts signals here. */
bool signal_pending(void) { return false; }
bool signal_service(void) { return false; }

/* Room for the driver's reserve of receive buffers (lending on). */
uint64_t mem_heap_room(void) { return 1ULL << 30; }

void mem_get_stats(struct mem_stats *st) /* net/stats.c's report */
{
	memset(st, 0, sizeof *st);
	st->heap_limit = 1ULL << 30;
}

/* No kernel timers besides lwIP's, which the network layer runs itself. */
uint64_t timer_next_deadline(void) { return UINT64_MAX; }
int timer_run_expired(void) { return 0; }
void timer_program_oneshot(uint64_t deadline_ns) { (void)deadline_ns; }

/* The harness's app never blocks (every descriptor is non-blocking), so a
 * park means a call waited where it must not. */
void cpu_park(uint64_t deadline_ns, volatile bool *wake_flag)
{
	(void)wake_flag;
	harness_fail("cpu_park(%llu): a call on a non-blocking socket waited",
		     (unsigned long long)deadline_ns);
}
