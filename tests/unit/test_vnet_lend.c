/*
 * test_vnet_lend.c: receive buffers lent to the stack (vnet_rx_lend, issue
 * 21) against the netrx harness's simulated device. A lent frame's bytes stay
 * as they were while the stack holds them and the device fills the ring
 * again and again; the ring stays full throughout (the reserve takes the lent
 * buffers' places); with the reserve spent a loan is refused and counted,
 * and the ring is still full; buffers handed back make loans possible again;
 * a frame over several buffers is lent whole; a frame is lent once.
 */
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

/* ---- the kernel as the driver sees it ------------------------------------------ */

uint64_t clock_ns(void) { return 1000000000ULL; }
const char *kernel_option(const char *key) { (void)key; return NULL; }
/* The rest of the kernel's stand-ins: tests/unit/vnet_host.c. */

/* ---- frames the stack holds ------------------------------------------------------ */

#define HELD_MAX VNET_RX_BUFS_MAX

struct held {
	uint16_t buf[40];        /* the frame's buffers */
	const uint8_t *base[40]; /* and its bytes in each */
	size_t len[40];
	int npieces;
	uint8_t seed;            /* what its bytes were made of */
};
static struct held held[HELD_MAX];
static int nheld, delivered, copied;
static bool borrow = true;

static uint8_t rec[70000]; /* header + frame, as the device writes them */

/* Frame bytes of `len` after the 12-byte header, from `seed`. */
static size_t frame(size_t len, uint8_t seed, uint16_t num_buffers)
{
	memset(rec, 0, 12);
	memcpy(rec + 10, &num_buffers, 2);
	memcpy(rec + 12, dev_mac, 6);
	for (size_t i = 6; i < len; i++)
		rec[12 + i] = (uint8_t)(seed + i * 13);
	rec[12 + 12] = 0x88, rec[12 + 13] = 0xb5; /* an experimental EtherType: the driver does not look */
	return len;
}

static bool bytes_are(const struct held *h)
{
	size_t at = 0;
	for (int i = 0; i < h->npieces; i++)
		for (size_t j = 0; j < h->len[i]; j++, at++) {
			uint8_t want = at < 6 ? dev_mac[at] : at == 12 ? 0x88 : at == 13 ? 0xb5
								     : (uint8_t)(h->seed + at * 13);
			if (h->base[i][j] != want)
				return false;
		}
	return true;
}

static uint8_t seed_now;

static void deliver(void *ctx, const struct vnet_frame *fr)
{
	(void)ctx;
	delivered++;
	if (!borrow || !vnet_rx_lend(fr)) {
		copied++;
		return;
	}
	assert_false(vnet_rx_lend(fr)); /* once */
	struct held *h = &held[nheld++];
	h->npieces = fr->npieces;
	h->seed = seed_now;
	for (int i = 0; i < fr->npieces; i++) {
		h->buf[i] = fr->buf[i];
		h->base[i] = fr->piece[i].base;
		h->len[i] = fr->piece[i].len;
	}
	assert_true(bytes_are(h));
}

static struct vnet_stats stats(void)
{
	struct vnet_stats st;
	vnet_get_stats(&st);
	return st;
}

/* The device writes one frame; the driver polls. The ring is full after. */
static void receive(size_t len, uint8_t seed, bool merged)
{
	seed_now = seed;
	frame(len, seed, merged ? 0 : 1);
	assert_true(dev_rx(rec, 12 + len, (uint32_t)(12 + len), merged));
	vnet_rx(deliver, NULL, 64);
	assert_int_equal(dev_rx_posted(), dev_rx_ring_size());
}

static void give_all_back(void)
{
	for (int k = 0; k < nheld; k++) {
		assert_true(bytes_are(&held[k]));
		for (int i = 0; i < held[k].npieces; i++)
			vnet_rx_give_back(held[k].buf[i]);
	}
	nheld = 0;
}

