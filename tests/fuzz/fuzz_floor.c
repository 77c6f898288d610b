/*
 * fuzz_floor: the floor's receive path (apps/floor: link.c, tcp.c and
 * answer.c, with httpd's http.c) on arbitrary frames, as the driver hands
 * them over, each in an exactly-sized heap copy (ASan sees a read past one).
 * The driver's transmit side is played here and checks every frame the
 * floor sends, whatever came in:
 *  - at most one frame out per frame in, from the floor's MAC address;
 *  - an ARP reply: 42 bytes, a reply from our address to the asker, at the
 *    hardware address its request gave;
 *  - an IPv4 frame: a 20-byte header with a valid checksum, its total length
 *    the frame's, from our address to the sender's, TCP from our port to the
 *    sender's, back to the MAC address the frame came from, its header
 *    length within it, at most FLOOR_ANSWER_MAX bytes of
 *    payload, and a TCP checksum that adds up (software) or, when the input
 *    chose the device's offload, the pseudo-header's sum in its field and
 *    the offload asked for at the right place;
 *  - no transmit slot leaks: a reply dropped for want of a slot comes only
 *    when every slot is with the "device" or the ring was said to be full
 *    (a slot freed twice panics in link.c).
 *
 * Input: one control byte (bit 0: the device completes TCP checksums; bit 1:
 * -s, /__shutdown allowed), then frames, each a 2-byte big-endian length, a
 * flags byte (bit 0: the device vouched for the TCP checksum; bit 1: the
 * device hands back every frame it holds first; bit 2: the ring is full for
 * this frame's reply; bit 3: the frame came in two buffers) and its bytes.
 * The sequence-number key stays 0 (floor_tcp_init is not called), so the
 * seeds (tests/fuzz/floor_seeds.py) can carry ACKs the floor takes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/kernel.h"
#include "apps/floor/floor.h"

/* What floor.c defines in the image. */
struct floor_config floor_cfg;
struct floor_counters floor_counters;
bool floor_stop;

static const uint8_t our_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
#define OUR_IP 0xc0000202u /* 192.0.2.2 */
#define OUR_PORT 8080
#define SLOTS 128          /* link.c's TX_SLOTS */

/* ---- the kernel and the driver, played ------------------------------------------ */

void panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

uint64_t clock_realtime_ns(void) { return 0; }

static vnet_tx_done_fn tx_done;
static void *held[SLOTS + 1];      /* frames the "device" holds */
static int nheld;
static const uint8_t *frame_in;    /* the frame being delivered (NULL: at start) */
static int sent_for_frame;         /* frames sent while it was delivered */
static bool ring_full;             /* refuse this frame's reply */
static bool offload;               /* the device completes checksums */

void vnet_set_tx_done(vnet_tx_done_fn done) { tx_done = done; }
/* The timed hold is the driver's; the fuzzer's device sends at once. */
void vnet_set_tx_hold_worth(vnet_tx_hold_worth_fn worth) { (void)worth; }

int vnet_tx_reclaim(void)
{
	int n = nheld;
	while (nheld > 0)
		tx_done(held[--nheld]);
	return n;
}

static uint16_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	return csum_fold(csum_partial(p, len, sum));
}

