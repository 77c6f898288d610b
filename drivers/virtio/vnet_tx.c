/*
 * vnet_tx.c: the virtio-net transmit path (see virtio.h, vnet_internal.h).
 *
 * A frame is a chain of a 12-byte virtio-net header and the caller's pieces,
 * copied nowhere; the caller learns through its tx-done callback when the
 * device is finished with them. A frame without offloads shares one
 * all-zero header; one with a checksum to complete or segments to cut gets
 * its own, in a slot of tx_hdr named by the chain's head descriptor (unique
 * while the chain is in flight). Sent frames are reclaimed by polling; a
 * watchdog notifies a ring that stands still (see virtio_net.c,
 * "notifications").
 */
#include <errno.h>
#include "kernel/kernel.h"
#include "vnet_internal.h"

static const struct virtio_net_hdr tx_zero_header; /* frames without offloads */
static struct virtio_net_hdr tx_hdr[MAX_QUEUE];     /* per head descriptor: frames with */

void vnet_set_tx_done(vnet_tx_done_fn done) { vnet_dev.tx_done = done; }
void vnet_set_tx_hold_worth(vnet_tx_hold_worth_fn worth) { vnet_dev.tx_hold_worth = worth; }

bool vnet_tx_outstanding(void)
{
	struct virtqueue *vq = &vnet_dev.tx.vq;
	/* What the device can see: decided about, or exposed under a hold. */
	return *(volatile uint16_t *)&vq->used->idx != *(volatile uint16_t *)&vq->avail->idx;
}

bool vnet_tx_idle(void)
{
	return !vnet_dev.present || (!vnet_tx_held() && !vnet_tx_outstanding());
}

/* With frames outstanding: when the watchdog fires, tx_watchdog_ns after the
 * device was last seen to move (its clock starts at the first look that
 * sees it moved, or sees frames outstanding after none were). */
uint64_t vnet_tx_watch(uint64_t now)
{
	uint16_t used = *(volatile uint16_t *)&vnet_dev.tx.vq.used->idx;
	if (vnet_dev.tx_seen_at == 0 || used != vnet_dev.tx_seen_used) {
		vnet_dev.tx_seen_used = used;
		vnet_dev.tx_seen_at = now;
	}
	return vnet_dev.tx_seen_at + vnet_dev.tx_watchdog_ns;
}

/* The backstop (see virtio_net.c, "notifications"): a ring that stood still
 * for tx_watchdog_ns with frames outstanding is notified again; a spurious
 * notify costs the device one look. */
static void tx_watchdog(void)
{
	struct virtqueue *vq = &vnet_dev.tx.vq;
	if (!vnet_tx_outstanding()) {
		vnet_dev.tx_seen_at = 0; /* the device has everything we published */
		return;
	}
	uint64_t now = clock_ns();
	if (now < vnet_tx_watch(now))
		return;
	if (vq_wish_unnotified(vq))
		vnet_dev.st.tx_watchdog_lost++;
	else
		vnet_dev.st.tx_watchdog_late++;
	vq_kick_forced(vq);
	virtio_notify(vq);
	vnet_dev.st.tx_watchdog_kicks++;
	vnet_dev.tx_seen_at = now;
}

int vnet_tx_reclaim(void)
{
	void *cookie;
	uint32_t len;
	int n = 0;
	if (!vnet_dev.present)
		return 0;
	vnet_tx_hold_check();
	vnet_repair(&vnet_dev.tx.vq, &vnet_dev.st.tx_kicks_repaired);
	tx_watchdog();
	while (vq_get_used(&vnet_dev.tx.vq, &cookie, &len)) {
		/* A bad length on a transmit chain changes nothing: we never read it. */
		if (vnet_dev.tx_done)
			vnet_dev.tx_done(cookie);
		n++;
	}
	vnet_dev.st.tx_drop_bad_used = vnet_dev.tx.vq.bad_used;
	return n;
}

bool vnet_tx_room(int nseg)
{
	if (!vnet_dev.present)
		return false;
	return vq_num_free(&vnet_dev.tx.vq) >= nseg + 1 || vq_has_used(&vnet_dev.tx.vq);
}

int vnet_tx_max_segs(void)
{
	int ring = vnet_dev.present ? vnet_dev.tx.vq.size - 1 : VNET_MAX_SEGS;
	return ring < VNET_MAX_SEGS ? ring : VNET_MAX_SEGS;
}

/* Whether `off` asks only for what was negotiated, inside a frame of
 * `total` bytes. */