static int setup(void **state)
{
	(void)state;
	vnet_host_start(DEV_OFFER_TAP);
	give_all_back();
	borrow = true;
	return 0;
}

/* ---- the loans --------------------------------------------------------------------- */

static void lent_frames_stay_and_the_ring_stays_full(void **state)
{
	(void)state;
	unsigned ring = dev_rx_ring_size(), reserve = 3 * ring;
	if (ring + reserve > VNET_RX_BUFS_MAX)
		reserve = VNET_RX_BUFS_MAX - ring;
	struct vnet_stats before = stats();
	/* As many frames as the reserve holds, each kept: every one lent. */
	for (unsigned k = 0; k < reserve; k++)
		receive(60 + k % 1400, (uint8_t)k, false);
	assert_int_equal(nheld, reserve);
	assert_int_equal(vnet_rx_buffers_held(), reserve);
	/* Then the ring turns over twice more under frames that are copied
	 * (the reserve is spent): what the stack holds is untouched. */
	for (unsigned k = 0; k < 2 * ring; k++)
		receive(1514, 0xee, false);
	for (int k = 0; k < nheld; k++)
		assert_true(bytes_are(&held[k]));
	struct vnet_stats after = stats();
	assert_int_equal(after.rx_lent - before.rx_lent, reserve);
	assert_int_equal(after.rx_lend_refused - before.rx_lend_refused, 2 * ring);
	assert_int_equal(copied, 2 * ring);
	copied = 0;
	/* Handed back, the buffers make loans possible again. */
	give_all_back();
	assert_int_equal(vnet_rx_buffers_held(), 0);
	assert_int_equal(stats().rx_given_back - after.rx_given_back, reserve);
	receive(100, 7, false);
	assert_int_equal(nheld, 1);
	assert_int_equal(copied, 0);
}

static void a_merged_frame_is_lent_whole(void **state)
{
	(void)state;
	size_t len = 5000; /* three 2 KiB buffers */
	receive(len, 42, true);
	assert_int_equal(nheld, 1);
	assert_int_equal(held[0].npieces, 3);
	assert_int_equal(held[0].len[0] + held[0].len[1] + held[0].len[2], len);
	assert_int_equal(vnet_rx_buffers_held(), 3);
	for (int k = 0; k < 3; k++)
		receive(1514, 0x11, true);
	assert_true(bytes_are(&held[0]));
	give_all_back();
	assert_int_equal(vnet_rx_buffers_held(), 0);
}

/* Short of the reserve by one buffer less than a merged frame needs: the
 * loan is refused, not half made. */
static void a_loan_is_all_or_nothing(void **state)
{
	(void)state;
	unsigned ring = dev_rx_ring_size(), reserve = 3 * ring;
	if (ring + reserve > VNET_RX_BUFS_MAX)
		reserve = VNET_RX_BUFS_MAX - ring;
	for (unsigned k = 0; k < reserve - 2; k++)
		receive(100, (uint8_t)k, false);
	assert_int_equal(vnet_rx_buffers_held(), reserve - 2);
	copied = 0;
	receive(5000, 9, true); /* needs 3, 2 left */
	assert_int_equal(copied, 1);
	assert_int_equal(vnet_rx_buffers_held(), reserve - 2);
	receive(100, 3, true); /* needs 1 */
	assert_int_equal(copied, 1);
	assert_int_equal(vnet_rx_buffers_held(), reserve - 1);
	give_all_back();
}

/* A stack that copies everything never holds a buffer. */
static void without_loans_nothing_is_held(void **state)
{
	(void)state;
	borrow = false;
	for (int k = 0; k < 1200; k++)
		receive(1514, (uint8_t)k, false);
	assert_int_equal(vnet_rx_buffers_held(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(lent_frames_stay_and_the_ring_stays_full, setup),
		cmocka_unit_test_setup(a_merged_frame_is_lent_whole, setup),
		cmocka_unit_test_setup(a_loan_is_all_or_nothing, setup),
		cmocka_unit_test_setup(without_loans_nothing_is_held, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
