/*
 * virtqueue.c: split virtqueues (see virtqueue.h).
 *
 * Layout of the ring memory (one page-aligned block):
 *   desc[size] | avail { flags, idx, ring[size], used_event }
 *   (next page) used { flags, idx, ring[size], avail_event }
 *
 * Ordering: x86 keeps stores in order and loads in order, so publishing a
 * descriptor before the index that exposes it needs only a compiler barrier;
 * the two places where a store must be seen before a later load (avail idx
 * before reading avail_event, used_event before re-reading used idx) take a
 * full fence.
 *
 * Lost notifications. Each side's handshake is "store my index, fence, load
 * the other's wish": the driver stores avail idx and reads avail_event; the
 * device, going back to waiting, stores avail_event and reads avail idx
 * again. With both fences working, at least one of the two sees the other's
 * store. Where a fence does nothing (QEMU before 8.1 under TCG with one
 * possible CPU emits no host barrier for it; see virtio_net.c), both loads
 * can pass both stores: the driver reads an old avail_event and decides no
 * notify is due, the device reads the old avail idx and waits for a notify
 * that never comes. Afterwards the state says so, and stays so: avail_event
 * names an entry we published after our last notify (notified_avail_idx),
 * and the device's used index has reached it (it has finished everything
 * before it). vq_kick_owed() tests exactly that. Normal operation never shows
 * it for long: a device that is working has its notifications off and
 * avail_event frozen at the entry our last notify was for, or behind its used
 * index; a device that went back to waiting when our publish was visible to
 * it either took the entries or was notified for them. A repair sets
 * notified_avail_idx to what is published, so the same wish is repaired once.
 * A receive ring's device may also wait with buffers it has not used, when
 * they are too few for its next frame (QEMU with merged buffers writes
 * avail_event = the avail idx it saw): there the used index is not asked for
 * (waits_when_done false), and the transmit ring keeps the test, which cuts
 * the moments where a device still taking entries shows the same wish.
 *
 * notified_avail_idx is kept within `size` entries of kicked_avail_idx: the
 * device holds at most `size` chains, so its used index, and any entry it can
 * wait for, lies in that window, and a last notify further back means the
 * same as one at its edge; and 16-bit differences stay meaningful however
 * long the device goes without a notify (a receive ring that never runs dry).
 */
#include <stddef.h>
#include "kernel/kernel.h"
#include "virtqueue.h"

#define barrier() __asm__ volatile("" ::: "memory")
#define full_fence() __asm__ volatile("mfence" ::: "memory")

static inline uint16_t *used_event(struct virtqueue *vq) { return &vq->avail->ring[vq->size]; }
/* The device writes it; we only read it. */
static inline uint16_t read_avail_event(const struct virtqueue *vq)
{
	const char *after_ring = (const char *)vq->used->ring + sizeof(struct vring_used_elem) * vq->size;
	return *(volatile const uint16_t *)after_ring;
}
static inline uint16_t read_used_idx(const struct virtqueue *vq)
{
	return *(volatile const uint16_t *)&vq->used->idx;
}

static size_t align_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

static size_t used_offset(uint16_t size)
{
	return align_up(sizeof(struct vring_desc) * size + 6 + 2 * (size_t)size, 4096);
}

size_t vq_ring_bytes(uint16_t size)
{
	return used_offset(size) + align_up(6 + sizeof(struct vring_used_elem) * size, 4096);
}

void vq_init(struct virtqueue *vq, uint16_t index, uint16_t size, bool event_idx, void *ring,
	     void **cookie, uint16_t *chain_len, uint32_t *chain_in_bytes)
{
	KASSERT(size && !(size & (size - 1)) && size <= 32768);
	*vq = (struct virtqueue){
		.size = size, .index = index, .event_idx = event_idx,
		.desc = ring,
		.avail = (struct vring_avail *)((char *)ring + sizeof(struct vring_desc) * size),
		.used = (struct vring_used *)((char *)ring + used_offset(size)),
		.free_head = 0, .num_free = size,
		.cookie = cookie, .chain_len = chain_len, .chain_in_bytes = chain_in_bytes,
	};
	for (uint16_t i = 0; i < size; i++) {
		vq->desc[i].next = (uint16_t)(i + 1);
		cookie[i] = NULL;
	}
}

uint16_t vq_num_free(const struct virtqueue *vq) { return vq->num_free; }

int vq_add(struct virtqueue *vq, const struct vq_buf *bufs, int nout, int nin, void *cookie)
{
	int n = nout + nin;
	KCHECK(n > 0 && cookie != NULL);
	if (n > vq->num_free)
		return -1;
	uint16_t head = vq->free_head, i = head, last = head;
	uint32_t in_bytes = 0;
	for (int k = 0; k < n; k++) {
		struct vring_desc *d = &vq->desc[i];
		d->addr = bufs[k].addr;
		d->len = bufs[k].len;
		d->flags = (uint16_t)((k < nout ? 0 : VRING_DESC_F_WRITE) | (k + 1 < n ? VRING_DESC_F_NEXT : 0));
		if (k >= nout)
			in_bytes += bufs[k].len;
		last = i;
		i = d->next;
	}
	vq->free_head = vq->desc[last].next; /* the free list continues after the chain */
	vq->num_free = (uint16_t)(vq->num_free - n);
	vq->cookie[head] = cookie;
	vq->chain_len[head] = (uint16_t)n;
	vq->chain_in_bytes[head] = in_bytes;

	vq->avail->ring[vq->avail_idx & (vq->size - 1)] = head;
	vq->avail_idx++;
	return 0;
}

static inline uint16_t read_used_flags(const struct virtqueue *vq)
{
	return *(volatile const uint16_t *)&vq->used->flags;
}

