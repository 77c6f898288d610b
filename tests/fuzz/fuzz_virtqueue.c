/*
 * fuzz_virtqueue: a device that writes arbitrary used-ring entries and
 * indexes. The driver side offers chains, then takes whatever the "device"
 * wrote; it must never hand back a cookie it did not give, never free a
 * descriptor twice (num_free stays within the ring) and never loop forever.
 * The device also writes its avail_event as it likes, and the driver asks
 * after every step whether a notification is owed (vq_kick_repair): never
 * more repairs than publishes.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/virtio/virtqueue.h"
#include "kernel/kernel.h"

#define SIZE 16

void panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void *cookies[SIZE];
	static uint16_t chain_len[SIZE];
	static uint32_t chain_in[SIZE];
	static int tokens[SIZE * 4];
	static void *ring;
	if (!ring)
		ring = aligned_alloc(4096, vq_ring_bytes(SIZE));
	memset(ring, 0, vq_ring_bytes(SIZE));
	struct virtqueue vq;
	vq_init(&vq, 0, SIZE, size & 1, ring, cookies, chain_len, chain_in);

	size_t p = 0;
	int given = 0;
	uint64_t publishes = 0;
	while (p + 11 <= size) { /* an op byte and 10 bytes of operands */
		uint8_t op = data[p++];
		if (op & 1) { /* the driver offers a chain of 1-3 buffers */
			int n = 1 + op % 3, nout = (op >> 2) % (n + 1);
			struct vq_buf b[3];
			for (int i = 0; i < n; i++)
				b[i] = (struct vq_buf){ 0x1000u * (unsigned)(i + 1), (uint32_t)data[p + i] * 16 };
			if (vq_add(&vq, b, nout, n - nout, &tokens[given % (SIZE * 4)]) == 0)
				given++, publishes++;
			vq_kick_prepare(&vq);
		} else { /* the device writes an entry and moves its index, any way it likes */
			struct vring_used_elem e;
			memcpy(&e, data + p, sizeof e);
			vq.used->ring[data[p + 8] % SIZE] = e;
			vq.used->idx = (uint16_t)(vq.used->idx + data[p + 9] % 4);
			uint16_t event = (uint16_t)(vq.used->idx - data[p + 9] / 4 % 8); /* near its used idx */
			memcpy((char *)vq.used->ring + sizeof e * SIZE, &event, sizeof event);
		}
		vq_kick_repair(&vq);
		if (vq.kicks_repaired > publishes)
			abort();
		p += 10;
		void *c;
		uint32_t len;
		for (int guard = 0; guard < 70000 && vq_get_used(&vq, &c, &len); guard++)
			if ((int *)c < tokens || (int *)c >= tokens + SIZE * 4)
				abort();
		if (vq_num_free(&vq) > SIZE)
			abort();
	}
	return 0;
}
