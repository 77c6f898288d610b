/*
 * test_vnet_notify.c: the virtio-net driver (drivers/virtio/virtio_net.c,
 * unchanged) against the netrx harness's simulated device
 * (tests/fuzz/netrx/device.c) in the modes that lose notifications as the
 * race of issue 12 does. With the repair on (the default): a lost transmit
 * kick and a lost receive refill kick are each sent at the very next poll,
 * counted per ring, with no time passing; normal traffic repairs nothing;
 * a CPU's park is bounded while transmit frames are outstanding; the
 * watchdog tells a late device from a lost notification; a lost interrupt
 * is counted; a poll's frames are batched only in a burst; a publish made
 * while received frames wait holds its notify decision until none wait, a
 * park comes or its polls are spent, and a working device takes what is
 * held unasked; a timed hold shares one notify between two polls' replies
 * and backs off when nothing joins it. Built a second time with VNET_REPAIR=0 (test_vnet_notify_off):
 * the same device modes then stall the receive ring for good and leave the
 * transmit ring to the watchdog, so the modes do lose notifications and the
 * repair is what recovers.
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
#include "drivers/virtio/vnet_internal.h"
#include "kernel/kernel.h"
#include "tests/fuzz/netrx/netrx.h"
#include "tests/unit/vnet_host.h"

#ifndef VNET_REPAIR
#define VNET_REPAIR 1
#endif
#define MS 1000000ULL

/* ---- the kernel as the driver sees it ------------------------------------------ */

static uint64_t now_ns = 1000 * MS;
uint64_t clock_ns(void) { return now_ns; }
const char *kernel_option(const char *key)
{
	return !VNET_REPAIR && strcmp(key, "vnet_repair") == 0 ? "0" : NULL;
}

/* The rest of the kernel's stand-ins: tests/unit/vnet_host.c. */

/* ---- traffic ---------------------------------------------------------------------- */

static uint8_t tx_frame[60] = { [12] = 0x88, [13] = 0xb5 }; /* a local ethertype: nothing to add up */
static int tx_done_count, rx_count;

static void tx_done(void *cookie) { (void)cookie, tx_done_count++; }
static void deliver(void *ctx, const struct vnet_frame *frame) { (void)ctx, (void)frame, rx_count++; }

static void send(void)
{
	struct vnet_seg seg = { tx_frame, sizeof tx_frame };
	assert_int_equal(vnet_tx(&seg, 1, tx_frame, NULL), 0);
}

/* The device receives one frame; false when it takes none. */
static bool arrive(void)
{
	uint8_t b[12 + 60] = { [10] = 1, [24] = 0x88, [25] = 0xb5 }; /* num_buffers 1 */
	return dev_rx(b, sizeof b, sizeof b, false);
}

/* What net_poll does with the driver. */
static void poll_once(void)
{
	vnet_tx_reclaim();
	vnet_rx(deliver, NULL, 64);
}

static struct vnet_stats stats(void)
{
	struct vnet_stats st;
	vnet_get_stats(&st);
	return st;
}

/* Every published frame taken and reclaimed, every buffer posted, the
 * device waiting with nothing owed. */
static void settle_all(void)
{
	for (int i = 0; i < 4; i++) {
		dev_tx_complete();
		poll_once();
	}
	assert_int_equal(dev_tx_pending(), 0);
	assert_null(dev_owed());
}

static int setup(void **state)
{
	(void)state;
	vnet_host_start(DEV_OFFER_TAP);
	vnet_set_tx_done(tx_done);
	dev_set_mode(0);
	settle_all();
	return 0;
}

/* ---- tests ------------------------------------------------------------------------ */

/* The device took frame 1 and went back to waiting, but our publish of frame
 * 2 read its old avail_event: no kick, and it waits for one. */
static void lose_tx_kick(void)
{
	dev_set_mode(DEV_MISS_TX);
	send();
	dev_tx_complete(); /* takes it, waits (its store late) */
	unsigned kicks = dev_notifies(1);
	send();
	assert_int_equal(dev_notifies(1), kicks); /* decided on the old avail_event */
	dev_tx_complete();                        /* its store lands: it waits for frame 2 */
	assert_int_equal(dev_tx_pending(), 1);
	assert_non_null(dev_owed());
}

