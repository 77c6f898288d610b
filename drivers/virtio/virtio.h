/*
 * virtio.h: the virtio-net driver's interface to the network stack.
 *
 * One device (the first modern virtio-net-pci function), driven without
 * locks from thread context; its MSI-X handlers only raise the wake flag. The
 * stack pulls received frames with vnet_rx() and pushes frames with
 * vnet_tx(); neither blocks. Frames carry no virtio-net header here: the
 * driver adds and strips it.
 */
#ifndef VIRTIO_H
#define VIRTIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One piece of an outgoing frame, in memory that stays valid (and unchanged)
 * until the driver reports the frame done. */
struct vnet_seg {
	const void *base;
	size_t len;
};

/* Called for each received frame; `frame` is valid only during the call. */
typedef void (*vnet_deliver_fn)(void *ctx, const void *frame, size_t len);
/* Called once for each transmitted frame when the device no longer reads it. */
typedef void (*vnet_tx_done_fn)(void *cookie);

struct vnet_stats {
	uint64_t rx_frames, rx_bytes;   /* delivered to the stack */
	uint64_t tx_frames, tx_bytes;   /* handed to the device */
	uint64_t rx_drop_bad_used;      /* used entries with an id or length out of range */
	uint64_t rx_drop_runt;          /* shorter than a header + Ethernet header */
	uint64_t rx_drop_merged;        /* multi-buffer frames (not negotiated) */
	uint64_t tx_drop_bad_used;      /* tx used entries out of range */
	uint64_t tx_ring_full;          /* vnet_tx refused: no descriptors */
	uint64_t tx_too_many_segs;      /* vnet_tx refused: more pieces than fit */
	uint64_t tx_bad_len;            /* vnet_tx refused: longer than a frame, or shorter than its header */
	uint64_t rx_refills, rx_kicks, tx_kicks, kicks_suppressed;
	uint64_t rx_interrupts, tx_interrupts, config_interrupts;
	uint64_t tx_watchdog_kicks;     /* notifies sent because the tx ring stood still: */
	uint64_t tx_watchdog_lost;      /*   the device waited for an entry published since the last notify */
	uint64_t tx_watchdog_late;      /*   it had been notified of everything it waited for */
	uint64_t rx_kicks_repaired;     /* notifies the rings' state showed were owed (lost kicks) */
	uint64_t tx_kicks_repaired;
	uint64_t rx_lost_interrupts;    /* waits of 1 ms or more that ended with frames waiting and no rx interrupt */
	uint64_t kicks_dropped;         /* notifies left unsent by fault injection (vnet_drop_kicks) */
};

/* Find and start the device. 0, or a negative errno after printing why. */
int vnet_init(void);
bool vnet_present(void);
void vnet_mac(uint8_t mac[6]);
bool vnet_link_up(void);

/* O(1): the device has returned at least one received buffer. */
bool vnet_rx_pending(void);
/* Deliver up to `budget` received frames, then refill the ring in one batch.
 * Returns the number delivered. */
int vnet_rx(vnet_deliver_fn deliver, void *ctx, int budget);

/* Queue one frame of `nseg` pieces (at most VNET_MAX_SEGS, total at most
 * 1514 bytes). 0, -ENOBUFS when the ring is full, -EINVAL when too long or
 * too many pieces. `cookie` goes to the tx-done callback. */
#define VNET_MAX_SEGS 16
int vnet_tx(const struct vnet_seg *seg, int nseg, void *cookie);
void vnet_set_tx_done(vnet_tx_done_fn done);
/* Report finished transmissions to the tx-done callback; returns how many. */
int vnet_tx_reclaim(void);

/* Receive interrupt on or off (a poll loop runs with it off). Turning it on
 * returns true when buffers arrived meanwhile: re-check before parking. It
 * also sends any notification the rings show the device is owed (the CPU
 * may park next). */
bool vnet_rx_irq_enable(bool on);

/* O(1): the driver needs a poll although no frame arrived: a notification the
 * device is owed (lost), or the transmit watchdog's deadline has passed. */
bool vnet_service_due(void);
/* clock_ns() time by which the driver needs a poll (the transmit watchdog's
 * deadline while frames are outstanding); UINT64_MAX when none. */
uint64_t vnet_next_deadline_ns(void);
/* Set by the device's interrupt handlers; the waiter clears it. */
extern volatile bool vnet_wake;

void vnet_get_stats(struct vnet_stats *st);
void vnet_stats_print(void);

#endif
