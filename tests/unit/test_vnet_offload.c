/*
 * test_vnet_offload.c: the virtio-net driver's offloads (issue 14) against
 * the netrx harness's simulated device (tests/fuzz/netrx/device.c), which
 * offers what QEMU offers on tap. Receive: every header field a device may
 * lie in (flags, gso_type, hdr_len, gso_size, csum_start, csum_offset,
 * num_buffers) is checked, a bad one dropped and counted in its counter;
 * good ones reach the stack with "checksum vouched for" and "merged segment"
 * as the header said; a frame spread over several buffers arrives whole,
 * one whose buffers are not all there is dropped with every buffer back on
 * the ring. Transmit: a checksum left to the device and a frame to segment
 * leave with the header that asks for it, and what reaches the "wire" is
 * checked segment by segment. Built again as test_vnet_offload_none with a
 * device that offers no offload (user networking): then every header flag
 * is a bad header and every offload request is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "drivers/virtio/virtio.h"
#include "kernel/kernel.h"
#include "tests/fuzz/netrx/netrx.h"
#include "tests/unit/vnet_host.h"

#ifndef OFFER
#define OFFER DEV_OFFER_TAP
#endif
#define OFFLOADS (OFFER != 0)

/* ---- the kernel as the driver sees it ------------------------------------------ */

uint64_t clock_ns(void) { return 1000000000ULL; }
const char *kernel_option(const char *key) { (void)key; return NULL; }
/* The rest of the kernel's stand-ins: tests/unit/vnet_host.c. */

/* ---- frames ------------------------------------------------------------------------ */

static uint8_t rec[70000];       /* header + frame, as the device writes them */
static uint8_t got[70000];       /* the last frame delivered, reassembled */
static struct vnet_frame last;   /* and what came with it */
static int delivered;

static void deliver(void *ctx, const struct vnet_frame *fr)
{
	(void)ctx;
	size_t at = 0;
	for (int i = 0; i < fr->npieces; i++) {
		memcpy(got + at, fr->piece[i].base, fr->piece[i].len);
		at += fr->piece[i].len;
	}
	assert_int_equal(at, fr->len);
	last = *fr;
	delivered++;
}

static void put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }

/* A virtio-net header at rec[0..12). */
static void header(uint8_t flags, uint8_t gso_type, uint16_t hdr_len, uint16_t gso_size, uint16_t csum_start,
		   uint16_t csum_offset, uint16_t num_buffers)
{
	rec[0] = flags, rec[1] = gso_type;
	memcpy(rec + 2, &hdr_len, 2), memcpy(rec + 4, &gso_size, 2), memcpy(rec + 6, &csum_start, 2);
	memcpy(rec + 8, &csum_offset, 2), memcpy(rec + 10, &num_buffers, 2);
}

/* An IPv4 packet of `proto` with `payload` transport bytes after a 20-byte
 * TCP or 8-byte UDP header, behind an Ethernet header, at rec + 12; its
 * length. Checksums are not filled in: the driver does not look. */
static size_t packet(uint8_t proto, size_t payload, bool fragment)
{
	uint8_t *f = rec + 12, *ip = f + 14;
	size_t l4 = proto == 6 ? 20 : 8, total = 20 + l4 + payload;
	memset(f, 0, 14 + total);
	memcpy(f, dev_mac, 6);
	f[12] = 0x08, f[13] = 0x00;
	ip[0] = 0x45, ip[8] = 64, ip[9] = proto;
	put16(ip + 2, (unsigned)total);
	if (fragment)
		ip[6] = 0x20; /* more fragments */
	if (proto == 6)
		ip[20 + 12] = 5 << 4;
	for (size_t i = 0; i < payload; i++)
		ip[20 + l4 + i] = (uint8_t)(i * 7);
	return 14 + total;
}

static struct vnet_stats stats(void)
{
	struct vnet_stats st;
	vnet_get_stats(&st);
	return st;
}

/* The device writes the record (header + `len` frame bytes); the driver
 * polls. Returns frames delivered. */
static int receive(size_t len, bool count_buffers)
{
	int before = delivered;
	assert_true(dev_rx(rec, 12 + len, (uint32_t)(12 + len), count_buffers));
	vnet_rx(deliver, NULL, 64);
	assert_int_equal(dev_rx_posted(), dev_rx_ring_size()); /* every buffer back */
	return delivered - before;
}

static int setup(void **state)
{
	(void)state;
	vnet_host_start(OFFER);
	return 0;
}

/* ---- receive ----------------------------------------------------------------------- */

