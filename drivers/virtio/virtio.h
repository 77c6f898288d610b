/*
 * virtio.h: the virtio-net driver's interface to the network stack.
 *
 * One device (the first modern virtio-net-pci function), driven without
 * locks from thread context; its MSI-X handlers only raise the wake flag. The
 * stack pulls received frames with vnet_rx() and pushes frames with
 * vnet_tx(); neither blocks. Frames carry no virtio-net header here: the
 * driver adds and strips it, and says what it meant (struct vnet_frame,
 * struct vnet_tx_offload) for the checksum and segmentation offloads it
 * negotiated (vnet_offloads).
 */
#ifndef VIRTIO_H
#define VIRTIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One piece of a frame. Outgoing: in memory that stays valid (and unchanged)
 * until the driver reports the frame done. */
struct vnet_seg {
	const void *base;
	size_t len;
};

/* A received frame, as the device delivered it: its bytes in one piece per
 * device buffer it spans (valid only during the deliver call, unless the
 * stack borrows them: vnet_rx_lend), and what the device's header said of
 * it, checked. */
struct vnet_frame {
	const struct vnet_seg *piece; /* the frame's bytes, in order */
	const uint16_t *buf;          /* the receive buffer each piece lies in (vnet_rx_give_back) */
	int npieces;                  /* 1, or more with merged buffers */
	size_t len;                   /* all pieces together */
	bool csum_ok;                 /* an IPv4 TCP or UDP packet whose transport checksum the
	                               * device vouches for: checked (DATA_VALID), or never
	                               * computed because it never crossed a wire (NEEDS_CSUM) */
	uint16_t gso_size;            /* a TCP segment the host made of several of this size
	                               * (GUEST_TSO4); 0 for an ordinary frame */
};

/* Called for each received frame. */
typedef void (*vnet_deliver_fn)(void *ctx, const struct vnet_frame *frame);
/* Called once for each transmitted frame when the device no longer reads it. */
typedef void (*vnet_tx_done_fn)(void *cookie);

/* Offloads negotiated with the device (vnet_offloads). Kernel option
 * vnet_offload=0 refuses them all, vnet_offload=csum all but TSO. */
#define VNET_OFF_TX_CSUM 0x1 /* it completes TCP/UDP checksums we leave partial (F_CSUM) */
#define VNET_OFF_RX_CSUM 0x2 /* received frames may say their checksum is good (F_GUEST_CSUM) */
#define VNET_OFF_TX_TSO4 0x4 /* it cuts TCPv4 frames up to 64 KiB into segments (F_HOST_TSO4) */
#define VNET_OFF_RX_TSO4 0x8 /* it may deliver TCPv4 segments up to 64 KiB (F_GUEST_TSO4) */

/* What the device is to do with an outgoing frame besides sending it: its
 * TCP or UDP checksum, which covers the bytes from csum_start (counted from
 * the Ethernet header) to the end and goes at csum_start + csum_offset,
 * where the frame holds the pseudo-header's sum; and, with gso_size, cutting
 * a TCPv4 frame into segments of gso_size payload bytes behind copies of its
 * first hdr_len bytes (the Ethernet, IP and TCP headers). */
struct vnet_tx_offload {
	uint16_t csum_start, csum_offset;
	uint16_t gso_size; /* 0: one frame */
	uint16_t hdr_len;  /* with gso_size */
};