static void tx_lost_kick(void **state)
{
	(void)state;
	struct vnet_stats before = stats();
	lose_tx_kick();
	unsigned kicks = dev_notifies(1);
	assert_int_equal(vnet_service_due(), VNET_REPAIR); /* the state shows it: poll now */
	poll_once();
	dev_tx_complete();
	struct vnet_stats after = stats();
#if VNET_REPAIR
	assert_int_equal(dev_notifies(1), kicks + 1);
	assert_int_equal(dev_tx_pending(), 0); /* recovered within one poll, no time passed */
	assert_int_equal(after.tx_kicks_repaired - before.tx_kicks_repaired, 1);
	assert_int_equal(after.tx_watchdog_kicks, before.tx_watchdog_kicks);
#else
	/* Nothing but the watchdog, 2 ms (TCG's watchdog) after the ring stood still,
	 * and it sees the device waiting for a frame never notified. */
	assert_int_equal(dev_tx_pending(), 1);
	now_ns += 1 * MS;
	poll_once();
	dev_tx_complete();
	assert_int_equal(dev_tx_pending(), 1);
	now_ns += 2 * MS;
	assert_true(vnet_service_due());
	poll_once();
	dev_tx_complete();
	assert_int_equal(dev_tx_pending(), 0);
	after = stats();
	assert_int_equal(after.tx_watchdog_lost - before.tx_watchdog_lost, 1);
	assert_int_equal(after.tx_kicks_repaired, 0);
	(void)kicks;
#endif
	dev_set_mode(0);
	settle_all();
}

/* 32 frames use every receive buffer; the 33rd finds none and the device
 * waits, its avail_event store late; our refill reads the old one. */
static void lose_rx_kick(void)
{
	dev_set_mode(DEV_MISS_RX);
	int taken = 0;
	while (arrive())
		taken++;
	assert_int_equal(taken, (int)dev_rx_ring_size());
	unsigned kicks = dev_notifies(0);
	int before = rx_count;
	vnet_rx(deliver, NULL, 64); /* delivers and refills: no notify */
	assert_int_equal(rx_count - before, taken);
	assert_int_equal(dev_notifies(0), kicks);
	assert_false(arrive()); /* its store lands; it waits for a notify of the refill */
	assert_non_null(dev_owed());
}

static void rx_lost_kick(void **state)
{
	(void)state;
	uint64_t repaired = stats().rx_kicks_repaired;
	lose_rx_kick();
	assert_int_equal(vnet_service_due(), VNET_REPAIR);
	poll_once();
#if VNET_REPAIR
	assert_true(arrive()); /* recovered within one poll */
	assert_int_equal(stats().rx_kicks_repaired - repaired, 1);
#else
	/* No receive watchdog: it waits for ever, parks or not. */
	for (int i = 0; i < 10; i++) {
		now_ns += 100 * MS;
		poll_once();
		vnet_rx_irq_enable(true);
		vnet_rx_irq_enable(false);
		assert_false(arrive());
	}
	assert_non_null(dev_owed());
	assert_int_equal(stats().rx_kicks_repaired, repaired);
	return; /* the receive ring of this process stays stalled: the last test */
#endif
	dev_set_mode(0);
	settle_all();
}

#if VNET_REPAIR
/* The receive side waits with buffers posted, too few for a 20,000-byte
 * merged segment (QEMU: avail_event = the avail idx it saw, used index
 * behind it), and misses the refill's notify: repaired at the next poll. */
static void rx_lost_kick_short(void **state)
{
	(void)state;
	static uint8_t big[12 + 20000];
	dev_set_mode(DEV_MISS_RX);
	for (int i = 0; i < 28; i++)
		assert_true(arrive());
	assert_int_equal(dev_rx_posted(), 4);
	assert_false(dev_rx(big, sizeof big, sizeof big, true)); /* needs 10: waits, its store late */
	unsigned kicks = dev_notifies(0);
	uint64_t repaired = stats().rx_kicks_repaired;
	vnet_rx(deliver, NULL, 64); /* refills 28 on the old avail_event: no notify */
	assert_int_equal(dev_notifies(0), kicks);
	assert_false(dev_rx(big, sizeof big, sizeof big, true)); /* its store lands: it waits */
	assert_non_null(dev_owed());
	assert_true(vnet_service_due());
	poll_once();
	assert_int_equal(stats().rx_kicks_repaired - repaired, 1);
	assert_true(dev_rx(big, sizeof big, sizeof big, true)); /* within one poll */
	dev_set_mode(0);
	settle_all();
}