static bool offload_fits(const struct vnet_tx_offload *off, size_t total)
{
	if (!(vnet_dev.offloads & VNET_OFF_TX_CSUM) || off->csum_start < ETH_HLEN ||
	    (size_t)off->csum_start + off->csum_offset + 2 > total)
		return false;
	if (!off->gso_size)
		return total <= MAX_FRAME;
	return (vnet_dev.offloads & VNET_OFF_TX_TSO4) && off->hdr_len > off->csum_start && off->hdr_len < total;
}

/* The header for a frame with offloads, in the slot of the chain's head. */
static const struct virtio_net_hdr *offload_header(const struct vnet_tx_offload *off, size_t total)
{
	struct virtio_net_hdr *h = &tx_hdr[vq_next_head(&vnet_dev.tx.vq)];
	*h = (struct virtio_net_hdr){ .flags = VNET_HDR_F_NEEDS_CSUM, .csum_start = off->csum_start,
				      .csum_offset = off->csum_offset };
	vnet_dev.st.tx_csum++;
	if (off->gso_size) {
		h->gso_type = VNET_HDR_GSO_TCPV4;
		h->gso_size = off->gso_size;
		h->hdr_len = off->hdr_len;
		vnet_dev.st.tx_gso++;
		vnet_dev.st.tx_gso_segments += (total - off->hdr_len + off->gso_size - 1) / off->gso_size;
	}
	return h;
}

/* Publish what was added and decide, over everything since the last
 * decision (held frames included), whether the device wants a notify. */
static void decide(void)
{
	vnet_dev.tx_held = false;
	vnet_dev.tx_held_timed = false;
	if (vnet_kick(&vnet_dev.tx.vq))
		vnet_dev.st.tx_kicks++;
	trace_mark(TP_KICK);
}

/*
 * Holding a notify (vnet_tx_batch=3). Under load the device's transmit side
 * runs in QEMU's I/O thread, on the core the load generator shares; each
 * notify that finds it idle wakes it for the frames of one poll, and under
 * TCG the notify's MMIO write waits for QEMU's big lock, which that thread
 * holds while it works. A reply made while the device has already handed us
 * the next frames needs no notify of its own: the poll that takes them makes
 * replies too, and one notify can carry all of them. So a publish that finds
 * received frames waiting exposes its frames (a device still working takes
 * them unasked) and holds the notify decision; the first publish, poll start
 * or poll end that finds none waiting makes it, over everything held, and so
 * does the end of the TX_HOLD_POLLS-th poll held, and any publish or settle
 * point that finds half the ring or more taken (a flood must not fill the
 * ring behind a device nobody told). This hold never waits for time: a lone
 * request's reply, with nothing behind it, is decided at once.
 * Nothing held outlives a park: turning the receive interrupt on decides
 * first (vnet_rx_irq_enable).
 *
 * A timed hold (kernel option vnet_tx_hold_us; on by default outside TCG).
 * Under KVM a notify that finds the device idle is an exit, and with
 * several clients each asking in turn the guest answers each request alone:
 * the next one arrives after the device has gone idle again, so every reply
 * pays its own notify. A timed hold makes the trade interrupt moderation
 * makes: a poll's publish that finds nothing waiting and would decide holds
 * the decision for up to the hold's length (by default the executor's spin
 * window, the time the CPU waits for the next frame anyway), and the reply a
 * later poll publishes meanwhile joins it: one notify for both. It ends at
 * that joining publish (or, if received frames wait then, goes on as the
 * hold above), at its deadline (the network is due then), or before a
 * park. It pays only where another client may ask while this one waits for
 * its reply: with one connection open (one client asking in turn, or
 * opening a connection per request) the next request comes only after this
 * reply, and every hold would last its full length for nothing. So a hold
 * is tried only while the network layer says two or more connections are
 * open (vnet_set_tx_hold_worth); and each hold nothing joined (a client
 * that went quiet, an idle connection beside the busy one) makes the next
 * publishes decide at once, 1, 2, 4 ... up to TX_HOLD_BACKOFF_MAX of them,
 * before another is tried; one that something joined ends the backing off.
 */
#define TX_HOLD_POLLS 8
#define TX_HOLD_BACKOFF_MAX 1024

/* Whether a hold must end now whatever waits: its polls are spent, or the
 * ring is half taken. */
static bool hold_spent(void)
{
	return (vnet_dev.tx_held && vnet_dev.tx_held_polls >= TX_HOLD_POLLS) ||
	       vq_num_free(&vnet_dev.tx.vq) < vnet_dev.tx.vq.size / 2;
}