static void rx_header_checks(void **state)
{
	(void)state;
	struct {
		const char *what;
		uint8_t proto; size_t payload; bool fragment;
		uint8_t flags, gso_type; uint16_t hdr_len, gso_size, csum_start, csum_offset;
		bool ok;           /* delivered (with offloads negotiated) */
		bool csum_ok;      /* and said so */
	} cases[] = {
		{ "plain", 6, 100, false, 0, 0, 0, 0, 0, 0, true, false },
		{ "data valid tcp", 6, 100, false, 2, 0, 0, 0, 0, 0, true, true },
		{ "data valid udp", 17, 100, false, 2, 0, 0, 0, 0, 0, true, true },
		{ "data valid on a fragment", 17, 100, true, 2, 0, 0, 0, 0, 0, true, false },
		{ "needs csum tcp", 6, 100, false, 1, 0, 0, 0, 34, 16, true, true },
		{ "needs csum udp", 17, 100, false, 1, 0, 0, 0, 34, 6, true, true },
		{ "needs csum, udp offset on tcp", 6, 100, false, 1, 0, 0, 0, 34, 6, false, false },
		{ "needs csum, start not at tcp", 6, 100, false, 1, 0, 0, 0, 30, 16, false, false },
		{ "needs csum on a fragment", 17, 100, true, 1, 0, 0, 0, 34, 6, false, false },
		{ "unknown flag", 6, 100, false, 4, 0, 0, 0, 0, 0, false, false },
		{ "gso tcpv4", 6, 1000, false, 1, 1, 54, 536, 34, 16, true, true },
		{ "gso, size 0", 6, 1000, false, 1, 1, 54, 0, 34, 16, false, false },
		{ "gso, hdr_len past the frame", 6, 1000, false, 1, 1, 5000, 536, 34, 16, false, false },
		{ "gso on udp", 17, 1000, false, 1, 1, 42, 536, 34, 6, false, false },
		{ "gso udp type", 17, 1000, false, 1, 3, 42, 536, 34, 6, false, false },
		{ "gso tcpv6 type", 6, 1000, false, 1, 4, 54, 536, 34, 16, false, false },
		{ "gso with ecn", 6, 1000, false, 1, 0x81, 54, 536, 34, 16, false, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct vnet_stats before = stats();
		size_t len = packet(cases[i].proto, cases[i].payload, cases[i].fragment);
		header(cases[i].flags, cases[i].gso_type, cases[i].hdr_len, cases[i].gso_size, cases[i].csum_start,
		       cases[i].csum_offset, 1);
		bool plain = !cases[i].flags && !cases[i].gso_type;
		bool ok = OFFLOADS ? cases[i].ok : plain;
		int n = receive(len, false);
		struct vnet_stats after = stats();
		if (n != ok || after.rx_drop_bad_header - before.rx_drop_bad_header != !ok)
			fail_msg("%s: delivered %d, bad headers counted %lu", cases[i].what, n,
				 (unsigned long)(after.rx_drop_bad_header - before.rx_drop_bad_header));
		if (ok) {
			assert_int_equal(last.len, len);
			assert_memory_equal(got, rec + 12, len);
			if (last.csum_ok != cases[i].csum_ok)
				fail_msg("%s: csum_ok %d", cases[i].what, last.csum_ok);
			assert_int_equal(last.gso_size, cases[i].gso_type ? cases[i].gso_size : 0);
		}
	}
}

/* A merged TCP segment of 5,000 bytes in three 2 KiB buffers arrives whole,
 * in three pieces; a frame that says it spans more buffers than came with it
 * is dropped, and so is one that says 0 or more than a frame can take. */
static void rx_multi_buffer(void **state)
{
	(void)state;
	size_t len = packet(6, 5000, false);
	header(1, 1, 54, 1460, 34, 16, 0);
	struct vnet_stats before = stats();
	if (!OFFLOADS) { /* the device cannot use several buffers without GUEST_TSO4's need of it either */
		assert_int_equal(receive(len, true), 0); /* flags not negotiated */
		return;
	}
	assert_int_equal(receive(len, true), 1);
	assert_int_equal(last.npieces, 3);
	assert_int_equal(last.len, len);
	assert_memory_equal(got, rec + 12, len);
	assert_int_equal(last.gso_size, 1460);
	struct vnet_stats after = stats();
	assert_int_equal(after.rx_multi_buffer - before.rx_multi_buffer, 1);
	assert_int_equal(after.rx_gso - before.rx_gso, 1);

	/* It says 5 buffers, 3 come: dropped, all 3 back on the ring. */
	header(1, 1, 54, 1460, 34, 16, 5);
	assert_int_equal(receive(len, false), 0);
	header(0, 0, 0, 0, 0, 0, 0);
	assert_int_equal(receive(packet(6, 10, false), false), 0);
	header(0, 0, 0, 0, 0, 0, 999);
	assert_int_equal(receive(packet(6, 10, false), false), 0);
	assert_int_equal(stats().rx_drop_merged - after.rx_drop_merged, 3);
	/* Frames after them are fine. */
	header(0, 0, 0, 0, 0, 0, 1);
	assert_int_equal(receive(packet(6, 10, false), false), 1);
}

/* ---- transmit ---------------------------------------------------------------------- */

static int wire_frames;
static uint8_t wire_last[2000];
static size_t wire_last_len;

static void tap(const uint8_t *f, size_t len)
{
	wire_frames++;
	memcpy(wire_last, f, len);
	wire_last_len = len;
}

static void tx_done(void *cookie) { (void)cookie; }

/* A TCP frame the stack built with the checksum left to the device: the
 * pseudo-header's sum in the field. */
static uint8_t tx_frame[20000];

static size_t tcp_frame(size_t payload)
{
	uint8_t *ip = tx_frame + 14, *tcp = ip + 20;
	size_t total = 40 + payload;
	memset(tx_frame, 0, 14 + total);
	memset(tx_frame, 0xaa, 6);
	memcpy(tx_frame + 6, dev_mac, 6);
	tx_frame[12] = 0x08;
	ip[0] = 0x45, ip[8] = 64, ip[9] = 6, ip[12] = 10, ip[15] = 2, ip[16] = 10, ip[19] = 1;
	put16(ip + 2, (unsigned)total);
	put16(ip + 10, csum_fold(csum_add(0, ip, 20)));
	put16(tcp, 80), put16(tcp + 2, 40000);
	tcp[12] = 5 << 4, tcp[13] = 0x10 | 0x08; /* ACK PSH */
	put16(tcp + 14, 8192);
	for (size_t i = 0; i < payload; i++)
		tcp[20 + i] = (uint8_t)(i * 13);
	put16(tcp + 16, (uint16_t)~csum_fold(csum_pseudo(ip, 6, (uint16_t)(20 + payload))));
	return 14 + total;
}

static void tx_offloads(void **state)
{
	(void)state;
	vnet_set_tx_done(tx_done);
	dev_tap(tap);
	struct vnet_tx_offload csum = { .csum_start = 34, .csum_offset = 16 };
	struct vnet_seg seg = { tx_frame, tcp_frame(1000) };
	struct vnet_stats before = stats();
	int wired = wire_frames;
	if (!OFFLOADS) {
		assert_int_equal(vnet_tx(&seg, 1, tx_frame, &csum), -EINVAL);
		assert_int_equal(stats().tx_bad_offload - before.tx_bad_offload, 1);
		return;
	}
	assert_int_equal(vnet_tx(&seg, 1, tx_frame, &csum), 0);
	dev_tx_complete(); /* the device completes the checksum, then checks it */
	assert_int_equal(wire_frames - wired, 1);
	assert_int_equal(wire_last_len, seg.len);

	/* 10,000 bytes cut into segments of 1,460: 7 on the wire, checked. */
	struct vnet_tx_offload gso = { .csum_start = 34, .csum_offset = 16, .gso_size = 1460, .hdr_len = 54 };
	seg.len = tcp_frame(10000);
	assert_int_equal(vnet_tx(&seg, 1, tx_frame, &gso), 0);
	unsigned gso_frames = dev_tx_gso_frames();
	dev_tx_complete();
	assert_int_equal(dev_tx_gso_frames() - gso_frames, 1);
	assert_int_equal(wire_frames - wired, 1 + 7);
	assert_int_equal(wire_last_len, 54 + 10000 - 6 * 1460);
	assert_int_equal(wire_last[14 + 20 + 13], 0x18); /* PSH on the last */
	struct vnet_stats after = stats();
	assert_int_equal(after.tx_gso - before.tx_gso, 1);
	assert_int_equal(after.tx_gso_segments - before.tx_gso_segments, 7);
	assert_int_equal(after.tx_csum - before.tx_csum, 2);

	/* Offload requests outside the frame, or a segmented frame too long. */
	struct vnet_tx_offload bad[] = {
		{ .csum_start = 10, .csum_offset = 16 },
		{ .csum_start = 34, .csum_offset = 60000 },
		{ .csum_start = 34, .csum_offset = 16, .gso_size = 1460, .hdr_len = 20 },
		{ .csum_start = 34, .csum_offset = 16, .gso_size = 1460, .hdr_len = 60000 },
	};
	seg.len = tcp_frame(1000);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(vnet_tx(&seg, 1, tx_frame, &bad[i]), -EINVAL);
	seg.len = 1600; /* longer than a frame, not to be segmented */
	assert_int_equal(vnet_tx(&seg, 1, tx_frame, &csum), -EINVAL);
	after = stats();
	assert_int_equal(stats().tx_bad_offload - before.tx_bad_offload, 4);
	dev_tx_complete();
	vnet_tx_reclaim();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(rx_header_checks, setup),
		cmocka_unit_test_setup(rx_multi_buffer, setup),
		cmocka_unit_test_setup(tx_offloads, setup),
	};
	return cmocka_run_group_tests_name(OFFLOADS ? "vnet_offload" : "vnet_offload_none", tests, NULL, NULL);
}