/* Both rings, before the CPU parks: turning the receive interrupt on sends
 * what is owed, after one ordering read of the device. */
static void repaired_before_park(void **state)
{
	(void)state;
	struct vnet_stats before = stats();
	unsigned barriers = dev_barriers();
	lose_tx_kick();
	assert_false(vnet_rx_irq_enable(true)); /* nothing received: may park */
	vnet_rx_irq_enable(false);
	dev_tx_complete();
	struct vnet_stats after = stats();
	assert_int_equal(dev_tx_pending(), 0);
	assert_int_equal(after.tx_kicks_repaired - before.tx_kicks_repaired, 1);
	assert_int_equal(dev_barriers() - barriers, 1);
	assert_int_equal(after.rx_barrier_reads - before.rx_barrier_reads, 1);
	dev_set_mode(0);
	settle_all();
}

/* Where the CPU's fence orders against the device (KVM, hardware: barrier
 * "fence"), re-arming reads no device register, and a frame that came
 * before the interrupt was on is still seen by the look after the fence. */
static void fence_before_park(void **state)
{
	(void)state;
	bool was = vnet_dev.barrier_read;
	vnet_dev.barrier_read = false;
	unsigned barriers = dev_barriers();
	struct vnet_stats before = stats();
	assert_false(vnet_rx_irq_enable(true)); /* nothing received: may park */
	vnet_rx_irq_enable(false);
	assert_true(arrive());
	assert_true(vnet_rx_irq_enable(true)); /* it came first: no park */
	vnet_rx_irq_enable(false);
	assert_int_equal(dev_barriers(), barriers);
	assert_int_equal(stats().rx_barrier_reads, before.rx_barrier_reads);
	poll_once();
	vnet_dev.barrier_read = was;
	settle_all();
}

/* QEMU's way of notifying, every interleaving of a small workload: not one
 * repair (each would be a needless exit), no watchdog, nothing owed. */
static void no_false_repairs(void **state)
{
	(void)state;
	struct vnet_stats before = stats();
	uint32_t x = 7;
	for (int round = 0; round < 20000; round++) {
		x = x * 1103515245 + 12345;
		switch ((x >> 16) % 7) {
		case 0:
		case 1:
			if (dev_tx_pending() < 8)
				send();
			break;
		case 2:
			dev_tx_complete();
			break;
		case 3:
			arrive();
			break;
		case 4:
			poll_once();
			break;
		case 5:
			vnet_rx_irq_enable(true);
			break;
		case 6:
			vnet_rx_irq_enable(false);
			break;
		}
		/* Due only for a held notify decision (frames wait), never a repair. */
		assert_true(!vnet_service_due() || vnet_tx_held());
	}
	vnet_rx_irq_enable(false);
	settle_all();
	struct vnet_stats after = stats();
	assert_int_equal(after.rx_kicks_repaired, before.rx_kicks_repaired);
	assert_int_equal(after.tx_kicks_repaired, before.tx_kicks_repaired);
	assert_int_equal(after.tx_watchdog_kicks, before.tx_watchdog_kicks);
}

#endif

/* While the device holds frames, the driver wants a look by the watchdog's
 * deadline; a device notified and merely slow gets a "late" watchdog kick. */