/* The length of the next timed hold; 0 for none (off, or backing off). */
static uint64_t timed_hold_ns(void)
{
	if (vnet_dev.tx_hold_ns == 0 || vnet_dev.tx_batch_depth == 0)
		return 0; /* off, or a frame sent outside a poll: at once */
	if (vnet_dev.tx_hold_worth && !vnet_dev.tx_hold_worth())
		return 0; /* one client: nobody else will ask meanwhile */
	if (vnet_dev.tx_hold_skip > 0) {
		vnet_dev.tx_hold_skip--;
		return 0;
	}
	return vnet_dev.tx_hold_ns > 0 ? (uint64_t)vnet_dev.tx_hold_ns : executor_spin_window_ns();
}

/* A timed hold ends: with a joining publish (paid), or without one. */
static void timed_hold_end(bool joined)
{
	if (joined) {
		vnet_dev.st.tx_timed_holds_joined++;
		vnet_dev.tx_hold_backoff = 0;
		return;
	}
	vnet_dev.tx_hold_skip = vnet_dev.tx_hold_backoff;
	vnet_dev.tx_hold_backoff = vnet_dev.tx_hold_backoff == 0 ? 1
				 : vnet_dev.tx_hold_backoff * 2 < TX_HOLD_BACKOFF_MAX ? vnet_dev.tx_hold_backoff * 2
				 : TX_HOLD_BACKOFF_MAX;
}

/* Whether this publish holds its notify decision; exposes the frames if so. */
static bool hold(void)
{
	bool waiting = vq_has_used(&vnet_dev.rx.vq);
	if (hold_spent())
		return false; /* decide, over everything held */
	if (vnet_dev.tx_held && vnet_dev.tx_held_timed) {
		if (vnet_dev.tx_batch_depth == 0)
			return false; /* sent outside a poll: decided at once, with what is held */
		if (vnet_dev.tx_held_polls > 0) {
			timed_hold_end(true); /* a later poll's reply: one notify for both, */
			if (!waiting)
				return false;
			vnet_dev.tx_held_timed = false; /* or, with frames waiting, a hold as above */
			vnet_dev.tx_held_polls = 0;
			vnet_dev.st.tx_holds++;
		}
	} else if (vnet_dev.tx_held) {
		if (!waiting)
			return false;
	} else if (waiting) {
		vnet_dev.tx_held = true;
		vnet_dev.tx_held_polls = 0;
		vnet_dev.st.tx_holds++;
	} else {
		uint64_t ns = timed_hold_ns();
		if (ns == 0)
			return false;
		vnet_dev.tx_held = true;
		vnet_dev.tx_held_timed = true;
		vnet_dev.tx_held_until = clock_ns() + ns;
		vnet_dev.tx_held_polls = 0;
		vnet_dev.st.tx_timed_holds++;
	}
	vq_expose(&vnet_dev.tx.vq);
	vnet_dev.st.tx_held_publishes++;
	return true;
}

/* Make the decision a hold owes once no frames wait (or, at a poll's end,
 * its polls are spent; a timed one, once its deadline has come), or at once
 * when the CPU may park. */
static void hold_settle(bool poll_end, bool parking)
{
	if (!vnet_dev.tx_held)
		return;
	vnet_dev.tx_held_polls += poll_end;
	if (vnet_dev.tx_held_timed) {
		bool expired = clock_ns() >= vnet_dev.tx_held_until;
		if (!parking && !expired && !hold_spent())
			return;
		vnet_dev.st.tx_timed_holds_expired += expired && !parking;
		timed_hold_end(false);
	} else if (!parking && vq_has_used(&vnet_dev.rx.vq) && !hold_spent()) {
		return;
	}
	if (parking)
		vnet_dev.st.tx_holds_parked++;
	decide();
}

/* A timed hold's deadline, UINT64_MAX without one. */
uint64_t vnet_tx_hold_deadline(void)
{
	return vnet_dev.tx_held && vnet_dev.tx_held_timed ? vnet_dev.tx_held_until : UINT64_MAX;
}

void vnet_tx_hold_check(void) { hold_settle(false, false); }
void vnet_tx_hold_park(void) { hold_settle(false, true); }
bool vnet_tx_held(void) { return vnet_dev.tx_held; }

static void publish(void);

