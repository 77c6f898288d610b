/*
 * virtqueue.h: split virtqueues (virtio 1.x, section 2.7): the driver side of
 * the descriptor table, available ring and used ring, with notification
 * suppression both ways (VIRTIO_F_EVENT_IDX when negotiated, flags otherwise).
 *
 * A virtqueue knows nothing of the transport: vq_kick_prepare() says whether
 * the device must be notified and the caller writes the notify register;
 * vq_kick_repair() says whether the ring's state shows a notification the
 * device is owed although vq_kick_prepare() decided none was due (a lost
 * notification, see virtqueue.c). It never trusts the device: every used
 * entry is checked before its id or length is followed. No locks: one CPU,
 * thread context only.
 */
#ifndef VIRTQUEUE_H
#define VIRTQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VRING_DESC_F_NEXT        1 /* chain continues at `next` */
#define VRING_DESC_F_WRITE       2 /* device writes this buffer */
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY   1

/* Rings as the device sees them (little-endian; x86 is too). */
struct vring_desc {
	uint64_t addr;  /* guest-physical address of the buffer */
	uint32_t len;   /* its length */
	uint16_t flags; /* VRING_DESC_F_* */
	uint16_t next;  /* next descriptor of the chain, with F_NEXT */
};

struct vring_avail {
	uint16_t flags;  /* VRING_AVAIL_F_NO_INTERRUPT (without EVENT_IDX) */
	uint16_t idx;    /* where the driver puts the next entry (free-running) */
	uint16_t ring[]; /* heads of chains; then used_event */
};

struct vring_used_elem {
	uint32_t id;  /* head of the chain the device finished */
	uint32_t len; /* bytes it wrote into the chain */
};

struct vring_used {
	uint16_t flags; /* VRING_USED_F_NO_NOTIFY (without EVENT_IDX) */
	uint16_t idx;   /* where the device puts the next entry (free-running) */
	struct vring_used_elem ring[]; /* then avail_event */
};

/* One buffer of a chain the driver offers. */
struct vq_buf {
	uint64_t addr; /* physical address (= virtual here) */
	uint32_t len;
};

struct virtqueue {
	uint16_t size;               /* entries; a power of two, at most 32768 */
	uint16_t index;              /* queue number on the device (for the caller) */
	bool event_idx;              /* VIRTIO_F_EVENT_IDX negotiated */
	bool waits_when_done;        /* the device waits for a notify only once it has used
	                              * all it saw (transmit); else (receive) also when what
	                              * is posted is too little for its next frame */
	bool notify_32;              /* the doorbell takes a 32-bit store (MMIO), else 16 (PCI) */
	struct vring_desc *desc;     /* descriptor table, size entries */
	struct vring_avail *avail;   /* available ring */
	struct vring_used *used;     /* used ring */

	uint16_t free_head;          /* first descriptor of the free list */
	uint16_t num_free;           /* descriptors on it */
	uint16_t avail_idx;          /* driver's copy of avail->idx */
	uint16_t kicked_avail_idx;   /* avail_idx when we last decided about a kick
	                              * (what avail->idx shows the device) */
	uint16_t notified_avail_idx; /* avail->idx when the device was last notified;
	                              * kept at most `size` behind kicked_avail_idx
	                              * (an older one means the same: see virtqueue.c) */
	uint16_t last_used;          /* next used entry to read */

	/* Per head descriptor: what vq_add() was given, and the chain's shape,
	 * kept on our side so a lying device cannot make us free the wrong
	 * descriptors or accept a length beyond the buffers. */
	void **cookie;               /* NULL: not an in-flight head */
	uint16_t *chain_len;         /* descriptors in the chain */
	uint32_t *chain_in_bytes;    /* bytes the device may write */

	volatile void *notify;       /* the transport's doorbell for this queue */
	uint64_t bad_used;           /* used entries rejected (bad id or length) */
	uint64_t kicks, kicks_suppressed; /* vq_kick_prepare's decisions */
	uint64_t kicks_repaired;     /* notifications vq_kick_repair found owed */
};