static void deadline_while_outstanding(void **state)
{
	(void)state;
	struct vnet_stats before = stats();
	assert_int_equal(vnet_next_deadline_ns(), UINT64_MAX);
	send(); /* notified; the device does not run yet */
	uint64_t deadline = vnet_next_deadline_ns();
	assert_true(deadline > now_ns && deadline <= now_ns + 2 * MS);
	now_ns = deadline - 1;
	assert_false(vnet_service_due());
	now_ns = deadline;
	assert_true(vnet_service_due());
	poll_once();
	struct vnet_stats after = stats();
	assert_int_equal(after.tx_watchdog_late - before.tx_watchdog_late, 1);
	assert_int_equal(after.tx_watchdog_lost, before.tx_watchdog_lost);
	assert_int_equal(vnet_next_deadline_ns(), now_ns + 2 * MS); /* the next look */
	dev_tx_complete();
	poll_once();
	assert_int_equal(vnet_next_deadline_ns(), UINT64_MAX);
	settle_all();
}

/* The device's interrupt decision read the used_event from before we turned
 * the interrupt on: the park ends with a frame waiting and no interrupt. */
static void lost_interrupt_counted(void **state)
{
	(void)state;
	dev_set_mode(DEV_MISS_IRQ);
	assert_true(arrive()); /* decided with the interrupt off: remembered */
	poll_once();
	struct vnet_stats before = stats();
	assert_false(vnet_rx_irq_enable(true));
	assert_true(arrive()); /* decides on the stale used_event: no interrupt */
	now_ns += 1 * MS;      /* the park ends at its deadline */
	vnet_rx_irq_enable(false);
	struct vnet_stats after = stats();
	assert_int_equal(after.rx_interrupts, before.rx_interrupts);
	assert_int_equal(after.rx_lost_interrupts - before.rx_lost_interrupts, 1);
	/* As QEMU decides: the interrupt comes, nothing is counted. */
	dev_set_mode(0);
	poll_once();
	assert_false(vnet_rx_irq_enable(true));
	assert_true(arrive());
	now_ns += 1 * MS;
	vnet_rx_irq_enable(false);
	after = stats();
	assert_int_equal(after.rx_interrupts - before.rx_interrupts, 1);
	assert_int_equal(after.rx_lost_interrupts - before.rx_lost_interrupts, 1);
	settle_all();
}

/* vnet_tx_batch=2, and 3 (the default) with no frames waiting: a bracket begun for a lone frame
 * publishes each frame as it is added; one begun for a burst, or nested in
 * one, holds its frames until the outermost end and publishes them with one
 * notify decision, counted as one batch of that many frames. */
static void tx_batch_bursts(void **state)
{
	(void)state;
	struct vnet_stats before = stats();
	unsigned kicks = dev_notifies(1);
	vnet_tx_batch_begin(false);
	send();
	assert_int_equal(dev_tx_pending(), 1); /* a lone reply leaves as it is made */
	assert_int_equal(dev_notifies(1), kicks + 1);
	vnet_tx_batch_end();
	settle_all();
	struct vnet_stats after = stats();
	assert_int_equal(after.tx_batches, before.tx_batches);
	assert_int_equal(after.tx_batched_frames, before.tx_batched_frames);

	kicks = dev_notifies(1);
	vnet_tx_batch_begin(false);
	send();                       /* before the burst is seen: at once */
	vnet_tx_batch_begin(true);    /* net_poll finds two frames waiting */
	send();
	send();
	vnet_tx_batch_end();
	assert_int_equal(dev_tx_pending(), 1); /* held until the outermost end */
	vnet_tx_batch_end();
	assert_int_equal(dev_tx_pending(), 3);
	assert_int_equal(dev_notifies(1), kicks + 1); /* the device had not run: one notify in all */
	after = stats();
	assert_int_equal(after.tx_batches - before.tx_batches, 1);
	assert_int_equal(after.tx_batched_frames - before.tx_batched_frames, 2);
	settle_all();

	vnet_tx_batch_begin(true); /* a burst bracket that sends nothing counts nothing */
	vnet_tx_batch_end();
	send();                    /* outside any bracket: at once */
	assert_int_equal(dev_tx_pending(), 1);
	after = stats();
	assert_int_equal(after.tx_batches - before.tx_batches, 1);
	settle_all();
}

/* vnet_tx_batch=3 (the default): with received frames waiting, a publish
 * exposes its frame and holds the notify decision; the first settle point
 * that finds none waiting decides over all of it, with one notify. */
