/*
 * trace.c: where the time of one request goes. Every TRACE_EVERY-th frame the
 * network delivers starts a sample; each later point on the request's path
 * (kernel.h: enum trace_point, in path order) stamps the TSC the first time
 * it is reached, in order, and the kick that sends the answer completes the
 * sample. The last TRACE_SAMPLES samples are kept; the counter report prints
 * each stage's median and 90th percentile in microseconds.
 *
 * A sample follows one request at a time, which is what one keep-alive
 * connection (ab -k -c 1) gives; under concurrency the stamps may belong to
 * different requests, and a frame that starts no request (an ACK) is given up
 * when the next frame comes before a socket queued anything.
 */
#include <stdlib.h>
#include "kernel.h"

#define TRACE_EVERY   16   /* frames between samples */
#define TRACE_SAMPLES 256  /* complete samples kept */
#define TRACE_STALE_PER_SEC 50 /* a sample not complete after 1/50 s (20 ms) is given up */

struct trace_state trace_state = { .next = TP_FRAME };

static struct {
	uint64_t at[NTRACE];                       /* stamps of the sample in progress */
	uint32_t frames;                           /* frames since the last sample began */
	uint32_t stage[TRACE_SAMPLES][NTRACE - 1]; /* complete samples: cycles per stage */
	uint64_t complete;                         /* samples completed (ring position) */
	uint64_t abandoned;                        /* samples given up */
} tr;

static const char *const stage_name[NTRACE - 1] = {
	"frame>input", "input>queue", "queue>poll", "poll>read", "read>writev",
	"writev>egress", "egress>output", "output>publish", "publish>kick",
};

void trace_record(enum trace_point p)
{
	uint64_t now = cpu_cycles();
	if (p == TP_FRAME) {
		if (trace_state.next > TP_FRAME && trace_state.next <= TP_QUEUE) {
			tr.abandoned++; /* the last frame started no request: this one may */
		} else if (trace_state.next != TP_FRAME) {
			if (now - tr.at[TP_FRAME] > clock_tsc_hz() / TRACE_STALE_PER_SEC) {
				tr.abandoned++; /* stuck: start over */
			} else {
				return; /* a request is on its way: follow it */
			}
		} else if (++tr.frames < TRACE_EVERY) {
			return;
		}
		tr.frames = 0;
		tr.at[TP_FRAME] = now;
		trace_state.next = TP_INPUT;
		return;
	}
	tr.at[p] = now;
	if (p != TP_KICK) {
		trace_state.next = p + 1;
		return;
	}
	uint32_t *row = tr.stage[tr.complete % TRACE_SAMPLES];
	for (int i = 0; i < NTRACE - 1; i++) {
		uint64_t d = tr.at[i + 1] - tr.at[i];
		row[i] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
	}
	tr.complete++;
	trace_state.next = TP_FRAME;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t cycles_to_ns(uint64_t c)
{
	uint64_t hz = clock_tsc_hz();
	return hz ? (uint64_t)((unsigned __int128)c * NSEC_PER_SEC / hz) : 0;
}

void trace_print(void)
{
	static uint32_t col[TRACE_SAMPLES];
	size_t n = tr.complete < TRACE_SAMPLES ? tr.complete : TRACE_SAMPLES;
	kprintf("trace: samples %lu (abandoned %lu), last %zu, stage us median/p90:", tr.complete,
		tr.abandoned, n);
	if (!n) {
		kprintf(" none\n");
		return;
	}
	uint64_t total_med = 0;
	for (int s = 0; s < NTRACE - 1; s++) {
		for (size_t i = 0; i < n; i++)
			col[i] = tr.stage[i][s];
		qsort(col, n, sizeof col[0], cmp_u32);
		uint64_t med = cycles_to_ns(col[n / 2]), p90 = cycles_to_ns(col[n * 9 / 10]);
		total_med += med;
		kprintf(" %s %lu.%02lu/%lu.%02lu", stage_name[s], med / 1000, med % 1000 / 10, p90 / 1000,
			p90 % 1000 / 10);
	}
	kprintf("; sum of medians %lu.%02lu\n", total_med / 1000, total_med % 1000 / 10);
}