int vnet_tx(const struct vnet_seg *seg, int nseg, void *cookie, const struct vnet_tx_offload *off)
{
	struct vq_buf b[VNET_MAX_SEGS + 1];
	size_t total = 0;
	if (!vnet_dev.present)
		return -ENODEV;
	if (nseg < 1 || nseg > vnet_tx_max_segs()) { /* more would never find room */
		vnet_dev.st.tx_too_many_segs++;
		return -EINVAL;
	}
	for (int i = 0; i < nseg; i++) {
		b[i + 1] = (struct vq_buf){ (uint64_t)seg[i].base, (uint32_t)seg[i].len };
		total += seg[i].len;
	}
	if (total > (off && off->gso_size ? VNET_GSO_FRAME_MAX : MAX_FRAME) || total < ETH_HLEN) {
		vnet_dev.st.tx_bad_len++;
		return -EINVAL;
	}
	if (off && !offload_fits(off, total)) {
		vnet_dev.st.tx_bad_offload++;
		return -EINVAL;
	}
	if (vq_num_free(&vnet_dev.tx.vq) < nseg + 1) {
		vnet_tx_reclaim();
		if (vq_num_free(&vnet_dev.tx.vq) < nseg + 1) {
			vnet_dev.st.tx_ring_full++;
			return -ENOBUFS;
		}
	}
	if (vnet_dev.drop_tx && ++vnet_dev.tx_counted % vnet_dev.drop_tx == 0) {
		vnet_dev.st.tx_drop_injected++; /* as if the wire lost it */
		if (vnet_dev.tx_done)
			vnet_dev.tx_done(cookie);
		return 0;
	}
	const struct virtio_net_hdr *h = off ? offload_header(off, total) : &tx_zero_header;
	b[0] = (struct vq_buf){ (uint64_t)h, sizeof *h };
	vq_add(&vnet_dev.tx.vq, b, nseg + 1, 0, cookie);
	vnet_dev.st.tx_frames++;
	vnet_dev.st.tx_bytes += total;
	KASSERT(vnet_dev.tx_batching || !vnet_dev.tx_unpublished); /* frames wait only inside a batch */
	if (vnet_dev.tx_batching) {
		vnet_dev.tx_unpublished = true; /* published, with one notify decision, when the batch ends */
		vnet_dev.st.tx_batched_frames++;
		return 0;
	}
	publish();
	return 0;
}

/* Publish what was added, deciding about a notify unless a hold takes it. */
static void publish(void)
{
	vnet_dev.tx_unpublished = false;
	if (vnet_dev.tx_batch == VNET_TX_BATCH_HOLD && hold())
		return;
	decide();
}

/*
 * Batching a poll's frames. The device turns its notifications off while it
 * works and on again when its queue is empty, so a reply, an ACK and a FIN
 * that one poll sends may each ask for a notify of their own: each an MMIO
 * write, under TCG taken with QEMU's big lock, and each a wake-up of QEMU's
 * I/O thread on the core the load generator shares. The network layer
 * brackets each poll (the device's frames into lwIP, lwIP's timers, the
 * egress pass) with these; a bracket that batches holds the frames added
 * until its outermost end and publishes them with one notify decision.
 * Nothing added outside a bracket waits: a SYN from connect(), a datagram,
 * are published at once.
 *
 * Which brackets batch (kernel option vnet_tx_batch; what each mode cost
 * and saved is in docs/design/virtio-net.md):
 *   0  none: every frame is published as it is added.
 *   1  all: every bracket holds its frames; a poll with one frame to
 *      answer then waits for the bracket's end to publish it, a cost a lone
 *      request pays for nothing.
 *   2  bursts: only a poll that begins with two or more frames
 *      waiting on the device, or two or more sockets listed for egress, holds
 *      its frames; a lone request's reply leaves as it is made, as with 0.
 *   3  hold (the default): as 2, and a publish made while received frames
 *      wait holds its notify decision (see "Holding a notify" above).
 */
void vnet_tx_batch_begin(bool burst)
{
	if (vnet_dev.tx_batch == VNET_TX_BATCH_NONE)
		return;
	if (vnet_dev.tx_batch == VNET_TX_BATCH_ALL || burst)
		vnet_dev.tx_batching = true; /* an inner bracket that sees a burst batches from there on */
	vnet_dev.tx_batch_depth++;
}

void vnet_tx_batch_end(void)
{
	if (vnet_dev.tx_batch == VNET_TX_BATCH_NONE || --vnet_dev.tx_batch_depth > 0)
		return;
	KASSERT(vnet_dev.tx_batch_depth == 0);
	vnet_dev.tx_batching = false;
	if (vnet_dev.tx_unpublished) { /* set only while batching (vnet_tx) */
		vnet_dev.st.tx_batches++;
		publish();
	}
	hold_settle(true, false);
}
