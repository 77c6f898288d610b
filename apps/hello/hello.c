/*
 * hello: the smallest application. It prints its argv and the time, sleeps
 * 100 ms, and exits with a chosen status. Its options exercise the kernel for
 * the integration tests:
 *
 *   hello [-e STATUS] [-s MS] [--fault] [words...]
 *     -e STATUS  exit status (default 0)
 *     -s MS      sleep this many milliseconds (default 100)
 *     --fault    dereference an unmapped address (the panic handler's test)
 *     --abort    call abort() (a signal ends the program)
 *     --oom      allocate until malloc fails, then report it
 *     --smash    overrun a local array byte by byte (the stack protector's test)
 *     --overflow memset past a local array (_FORTIFY_SOURCE's test)
 *     --write-text   store into the program's own code (W^X's test)
 *     --exec-data    jump into a data buffer (W^X's test)
 *     --recurse      recurse without end (the stack guard page's test)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv);

static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000L + (b->tv_nsec - a->tv_nsec) / 1000000L;
}

/* Kept in a variable so the compiler cannot see the address is bogus. */
static volatile unsigned long fault_address = 8;

static __attribute__((noinline)) void fault_deliberately(void)
{
	printf("reading address %#lx\n", fault_address);
	printf("read %d\n", *(volatile int *)fault_address); /* page 0 is never mapped */
}

/* Writes `n` bytes into an 8-byte local array; n comes from a variable the
 * compiler cannot see through, so nothing is caught at build time. */
static volatile size_t smash_len = 64;

static __attribute__((noinline)) void smash_stack(void)
{
	char local[8];
	volatile char *p = local;
	for (size_t i = 0; i < smash_len; i++)
		p[i] = 'x';
	printf("smashed %zu bytes into 8\n", smash_len);
}

static __attribute__((noinline)) void overflow_memset(void)
{
	char local[8];
	memset(local, 'x', smash_len); /* the checked memset knows local's size */
	printf("overflowed: %c\n", local[0]);
}

static __attribute__((noinline)) void write_text(void)
{
	volatile unsigned char *code = (volatile unsigned char *)(unsigned long)&main;
	printf("writing to main at %p\n", (void *)code);
	code[0] = 0xc3;
	printf("wrote to code\n");
}

static unsigned char data_code[16] = { 0xc3 }; /* ret */

static __attribute__((noinline)) void exec_data(void)
{
	void (*fn)(void) = (void (*)(void))(unsigned long)data_code;
	printf("calling data at %p\n", (void *)data_code);
	fn();
	printf("ran data\n");
}

/* Stops only when the depth wraps around, long after the stack ran out. */
static __attribute__((noinline)) int recurse(unsigned depth)
{
	volatile char pad[512];
	pad[0] = (char)depth;
	if (depth == ~0u)
		return 0;
	return recurse(depth + 1) + pad[0];
}

static void exhaust_memory(void)
{
	size_t total = 0;
	void *p;
	while ((p = malloc(1 << 20)) != NULL) {
		memset(p, 1, 64);
		total += 1 << 20;
	}
	printf("malloc failed after %zu MiB\n", total >> 20);
}

int main(int argc, char **argv)
{
	int status = 0, sleep_ms = 100;
	for (int i = 0; i < argc; i++)
		printf("argv[%d] = \"%s\"\n", i, argv[i]);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-e") == 0 && i + 1 < argc)
			status = atoi(argv[++i]);
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			sleep_ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--fault") == 0)
			fault_deliberately();
		else if (strcmp(argv[i], "--abort") == 0)
			abort();
		else if (strcmp(argv[i], "--oom") == 0)
			exhaust_memory();
		else if (strcmp(argv[i], "--smash") == 0)
			smash_stack();
		else if (strcmp(argv[i], "--overflow") == 0)
			overflow_memset();
		else if (strcmp(argv[i], "--write-text") == 0)
			write_text();
		else if (strcmp(argv[i], "--exec-data") == 0)
			exec_data();
		else if (strcmp(argv[i], "--recurse") == 0)
			printf("%d\n", recurse(0));
	}

	struct timespec wall, t0, t1;
	clock_gettime(CLOCK_REALTIME, &wall);
	char date[64];
	strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&wall.tv_sec));
	printf("time: %s\n", date);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	usleep((useconds_t)sleep_ms * 1000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("slept %d ms: %ld ms passed\n", sleep_ms, ms_between(&t0, &t1));
	printf("exit %d\n", status);
	return status;
}