/* Bytes of ring memory for `size` entries, and how it is laid out:
 * the descriptor table and available ring, then the used ring on its own
 * page (the device writes it; keep it off the lines the driver writes). */
size_t vq_ring_bytes(uint16_t size);
/* Set up over zeroed `ring` memory (vq_ring_bytes, page aligned) and per-entry
 * arrays the caller allocated (size entries each). */
void vq_init(struct virtqueue *vq, uint16_t index, uint16_t size, bool event_idx, void *ring,
	     void **cookie, uint16_t *chain_len, uint32_t *chain_in_bytes);

/* Offer a chain: `nout` device-readable buffers, then `nin` device-writable.
 * Returns 0, or -1 when fewer than nout + nin descriptors are free. */
int vq_add(struct virtqueue *vq, const struct vq_buf *bufs, int nout, int nin, void *cookie);
/* Publish what vq_add() queued and say whether the device wants a notify:
 * decided over the whole batch since the last call (old and new avail idx). */
bool vq_kick_prepare(struct virtqueue *vq);
/* Make what vq_add() queued visible to the device without deciding about a
 * notify: a device that is working takes it; the next vq_kick_prepare()
 * decides over it with the rest (its range starts at the last decision). */
void vq_expose(struct virtqueue *vq);

/* The device's state shows a notification it is owed: it asked (avail_event
 * with EVENT_IDX, its used flags without) to be notified of an entry we have
 * published since the last notify, and (waits_when_done) has finished
 * everything before it. Loads only; safe to call at every poll. */
bool vq_kick_owed(const struct virtqueue *vq);
/* When vq_kick_owed(), record the notify as sent (counted in kicks_repaired)
 * and return true: the caller then notifies. */
bool vq_kick_repair(struct virtqueue *vq);
/* The device asks to be notified of an entry published since the last notify
 * (vq_kick_owed without "has finished everything before it"): what tells a
 * lost notification from a late device when a watchdog fires. */
bool vq_wish_unnotified(const struct virtqueue *vq);
/* The caller notified the device outside vq_kick_prepare (a watchdog). */
void vq_kick_forced(struct virtqueue *vq);
/* The caller did not send the notify vq_kick_prepare asked for (fault
 * injection); `notified_before` is notified_avail_idx from before that call. */
void vq_kick_dropped(struct virtqueue *vq, uint16_t notified_before);

/* True when the device has returned entries we have not read. Inline: the
 * spin (kernel/executor.c) asks it on every turn, through vnet_rx_pending,
 * and an instruction counter that knows the spin by its functions' symbols
 * (tools/plugin/insnregions.py) would count a call out of them as work. */
static inline bool vq_has_used(const struct virtqueue *vq)
{
	return *(volatile const uint16_t *)&vq->used->idx != vq->last_used;
}
/* How many used entries the device has returned that we have not read (a
 * lying device can make this up to 65535; callers only compare it). */
unsigned vq_used_waiting(const struct virtqueue *vq);
/*
 * Take the next used entry. Returns 1 with *cookie and *len set, 0 when none
 * is left. An entry with an id that is not an in-flight head is counted in
 * bad_used and skipped; one whose length exceeds its chain's writable bytes is
 * counted, its chain freed, and returned with *len = VQ_BAD_LEN so the caller
 * can recycle the buffer without reading it.
 */
#define VQ_BAD_LEN UINT32_MAX
int vq_get_used(struct virtqueue *vq, void **cookie, uint32_t *len);

/* Interrupt suppression, device -> driver. */
void vq_disable_cb(struct virtqueue *vq);
/* Re-enable; returns true when entries arrived meanwhile (check again). */
bool vq_enable_cb(struct virtqueue *vq);

uint16_t vq_num_free(const struct virtqueue *vq);
/* The head descriptor the next vq_add() will use (the chain's name while it
 * is in flight: callers keep per-chain data in a slot of that index). */
static inline uint16_t vq_next_head(const struct virtqueue *vq) { return vq->free_head; }

#endif
