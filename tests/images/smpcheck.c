/*
 * smpcheck: a test image for the kernel's CPUs (kernel/smp.h, test 29),
 * booted with kernel option smp=0 and more than one vCPU:
 *
 *   smpcheck calls N        N rounds of a call to every AP that returns its
 *                           APIC ID (each checked), then a wake to each;
 *                           prints "smpcheck: N calls to each of M APs,
 *                           all answered" and exits 0, or says which failed
 *                           and exits 1
 *   smpcheck run            hands every AP a loop (smp_run_on) that counts
 *                           up once and parks again; waits for each to
 *                           have run it; exits 0
 *   smpcheck fd-from-ap     makes AP 1 look up a descriptor: the table is
 *                           the boot CPU's, so a debug build's check panics
 *                           there (70); a release build prints what it got
 *   smpcheck lock N         every CPU takes a shared spinlock N times at
 *                           once (from a call) and adds one under it: the
 *                           sum must be N times the CPUs
 *
 * Anything else prints a usage line and exits 64.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/arch.h"
#include "kernel/clock.h"
#include "kernel/kernel.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"

static uint64_t my_apic_id(uint64_t arg)
{
	(void)arg;
	return lapic_id();
}

static int calls(int rounds)
{
	int aps = 0;
	for (int r = 0; r < rounds; r++) {
		for (uint32_t cpu = 1; cpu < smp_cpus_known; cpu++) {
			uint64_t id = ~0ULL;
			int err = smp_call(cpu, my_apic_id, 0, &id);
			if (err || id != percpu_of[cpu]->apic_id) {
				printf("smpcheck: call %d to CPU %u: error %d, APIC ID %llu\n", r, cpu, err,
				       (unsigned long long)id);
				return 1;
			}
			if (r == 0)
				aps++;
		}
	}
	for (uint32_t cpu = 1; cpu < smp_cpus_known; cpu++)
		smp_wake(cpu);
	printf("smpcheck: %d calls to each of %d APs, all answered\n", rounds, aps);
	return aps > 0 ? 0 : 1;
}

static volatile uint32_t runs;

static void count_once(void)
{
	__atomic_add_fetch(&runs, 1, __ATOMIC_RELEASE);
}

static int run(void)
{
	uint32_t handed = 0;
	for (uint32_t cpu = 1; cpu < smp_cpus_known; cpu++)
		handed += smp_run_on(cpu, count_once);
	uint64_t until = clock_ns() + NSEC_PER_SEC;
	while (__atomic_load_n(&runs, __ATOMIC_ACQUIRE) < handed && clock_ns() < until)
		;
	printf("smpcheck: %u loops handed, %u ran\n", handed, runs);
	return handed > 0 && runs == handed ? 0 : 1;
}

static uint64_t look_up_fd(uint64_t fd)
{
	const struct file_ops *ops;
	void *obj;
	return (uint64_t)fd_lookup((int)fd, &ops, &obj);
}

static struct spinlock shared = SPINLOCK_INIT("smpcheck");
static uint64_t sum;         /* written under shared */
static volatile uint32_t go; /* the callers start together */

static uint64_t add_under_lock(uint64_t n)
{
	while (!go)
		cpu_relax();
	for (uint64_t i = 0; i < n; i++) {
		spin_lock(&shared);
		sum++;
		spin_unlock(&shared);
	}
	return 0;
}

/* Each AP runs add_under_lock from its idle loop while this CPU does too. */
static uint64_t lock_rounds;
static void lock_loop(void)
{
	add_under_lock(lock_rounds);
	__atomic_add_fetch(&runs, 1, __ATOMIC_RELEASE);
}

static int lock(uint64_t n)
{
	lock_rounds = n;
	spinlock_register(&shared);
	uint32_t handed = 0;
	for (uint32_t cpu = 1; cpu < smp_cpus_known; cpu++)
		handed += smp_run_on(cpu, lock_loop);
	go = 1;
	add_under_lock(n);
	while (__atomic_load_n(&runs, __ATOMIC_ACQUIRE) < handed)
		cpu_relax();
	printf("smpcheck: %u CPUs added %llu under the lock: %llu (contended %llu)\n", handed + 1,
	       (unsigned long long)n, (unsigned long long)sum, (unsigned long long)shared.contended);
	return sum == n * (handed + 1) ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "calls"))
		return calls(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "run"))
		return run();
	if (argc == 2 && !strcmp(argv[1], "fd-from-ap")) {
		uint64_t r = ~0ULL;
		int err = smp_call(1, look_up_fd, 1, &r);
		printf("smpcheck: fd_lookup on CPU 1: call %d, result %lld\n", err, (long long)r);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "lock"))
		return lock(strtoull(argv[2], NULL, 10));
	printf("usage: smpcheck calls N | run | fd-from-ap | lock N\n");
	return 64;
}