bool vq_kick_prepare(struct virtqueue *vq)
{
	uint16_t old = vq->kicked_avail_idx, new = vq->avail_idx;
	barrier(); /* descriptors and ring entries before the index */
	*(volatile uint16_t *)&vq->avail->idx = new;
	vq->kicked_avail_idx = new;
	full_fence(); /* the index is visible before we read the device's wish */
	bool kick;
	if (vq->event_idx) {
		uint16_t event = read_avail_event(vq);
		/* Kick when the device's event index lies in [old, new). */
		kick = (uint16_t)(new - event - 1) < (uint16_t)(new - old);
	} else {
		kick = !(read_used_flags(vq) & VRING_USED_F_NO_NOTIFY) && new != old;
	}
	if (kick) {
		vq->kicks++;
		vq->notified_avail_idx = new;
	} else {
		vq->kicks_suppressed++;
		/* Both parts are at most `size` (a batch is at most the ring), so
		 * the sum cannot wrap in 32 bits. */
		uint32_t unnotified = (uint32_t)(uint16_t)(old - vq->notified_avail_idx) + (uint16_t)(new - old);
		if (unnotified > vq->size)
			vq->notified_avail_idx = (uint16_t)(new - vq->size);
	}
	KASSERT((uint16_t)(vq->kicked_avail_idx - vq->notified_avail_idx) <= vq->size);
	return kick;
}

void vq_expose(struct virtqueue *vq)
{
	barrier(); /* descriptors and ring entries before the index */
	*(volatile uint16_t *)&vq->avail->idx = vq->avail_idx;
}

bool vq_wish_unnotified(const struct virtqueue *vq)
{
	uint16_t published = vq->kicked_avail_idx;
	uint16_t unnotified = (uint16_t)(published - vq->notified_avail_idx); /* at most size */
	if (!vq->event_idx)
		return unnotified != 0 && !(read_used_flags(vq) & VRING_USED_F_NO_NOTIFY);
	/* The wished-for entry is published (behind > 0) and lies among those
	 * published since the last notify. */
	uint16_t behind = (uint16_t)(published - read_avail_event(vq));
	return behind != 0 && behind <= unnotified;
}

bool vq_kick_owed(const struct virtqueue *vq)
{
	if (!vq_wish_unnotified(vq))
		return false;
	uint16_t used = read_used_idx(vq);
	if (vq->event_idx) /* done up to the entry it waits for, where that is how it waits */
		return !vq->waits_when_done || used == read_avail_event(vq);
	/* Without an event index the device does not say which entry; it waits
	 * with work outstanding. */
	return used != vq->kicked_avail_idx;
}

bool vq_kick_repair(struct virtqueue *vq)
{
	if (!vq_kick_owed(vq))
		return false;
	vq->notified_avail_idx = vq->kicked_avail_idx;
	vq->kicks_repaired++;
	return true;
}

void vq_kick_forced(struct virtqueue *vq)
{
	vq->notified_avail_idx = vq->kicked_avail_idx;
}

void vq_kick_dropped(struct virtqueue *vq, uint16_t notified_before)
{
	vq->notified_avail_idx = notified_before;
	if ((uint16_t)(vq->kicked_avail_idx - notified_before) > vq->size)
		vq->notified_avail_idx = (uint16_t)(vq->kicked_avail_idx - vq->size);
}

unsigned vq_used_waiting(const struct virtqueue *vq)
{
	return (uint16_t)(read_used_idx(vq) - vq->last_used);
}

/* Return a chain to the free list; its length is ours, not the device's. */
static void free_chain(struct virtqueue *vq, uint16_t head)
{
	uint16_t i = head;
	for (int k = 1; k < vq->chain_len[head]; k++)
		i = vq->desc[i].next;
	vq->desc[i].next = vq->free_head;
	vq->free_head = head;
	vq->num_free = (uint16_t)(vq->num_free + vq->chain_len[head]);
	vq->cookie[head] = NULL;
	KCHECK(vq->num_free <= vq->size);
}

int vq_get_used(struct virtqueue *vq, void **cookie, uint32_t *len)
{
	for (;;) {
		uint16_t used_idx = read_used_idx(vq);
		if (used_idx == vq->last_used)
			return 0;
		/* A device claiming more entries than the ring holds is lying about
		 * its index: take what we can check, one entry at a time. */
		barrier(); /* the entry after the index (loads stay ordered on x86) */
		struct vring_used_elem e = vq->used->ring[vq->last_used & (vq->size - 1)];
		vq->last_used++;
		if (e.id >= vq->size || vq->cookie[e.id] == NULL) {
			vq->bad_used++;
			continue;
		}
		*cookie = vq->cookie[e.id];
		if (e.len > vq->chain_in_bytes[e.id]) {
			vq->bad_used++;
			*len = VQ_BAD_LEN;
		} else {
			*len = e.len;
		}
		free_chain(vq, (uint16_t)e.id);
		return 1;
	}
}

void vq_disable_cb(struct virtqueue *vq)
{
	if (vq->event_idx)
		*used_event(vq) = (uint16_t)(vq->last_used - 1); /* behind us: never reached */
	else
		vq->avail->flags |= VRING_AVAIL_F_NO_INTERRUPT;
}

bool vq_enable_cb(struct virtqueue *vq)
{
	if (vq->event_idx)
		*(volatile uint16_t *)used_event(vq) = vq->last_used; /* interrupt on the next one */
	else
		*(volatile uint16_t *)&vq->avail->flags &= (uint16_t)~VRING_AVAIL_F_NO_INTERRUPT;
	full_fence(); /* our wish is visible before we look at the index again */
	return vq_has_used(vq);
}
