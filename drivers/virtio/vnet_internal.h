/*
 * vnet_internal.h: what the files of the virtio-net driver share (the stack
 * includes virtio.h, not this): the device's state, the virtio-net header,
 * and the helpers each part offers the others. virtio_net.c sets the device
 * up, negotiates its offloads, handles interrupts and notifications (lost
 * ones included) and prints the counters; vnet_rx.c is the receive path,
 * vnet_tx.c the transmit path and its watchdog.
 */
#ifndef VNET_INTERNAL_H
#define VNET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "virtio.h"
#include "virtio_dev.h"
#include "virtqueue.h"

/* Feature bits (virtio spec 5.1.3). */
#define VIRTIO_NET_F_CSUM       0
#define VIRTIO_NET_F_GUEST_CSUM 1
#define VIRTIO_NET_F_MAC        5
#define VIRTIO_NET_F_GUEST_TSO4 7
#define VIRTIO_NET_F_HOST_TSO4  11
#define VIRTIO_NET_F_MRG_RXBUF  15
#define VIRTIO_NET_F_STATUS     16

/* virtio_net_hdr fields (5.1.6). */
#define VNET_HDR_F_NEEDS_CSUM 1
#define VNET_HDR_F_DATA_VALID 2
#define VNET_HDR_GSO_NONE     0
#define VNET_HDR_GSO_TCPV4    1

#define RXQ 0
#define TXQ 1
#define MAX_QUEUE   256
#define RX_BUF_SIZE 2048
#define ETH_HLEN    14
#define MAX_FRAME   1514
/* With lending, the spare receive buffers, in rings' worth (at most
 * VNET_RX_BUFS_MAX buffers in all): what the stack may hold before it copies.
 * 768 buffers of a 256-entry ring hold three 256 KiB windows of merged
 * segments (2 KiB per buffer) with room to spare. */
#define RX_RESERVE_RINGS 3
/* A received frame longer than this cannot be one pbuf (16-bit lengths). */
#define RX_FRAME_MAX 65535
/* Buffers one frame may span: 64 KiB behind the header, in 2 KiB buffers. */
#define RX_MAX_BUFS 34
/* A transmit ring the device has not advanced for this long, with frames
 * published, gets a notify whether or not the event index asked for one; a
 * CPU parks no longer than that while frames are outstanding. Short under
 * TCG, where a guest fence may not order against QEMU's I/O thread and a
 * notify can be lost (virtio_net.c); elsewhere a backstop that should never
 * fire, whose every spurious notify is an exit (kernel option
 * vnet_tx_watchdog_us sets either). */
#define TX_WATCHDOG_TCG_NS  2000000
#define TX_WATCHDOG_NS     50000000

/* The header in front of every frame (VERSION_1: always 12 bytes). */
struct virtio_net_hdr {
	uint8_t flags;        /* VNET_HDR_F_*: checksum offload */
	uint8_t gso_type;     /* VNET_HDR_GSO_*: segmentation offload */
	uint16_t hdr_len;     /* GSO: Ethernet + IP + TCP header bytes */
	uint16_t gso_size;    /* GSO: payload bytes per segment */
	uint16_t csum_start;  /* NEEDS_CSUM: where the checksum's coverage starts */
	uint16_t csum_offset; /* NEEDS_CSUM: where it goes, from csum_start */
	uint16_t num_buffers; /* buffers this frame spans (MRG_RXBUF) */
} __attribute__((packed));

struct queue_state {
	struct virtqueue vq;            /* the ring */
	void *cookie[MAX_QUEUE];        /* per head: the caller's token */
	uint16_t chain_len[MAX_QUEUE];  /* per head: descriptors in its chain */
	uint32_t chain_in[MAX_QUEUE];   /* per head: bytes the device may write */
};

