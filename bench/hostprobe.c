/*
 * hostprobe.c: how fast this host is right now, in windows of a quarter
 * second, for the benchmark's record (the http workload runs it before the
 * first guest and after the last, on the core the vCPU gets).
 *
 *   hostprobe SECS KIB [KIB ...]
 *
 * For each working set of KIB KiB it does random read-modify-writes of
 * 8-byte words for SECS seconds and prints one line:
 *   KIB min median max  (millions of updates per second over 250 ms windows)
 *   windows: w1 w2 ...
 * A working set that fits the core's own cache measures the core; one that
 * does not measures what the memory system gives us, which on a shared
 * machine depends on the neighbours: the spread of its windows is the
 * spread a guest whose work misses the cache inherits, whatever the build.
 * Exit: 0, or 2 on a bad argument.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW_S 0.25
#define MAX_WINDOWS 4096
/* Updates between two reads of the clock. */
#define BATCH 4096

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One working set: fills rates[] with each window's millions of updates per
 * second and returns how many windows there were. */
static int probe(size_t words, double secs, double *rates)
{
	volatile uint64_t *a = malloc(words * sizeof *a);
	if (!a)
		return 0;
	for (size_t i = 0; i < words; i++)
		a[i] = i; /* touch every page before timing */
	uint64_t x = 88172645463325252ULL; /* xorshift state */
	double start = now_s(), end = start + secs, w_start = start;
	long updates = 0;
	int n = 0;
	for (;;) {
		for (int k = 0; k < BATCH; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			a[x % words] += x;
		}
		updates += BATCH;
		double t = now_s();
		if (t - w_start >= WINDOW_S) {
			if (n < MAX_WINDOWS)
				rates[n++] = (double)updates / (t - w_start) / 1e6;
			updates = 0;
			w_start = t;
		}
		if (t >= end)
			break;
	}
	free((void *)a);
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: hostprobe SECS KIB [KIB ...]\n");
		return 2;
	}
	char *e;
	double secs = strtod(argv[1], &e);
	if (*e || secs < WINDOW_S || secs > 600) {
		fprintf(stderr, "hostprobe: SECS must be a number from %.2f to 600\n", WINDOW_S);
		return 2;
	}
	static double rates[MAX_WINDOWS], sorted[MAX_WINDOWS];
	for (int i = 2; i < argc; i++) {
		long kib = strtol(argv[i], &e, 10);
		if (*e || kib < 4 || kib > (1L << 22)) {
			fprintf(stderr, "hostprobe: KIB must be an integer from 4 to %ld, not '%s'\n", 1L << 22, argv[i]);
			return 2;
		}
		int n = probe((size_t)kib * 1024 / sizeof(uint64_t), secs, rates);
		if (n == 0) {
			fprintf(stderr, "hostprobe: no window measured for %ld KiB\n", kib);
			return 2;
		}
		memcpy(sorted, rates, (size_t)n * sizeof *rates);
		qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
		double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
		printf("%ld KiB: min %.0f median %.0f max %.0f M updates/s over %d windows of %.0f ms\n", kib,
		       sorted[0], median, sorted[n - 1], n, WINDOW_S * 1000);
		printf("windows:");
		for (int k = 0; k < n; k++)
			printf(" %.0f", rates[k]);
		printf("\n");
	}
	return 0;
}