static void tx_hold(void **state)
{
	(void)state;
	struct vnet_stats before = stats();
	unsigned kicks = dev_notifies(1);
	assert_true(arrive());
	assert_true(arrive());
	send();
	send();
	assert_int_equal(dev_tx_pending(), 2);        /* exposed: a working device would take them */
	assert_int_equal(dev_notifies(1), kicks);     /* but the waiting one is not told yet */
	assert_true(vnet_service_due());              /* a poll is due for the decision */
	poll_once();                                  /* takes the frames that were waiting */
	assert_int_equal(dev_notifies(1), kicks);
	vnet_tx_batch_begin(false);
	vnet_tx_batch_end();                          /* a poll's end, none waiting: decided */
	assert_int_equal(dev_notifies(1), kicks + 1);
	struct vnet_stats after = stats();
	assert_int_equal(after.tx_holds - before.tx_holds, 1);
	assert_int_equal(after.tx_held_publishes - before.tx_held_publishes, 2);
	assert_int_equal(after.tx_kicks - before.tx_kicks, 1);
	settle_all();

	/* Nothing waiting: decided at once, as with 2. */
	kicks = dev_notifies(1);
	send();
	assert_int_equal(dev_notifies(1), kicks + 1);
	/* The device is working (notified, not yet run): what is held meanwhile
	 * it takes unasked, and the decision before a park sends nothing. */
	assert_true(arrive());
	send();
	dev_tx_complete();
	assert_int_equal(dev_tx_pending(), 0);
	assert_true(vnet_rx_irq_enable(true));        /* a frame waits: no park, but decided */
	vnet_rx_irq_enable(false);
	assert_int_equal(dev_notifies(1), kicks + 1);
	after = stats();
	assert_int_equal(after.tx_holds - before.tx_holds, 2);
	assert_int_equal(after.tx_holds_parked - before.tx_holds_parked, 1);
	assert_null(dev_owed());
	settle_all();

	/* Frames that keep waiting hold it for 8 polls, no more. */
	kicks = dev_notifies(1);
	assert_true(arrive());
	send();
	for (int i = 0; i < 7; i++) {
		vnet_tx_batch_begin(false);
		vnet_tx_batch_end();
	}
	assert_int_equal(dev_notifies(1), kicks);
	vnet_tx_batch_begin(false);
	vnet_tx_batch_end();
	assert_int_equal(dev_notifies(1), kicks + 1);
	assert_false(vnet_service_due());
	settle_all();
}

/* One poll (net_poll's bracket) that sends a frame, or only ends. */
static void poll_sending(bool sends)
{
	vnet_tx_batch_begin(false);
	if (sends)
		send();
	vnet_tx_batch_end();
}

static bool one_client(void) { return false; }

/* vnet_tx_hold_us (on outside TCG): a poll's publish with nothing waiting
 * holds its notify; the reply of a later poll joins it and one notify
 * carries both; a hold nothing joins ends at its deadline, or before a
 * park, and the publishes after it decide at once, 1, then 2, before the
 * next is tried; a joined one ends the backing off. A frame sent outside a
 * poll is never held, nor one sent while the network layer says no other
 * client may ask meanwhile. */