struct vnet_stats {
	uint64_t rx_frames, rx_bytes;   /* delivered to the stack */
	uint64_t tx_frames, tx_bytes;   /* handed to the device */
	uint64_t rx_drop_bad_used;      /* used entries with an id or length out of range */
	uint64_t rx_drop_runt;          /* shorter than a header + Ethernet header */
	uint64_t rx_drop_merged;        /* num_buffers 0, or more than a frame can span */
	uint64_t rx_drop_bad_header;    /* flags, gso_type, csum_start/offset, gso_size or hdr_len
	                                 * not negotiated or not matching the packet */
	uint64_t rx_drop_too_long;      /* longer than a pbuf can hold (64 KiB) */
	uint64_t rx_drop_injected;      /* dropped by fault injection (vnet_drop_rx) */
	uint64_t rx_multi_buffer;       /* delivered frames that spanned several buffers */
	uint64_t rx_gso;                /* delivered TCP segments the host merged (GUEST_TSO4) */
	uint64_t rx_csum_valid;         /* delivered with DATA_VALID: lwIP's check skipped */
	uint64_t rx_csum_partial;       /* delivered with NEEDS_CSUM: no checksum to check */
	uint64_t rx_lent, rx_lent_bufs; /* delivered frames lent to the stack, and their buffers */
	uint64_t rx_lend_refused;       /* loans refused: the reserve was short (the stack copied) */
	uint64_t rx_given_back;         /* lent buffers the stack handed back */
	uint64_t rx_give_back_bad;      /* hand-backs of buffers not lent (a bug; ignored) */
	uint64_t rx_post_failed;        /* buffers the ring had no room for (kept in the reserve) */
	uint64_t rx_drop_empty_buffer;  /* merged frames with a buffer that held no bytes */
	uint64_t tx_drop_bad_used;      /* tx used entries out of range */
	uint64_t tx_ring_full;          /* vnet_tx refused: no descriptors */
	uint64_t tx_too_many_segs;      /* vnet_tx refused: more pieces than fit */
	uint64_t tx_bad_len;            /* vnet_tx refused: longer than a frame, or shorter than its header */
	uint64_t tx_bad_offload;        /* vnet_tx refused: an offload not negotiated or out of the frame */
	uint64_t tx_drop_injected;      /* not given to the device, by fault injection (vnet_drop_tx) */
	uint64_t tx_csum;               /* frames whose checksum the device completes */
	uint64_t tx_gso, tx_gso_segments; /* frames the device cuts into segments, and their segments */
	uint64_t rx_refills, rx_kicks, tx_kicks, kicks_suppressed;
	uint64_t rx_interrupts, tx_interrupts, config_interrupts;
	uint64_t tx_watchdog_kicks;     /* notifies sent because the tx ring stood still: */
	uint64_t tx_watchdog_lost;      /*   the device waited for an entry published since the last notify */
	uint64_t tx_watchdog_late;      /*   it had been notified of everything it waited for */
	uint64_t rx_kicks_repaired;     /* notifies the rings' state showed were owed (lost kicks) */
	uint64_t tx_kicks_repaired;
	uint64_t rx_lost_interrupts;    /* waits of 1 ms or more that ended with frames waiting and no rx interrupt */
	uint64_t rx_barrier_reads;      /* device reads that ordered a re-armed interrupt before the last look */
	uint64_t kicks_dropped;         /* notifies left unsent by fault injection (vnet_drop_kicks) */
	uint64_t tx_batches;            /* brackets that held frames back and published them at their end */
	uint64_t tx_batched_frames;     /*   the frames they held */
	uint64_t tx_holds;              /* notify decisions held while received frames waited (vnet_tx_batch=3) */
	uint64_t tx_held_publishes;     /*   publishes made under them */
	uint64_t tx_holds_parked;       /*   decided early because the CPU might park */
	uint64_t tx_timed_holds;        /* notify decisions held with nothing waiting (vnet_tx_hold_us) */
	uint64_t tx_timed_holds_joined; /*   ended by a later poll's publish: one notify for both */
	uint64_t tx_timed_holds_expired; /*   ended at their deadline, nothing joined */
};

/* Find and start the device. 0, or a negative errno after printing why. */
int vnet_init(void);
bool vnet_present(void);
void vnet_mac(uint8_t mac[6]);
bool vnet_link_up(void);

/* O(1): the device has returned at least one received buffer. */
bool vnet_rx_pending(void);
/* Deliver up to `budget` received frames, then refill the ring in one batch.
 * Returns the number delivered. Kernel option vnet_drop_rx=N (fault
 * injection) drops one in N frames instead. */
int vnet_rx(vnet_deliver_fn deliver, void *ctx, int budget);