/* A TCP segment out: headers and checksum as the floor must make them. */
static void check_tcp(const uint8_t *f, size_t len, const struct vnet_tx_offload *off)
{
	const uint8_t *ip = f + 14, *t = f + 34;
	size_t tcp_len = len - 34, hlen;
	if (len < 34 + 20 || ip[0] != 0x45 || be16(ip + 2) != len - 14 || sum16(ip, 20, 0) != 0xffff ||
	    ip[9] != 6 || be16(ip + 6) != 0x4000)
		abort();
	if (memcmp(ip + 12, "\xc0\x00\x02\x02", 4) != 0 || memcmp(ip + 16, frame_in + 26, 4) != 0)
		abort(); /* from us, to the sender */
	hlen = (size_t)(t[12] >> 4) * 4;
	if (be16(t) != OUR_PORT || hlen < 20 || hlen > tcp_len || tcp_len - hlen > FLOOR_ANSWER_MAX)
		abort();
	const uint8_t *in_ip = frame_in + 14, *in_tcp = in_ip + (in_ip[0] & 15) * 4;
	if (memcmp(t + 2, in_tcp, 2) != 0)
		abort(); /* to the sender's port */
	uint32_t pseudo = csum_partial(ip + 12, 8, 6 + (uint32_t)tcp_len);
	if (offload) {
		if (!off || off->csum_start != 34 || off->csum_offset != 16 || be16(t + 16) != csum_fold(pseudo))
			abort();
	} else if (off || sum16(t, tcp_len, pseudo) != 0xffff) {
		abort();
	}
}

int vnet_tx(const struct vnet_seg *seg, int nseg, void *cookie, const struct vnet_tx_offload *off)
{
	const uint8_t *f = seg[0].base;
	size_t len = seg[0].len;
	if (nseg != 1 || len < 14 || len > 1514 || memcmp(f + 6, our_mac, 6) != 0)
		abort();
	if (frame_in) {
		if (++sent_for_frame > 1)
			abort(); /* one reply per frame */
		if (be16(f + 12) == 0x0806) { /* to the asker's hardware address */
			if (len != 42 || memcmp(f, frame_in + 22, 6) != 0 || be16(f + 20) != 2 || memcmp(f + 28, "\xc0\x00\x02\x02", 4) != 0 ||
			    memcmp(f + 32, frame_in + 22, 6) != 0 || memcmp(f + 38, frame_in + 28, 4) != 0)
				abort();
		} else if (be16(f + 12) == 0x0800) { /* back where the frame came from */
			if (memcmp(f, frame_in + 6, 6) != 0)
				abort();
			check_tcp(f, len, off);
		} else {
			abort();
		}
	}
	if (ring_full)
		return -ENOBUFS;
	if (nheld >= SLOTS)
		abort(); /* more frames than slots: one was handed out twice */
	held[nheld++] = cookie;
	return 0;
}

/* ---- the harness -------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool started;
	if (size < 1)
		return 0;
	if (!started) {
		memcpy(floor_cfg.mac, our_mac, 6);
		floor_cfg.ip = OUR_IP;
		floor_cfg.port = OUR_PORT;
		answer_init();
		link_init(); /* its gratuitous ARP goes out unchecked */
		vnet_tx_reclaim();
		started = true;
	}
	offload = floor_cfg.offload_csum = data[0] & 1;
	floor_cfg.allow_shutdown = data[0] & 2;
	floor_stop = false;
	size_t at = 1;
	while (size - at >= 3) {
		size_t len = be16(data + at);
		unsigned flags = data[at + 2];
		at += 3;
		if (len > size - at)
			len = size - at;
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, data + at, len);
		at += len;
		if (flags & 2)
			vnet_tx_reclaim();
		struct vnet_seg piece[2] = { { copy, len }, { copy, 0 } };
		uint16_t bufs[2] = { 0, 1 };
		struct vnet_frame fr = { .piece = piece, .buf = bufs, .npieces = flags & 8 ? 2 : 1, .len = len,
					 .csum_ok = flags & 1 };
		uint64_t full_before = floor_counters.drop_tx_full;
		int held_before = nheld;
		frame_in = copy, sent_for_frame = 0, ring_full = flags & 4;
		link_input(NULL, &fr);
		/* A reply dropped for want of a slot: only with all of them held
		 * (link.c reclaims first: this device hands them all back) or the
		 * ring full. */
		if (floor_counters.drop_tx_full != full_before && !ring_full && held_before < SLOTS)
			abort();
		frame_in = NULL;
		free(copy);
	}
	vnet_tx_reclaim();
	return 0;
}