struct vnet_dev {
	bool present;                 /* vnet_init succeeded */
	struct virtio_dev vd;         /* the device, over whichever transport */
	struct queue_state rx, tx;    /* the two queues */
	uint8_t *rx_bufs;             /* rx_nbufs buffers of RX_BUF_SIZE: the ring's and the reserve */
	uint16_t rx_nbufs;            /* rx.vq.size, plus the reserve with lending on */
	uint16_t rx_nfree;            /* buffers in the reserve, rx_free[0..rx_nfree) */
	uint16_t rx_free[VNET_RX_BUFS_MAX]; /* the reserve: neither in the ring nor lent */
	uint8_t rx_where[VNET_RX_BUFS_MAX]; /* RX_IN_*: where each buffer is (checked on give-back) */
	bool rx_lend_on;              /* loans allowed (kernel option vnet_rx_lend, default 1) */
	bool rx_lending;              /* the frame being delivered was lent (vnet_rx_lend) */
	uint8_t mac[6];               /* station address */
	unsigned offloads;            /* VNET_OFF_* negotiated */
	bool merged;                  /* MRG_RXBUF negotiated: num_buffers counts */
	vnet_tx_done_fn tx_done;      /* told when a frame's pieces are free */
	uint16_t tx_seen_used;        /* device's tx used index at the last look */
	uint64_t tx_seen_at;          /* when it was last seen to move; 0: idle */
	bool repair;                  /* repair lost notifications (kernel option vnet_repair, default 1) */
	uint64_t tx_watchdog_ns;      /* TX_WATCHDOG_TCG_NS or TX_WATCHDOG_NS (kernel option vnet_tx_watchdog_us) */
	bool barrier_read;            /* order the last look before a park with a device read, not only a
	                               * fence (kernel option vnet_barrier=read|fence; read under TCG) */
	unsigned drop_kicks;          /* fault injection: one in this many kicks not sent (0: none) */
	unsigned kicks_decided;       /* kicks vq_kick_prepare asked for, for drop_kicks */
	unsigned drop_rx, drop_tx;    /* fault injection: one in this many frames dropped (0: none) */
	unsigned rx_counted, tx_counted; /* frames seen, for drop_rx and drop_tx */
	int tx_batch;                 /* VNET_TX_BATCH_*: which polls publish their frames together (kernel option vnet_tx_batch) */
	int tx_batch_depth;           /* vnet_tx_batch_begin()s not yet ended */
	bool tx_batching;             /* this bracket holds frames back until its end */
	bool tx_unpublished;          /* frames added in a batch and not yet published */
	bool tx_held;                 /* frames exposed with their notify decision held (vnet_tx_batch=3) */
	unsigned tx_held_polls;       /*   polls ended with it held */
	bool tx_held_timed;           /*   held with no frames waiting, until tx_held_until (a timed hold) */
	uint64_t tx_held_until;       /*   its deadline (clock_ns) */
	int64_t tx_hold_ns;           /* a timed hold's length (kernel option vnet_tx_hold_us): 0 none,
	                               * -1 the executor's spin window (the default outside TCG) */
	vnet_tx_hold_worth_fn tx_hold_worth; /* may another client ask meanwhile? (NULL: yes) */
	unsigned tx_hold_skip;        /* publishes still to decide at once before the next timed hold */
	unsigned tx_hold_backoff;     /* what tx_hold_skip is set to when a timed hold ends unjoined */
	bool rx_armed;                /* rx interrupt on and nothing was waiting (a park may follow) */
	uint64_t rx_irqs_at_arm;      /* rx_interrupts when it was turned on */
	uint64_t rx_armed_at;         /* clock_ns() then */
	struct vnet_stats st;         /* counters */
};
extern struct vnet_dev vnet_dev;

/* virtio_net.c: publish what was added to `vq` and notify the device if it
 * asked (fault injection aside); true when a notify went out. */
bool vnet_kick(struct virtqueue *vq);
/* virtio_net.c: send the notification `vq`'s state shows is owed, if any
 * (and repairs are on); counted in *repaired. */
void vnet_repair(struct virtqueue *vq, uint64_t *repaired);
/* Where a receive buffer is (vnet_dev.rx_where). */
enum { RX_IN_RESERVE, RX_IN_RING, RX_IN_STACK };
/* vnet_rx.c: offer the ring's receive buffers to the device and put the
 * rest in reserve (set-up). */
void vnet_rx_fill(void);
/* vnet_tx.c: the device has not consumed everything we published. */
bool vnet_tx_outstanding(void);
/* vnet_tx.c: with frames outstanding, when the watchdog fires (see there). */
uint64_t vnet_tx_watch(uint64_t now);
/* vnet_tx.c, a held notify (see there, "Holding a notify"): decide it if no
 * frames wait; decide it now (the CPU may park). */
void vnet_tx_hold_check(void);
void vnet_tx_hold_park(void);
/* vnet_tx.c: a timed hold's deadline, UINT64_MAX without one. */
uint64_t vnet_tx_hold_deadline(void);

#endif