static void tx_timed_hold(void **state)
{
	(void)state;
	const uint64_t hold = 300000;
	vnet_dev.tx_hold_ns = (int64_t)hold;
	vnet_dev.tx_hold_skip = vnet_dev.tx_hold_backoff = 0;
	struct vnet_stats before = stats();
	unsigned kicks = dev_notifies(1);

	vnet_tx_batch_begin(false);
	send();
	send();                                           /* the same poll's frames join, ending nothing */
	vnet_tx_batch_end();
	assert_int_equal(dev_tx_pending(), 2);            /* exposed */
	assert_int_equal(dev_notifies(1), kicks);         /* the idle device not told */
	assert_false(vnet_service_due());                 /* nothing due before the deadline */
	assert_int_equal(vnet_next_deadline_ns(), now_ns + hold);
	poll_sending(true);                               /* the next request's reply joins */
	assert_int_equal(dev_tx_pending(), 3);
	assert_int_equal(dev_notifies(1), kicks + 1);     /* one notify for both */
	struct vnet_stats after = stats();
	assert_int_equal(after.tx_timed_holds - before.tx_timed_holds, 1);
	assert_int_equal(after.tx_timed_holds_joined - before.tx_timed_holds_joined, 1);
	assert_int_equal(after.tx_kicks - before.tx_kicks, 1);
	settle_all();

	/* Joined while the next request already waits: held on, as a hold
	 * made with frames waiting, until none wait. */
	kicks = dev_notifies(1);
	poll_sending(true);
	assert_true(arrive());
	poll_sending(true);
	assert_int_equal(dev_notifies(1), kicks);
	poll_once();                                      /* takes the frame */
	poll_sending(false);
	assert_int_equal(dev_notifies(1), kicks + 1);
	after = stats();
	assert_int_equal(after.tx_holds - before.tx_holds, 1);
	settle_all();
	before = stats();

	/* Nothing joins: decided at the deadline, then one publish at once. */
	kicks = dev_notifies(1);
	poll_sending(true);
	poll_sending(false);                              /* a poll without a reply ends nothing */
	assert_int_equal(dev_notifies(1), kicks);
	now_ns += hold;
	assert_true(vnet_service_due());
	poll_sending(false);
	assert_int_equal(dev_notifies(1), kicks + 1);
	settle_all();
	poll_sending(true);                               /* tried again: backing off starts at 0 */
	assert_int_equal(dev_notifies(1), kicks + 1);
	now_ns += hold;
	poll_sending(false);                              /* second unjoined: skip 1 */
	assert_int_equal(dev_notifies(1), kicks + 2);
	settle_all();
	poll_sending(true);
	assert_int_equal(dev_notifies(1), kicks + 3);     /* at once */
	settle_all();
	poll_sending(true);                               /* held again; a park decides it */
	assert_int_equal(dev_notifies(1), kicks + 3);
	assert_false(vnet_rx_irq_enable(true));
	vnet_rx_irq_enable(false);
	assert_int_equal(dev_notifies(1), kicks + 4);
	settle_all();
	for (int i = 0; i < 2; i++) {                     /* third unjoined: skip 2 */
		poll_sending(true);
		assert_int_equal(dev_notifies(1), kicks + 5 + i);
		settle_all();
	}
	poll_sending(true);
	poll_sending(true);                               /* joined: backing off ends */
	assert_int_equal(dev_notifies(1), kicks + 7);
	assert_int_equal(vnet_dev.tx_hold_backoff, 0);
	after = stats();
	assert_int_equal(after.tx_timed_holds - before.tx_timed_holds, 4);
	assert_int_equal(after.tx_timed_holds_joined - before.tx_timed_holds_joined, 1);
	assert_int_equal(after.tx_timed_holds_expired - before.tx_timed_holds_expired, 2);
	settle_all();

	send();                                           /* outside a poll: at once */
	assert_int_equal(dev_notifies(1), kicks + 8);
	settle_all();

	/* One connection open: nobody else will ask; decided at once. */
	vnet_set_tx_hold_worth(one_client);
	poll_sending(true);
	assert_int_equal(dev_notifies(1), kicks + 9);
	after = stats();
	assert_int_equal(after.tx_timed_holds - before.tx_timed_holds, 4);
	settle_all();
	vnet_set_tx_hold_worth(NULL);
	vnet_dev.tx_hold_ns = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(tx_lost_kick, setup),
		cmocka_unit_test_setup(deadline_while_outstanding, setup),
		cmocka_unit_test_setup(lost_interrupt_counted, setup),
		cmocka_unit_test_setup(tx_batch_bursts, setup),
		cmocka_unit_test_setup(tx_hold, setup),
		cmocka_unit_test_setup(tx_timed_hold, setup),
#if VNET_REPAIR
		cmocka_unit_test_setup(repaired_before_park, setup),
		cmocka_unit_test_setup(fence_before_park, setup),
		cmocka_unit_test_setup(rx_lost_kick_short, setup),
		cmocka_unit_test_setup(no_false_repairs, setup),
#endif
		cmocka_unit_test_setup(rx_lost_kick, setup), /* last: without the repair it stalls the ring */
	};
	return cmocka_run_group_tests_name(VNET_REPAIR ? "vnet_notify" : "vnet_notify_off", tests, NULL, NULL);
}