/* Receive buffers lent to the stack. A deliver callback may borrow the
 * frame it was given instead of copying it: vnet_rx_lend(frame) returns
 * true when the driver has spare buffers (its reserve) to put in the ring
 * in place of the frame's, and the frame's pieces then stay valid, the
 * stack's, until it hands each buffer back with vnet_rx_give_back(frame->
 * buf[i]). False when the reserve is short (a stack or a reader holding
 * many): then copy, as without lending. A frame is lent once at most.
 * Kernel option vnet_rx_lend=0 refuses every loan. */
#define VNET_RX_BUFS_MAX 1024 /* buffers in all, ring and reserve */
bool vnet_rx_lend(const struct vnet_frame *frame);
void vnet_rx_give_back(uint16_t buf);
/* Buffers the stack holds now (the soak's leak check wants 0 when idle). */
unsigned vnet_rx_buffers_held(void);
/* The reserve's size: buffers the stack may hold in all (0 without lending). */
unsigned vnet_rx_reserve_size(void);

/* VNET_OFF_* negotiated (0 before vnet_init). */
unsigned vnet_offloads(void);

/* Queue one frame of `nseg` pieces (at most VNET_MAX_SEGS; at most 1514
 * bytes, or with off->gso_size 14 + 65535), with `off` (NULL: none; needs
 * VNET_OFF_TX_CSUM, and TX_TSO4 for gso_size). 0, -ENOBUFS when the ring
 * is full, -EINVAL when too long, too many pieces, or an offload not
 * negotiated or out of the frame. `cookie` goes to the tx-done callback.
 * Kernel option vnet_drop_tx=N (fault injection) drops one in N frames,
 * reported done at once. */
#define VNET_MAX_SEGS 48
#define VNET_GSO_FRAME_MAX (14 + 65535)
int vnet_tx(const struct vnet_seg *seg, int nseg, void *cookie, const struct vnet_tx_offload *off);
/* Whether a frame of `nseg` pieces would find room now, or after reclaiming
 * what the device has finished. */
bool vnet_tx_room(int nseg);
/* The most pieces a frame can have here: VNET_MAX_SEGS, or fewer where the
 * ring is small (a frame takes one descriptor more, for its header). */
int vnet_tx_max_segs(void);
void vnet_set_tx_done(vnet_tx_done_fn done);
/* Report finished transmissions to the tx-done callback; returns how many. */
int vnet_tx_reclaim(void);
/* Bracket a poll: frames vnet_tx() takes between a begin that batches and
 * the outermost end are published together at the end, with one notify
 * decision. `burst` says the poll has more than one thing to answer (frames
 * waiting, sockets listed); kernel option vnet_tx_batch chooses which polls
 * batch: 0 none, 1 every one, 2 bursts only, 3 (the default) bursts, and a
 * publish made while received frames wait holds its notify (vnet_tx.c).
 * Brackets nest. */
enum { VNET_TX_BATCH_NONE, VNET_TX_BATCH_ALL, VNET_TX_BATCH_BURSTS, VNET_TX_BATCH_HOLD };
void vnet_tx_batch_begin(bool burst);
void vnet_tx_batch_end(void);
/* O(1): a notify decision is held (vnet_tx.c). */
bool vnet_tx_held(void);
/* A timed hold (kernel option vnet_tx_hold_us) waits for another client's
 * request; the network layer says whether one may come: with a single
 * connection open, the next request waits for this very reply. Asked only
 * when a timed hold would start; without it set, holds are always tried. */
typedef bool (*vnet_tx_hold_worth_fn)(void);
void vnet_set_tx_hold_worth(vnet_tx_hold_worth_fn worth);
/* O(1): the device has taken every frame published: none held, none it has
 * yet to mark used. */
bool vnet_tx_idle(void);
/* O(1): the device has returned at least two received buffers (a burst). */
bool vnet_rx_burst(void);

/* Receive interrupt on or off (a poll loop runs with it off). Turning it on
 * returns true when buffers arrived meanwhile: re-check before parking. It
 * also sends any notification the rings show the device is owed (the CPU
 * may park next). */
bool vnet_rx_irq_enable(bool on);
/* The device's interrupts to the calling CPU from now on; -1 if refused. */
int vnet_route_irqs_here(void);

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
