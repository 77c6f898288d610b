/*
 * virtio_net.c: the virtio-net device (spec section 5.1) behind virtio.h:
 * finding and starting it, the features and offloads negotiated, its
 * interrupts, notifications both ways (lost ones included), and the
 * counters. The receive path is vnet_rx.c, the transmit path vnet_tx.c;
 * vnet_internal.h holds what they share.
 *
 * Offloads, taken when the device offers them (tap does; user
 * networking offers none) unless kernel option vnet_offload says otherwise:
 * CSUM (we leave TCP/UDP checksums partial), GUEST_CSUM (the device says a
 * received checksum is good, or was never computed), HOST_TSO4 (it cuts our
 * TCPv4 frames of up to 64 KiB into segments), GUEST_TSO4 (it may hand us
 * such frames, in several buffers: MRG_RXBUF). Each TSO needs its checksum
 * offload (5.1.3.1); GUEST_TSO4 needs MRG_RXBUF too, since our buffers are 2
 * KiB. Interrupts: on PCI MSI-X, one vector per queue and one for
 * configuration changes; on MMIO the window's one line, whose handler
 * (virtio_dev.c) calls the receive or configuration handler as its status
 * says. The handlers only set vnet_wake. The transport is virtio_dev.h's:
 * nothing here knows which.
 */
#include <errno.h>
#include "kernel/kernel.h"
#include "vnet_internal.h"

#define VIRTIO_NET_S_LINK_UP 1
#define VIRTIO_NET_CFG_STATUS 6 /* offset of the status field (after the MAC) */
/* A frame's interrupt wakes a parked CPU within microseconds: a wait with the
 * receive interrupt on that lasted this long and ends with frames waiting
 * and no interrupt was not woken by them (rx lost interrupts), but for a
 * frame that came just as the wait ended at its deadline. Shorter ones could
 * be an interrupt still on its way. */
#define LOST_IRQ_NS 1000000

struct vnet_dev vnet_dev;
volatile bool vnet_wake;

/* ---- interrupts ------------------------------------------------------------ */

static void rx_interrupt(void *arg)
{
	(void)arg;
	vnet_dev.st.rx_interrupts++;
	vnet_wake = true;
}

static void tx_interrupt(void *arg)
{
	(void)arg;
	vnet_dev.st.tx_interrupts++;
	vnet_wake = true;
}

static void config_interrupt(void *arg)
{
	(void)arg;
	vnet_dev.st.config_interrupts++;
	vnet_wake = true;
}

/* ---- notifications ------------------------------------------------------------ */

/*
 * Lost notifications, and what is done about them.
 *
 * Before 8.1, QEMU's TCG emits no host barrier for a guest fence when the
 * machine has a single possible CPU (tcg_gen_mb emits one only under
 * CF_PARALLEL, set only when max_cpus > 1; upstream commit
 * c914d46d0a645e7c633292146f4e38c945d4f847 fixed it, in 8.1.0, not in
 * Debian 12's 7.2). The vCPU thread and QEMU's I/O thread (virtio-net's
 * transmit bottom half and its receive path) still run at once on two host
 * cores, so the "store my index, fence, load the other side's event index"
 * handshake can lose a notification either way (virtqueue.c says how, and
 * what the rings look like afterwards). The transmit watchdog's kicks under
 * load are late notifies, not lost ones (docs/known-issues.md); a notification really
 * lost (vnet_drop_kicks) leaves the state vq_kick_owed looks for, and is
 * repaired at once (test 15).
 *
 * What the driver does about it, on both rings:
 * - A notification the device's state shows it is owed (vq_kick_owed) is
 *   sent at each poll and before the CPU parks, and counted (lost kicks
 *   repaired, per ring). A receive ring has no other way out: a device that
 *   missed the refill's notify while it had no buffers waits for ever, as
 *   no later refill's batch holds the entry it waits for.
 * - The transmit watchdog stays, as a backstop for what the state does not
 *   show: a ring that has not moved for the watchdog's time (2 ms under TCG,
 *   50 ms elsewhere: vnet_internal.h) with frames
 *   outstanding is notified again, counted "lost" when the device was then
 *   waiting for an entry published since our last notify, "late" when it had
 *   been notified of everything it waits for (a slow device: QEMU's I/O
 *   thread not scheduled; the notify changes nothing). The CPU parks no
 *   longer than the watchdog's deadline while frames are outstanding
 *   (vnet_next_deadline_ns); before, only lwIP's next timer (250 ms) woke it.
 * - Interrupts: before parking, the receive interrupt is turned on
 *   (used_event) and the used ring read again; the same race can make the
 *   device skip the interrupt while we miss its entry. Nothing then wakes
 *   the CPU before its deadline, which at idle is lwIP's next timer (up to a
 *   second), and a short bound on every park would cost wake-ups at idle for
 *   ever: a deadline is a poor backstop here. So the race is closed instead:
 *   between turning the interrupt on and the last look, one read of a device
 *   register (virtio_barrier: an exit, which under TCG takes QEMU's
 *   global lock, a host barrier whatever the guest's fences do) costs one
 *   exit per park. Only under TCG: under KVM the CPU's fence is enough and
 *   the read would be an exit to QEMU's user space (choose_barrier). A
 *   wait of LOST_IRQ_NS or more with the interrupt on that ends with frames
 *   waiting and none came is counted (rx lost interrupts).
 * Kernel option vnet_repair=0 turns the repairs and the barrier off (the
 * counters stay), to see what the watchdog alone finds, and what they cost;
 * vnet_drop_kicks=N leaves one in N notifications unsent, to show on a real
 * device that the state the repair looks for is the state a lost one leaves.
 */

/* Publish what was added to `vq` and notify the device if it asked; true
 * when a notify went out. Kernel option vnet_drop_kicks=N (fault injection)
 * leaves one in N of them unsent, as a lost one, for the repair to find. */
bool vnet_kick(struct virtqueue *vq)
{
	uint16_t notified_before = vq->notified_avail_idx;
	bool due = vq_kick_prepare(vq);
	trace_mark(TP_PUBLISH); /* an answer's frame is published (the sample waits for no rx kick) */
	if (!due) {
		vnet_dev.st.kicks_suppressed++;
		return false;
	}
	if (vnet_dev.drop_kicks && ++vnet_dev.kicks_decided % vnet_dev.drop_kicks == 0) {
		vq_kick_dropped(vq, notified_before);
		vnet_dev.st.kicks_dropped++;
		return false;
	}
	virtio_notify(vq);
	return true;
}

void vnet_repair(struct virtqueue *vq, uint64_t *repaired)
{
	if (vnet_dev.repair && vq_kick_repair(vq)) {
		virtio_notify(vq);
		(*repaired)++;
	}
}

int vnet_route_irqs_here(void)
{
	return vnet_dev.present ? virtio_route_irqs_here(&vnet_dev.vd) : -1;
}

bool vnet_rx_irq_enable(bool on)
{
	struct virtqueue *vq = &vnet_dev.rx.vq;
	if (!vnet_dev.present)
		return false;
	if (!on) {
		if (vnet_dev.rx_armed && vnet_dev.st.rx_interrupts == vnet_dev.rx_irqs_at_arm && vq_has_used(vq) &&
		    clock_ns() - vnet_dev.rx_armed_at >= LOST_IRQ_NS)
			vnet_dev.st.rx_lost_interrupts++;
		vnet_dev.rx_armed = false;
		vq_disable_cb(vq);
		return false;
	}
	vnet_tx_hold_park(); /* the CPU may park next: no notify decision waits */
	vnet_dev.rx_irqs_at_arm = vnet_dev.st.rx_interrupts;
	vnet_dev.rx_armed_at = clock_ns();
	bool arrived = vq_enable_cb(vq);
	if (vnet_dev.repair) {
		if (!arrived && vnet_dev.barrier_read) {
			virtio_barrier(&vnet_dev.vd); /* used_event out before the last look */
			vnet_dev.st.rx_barrier_reads++;
			arrived = vq_has_used(vq);
		}
		/* The CPU may park next: nothing owed may be left behind. */
		vnet_repair(vq, &vnet_dev.st.rx_kicks_repaired);
		vnet_repair(&vnet_dev.tx.vq, &vnet_dev.st.tx_kicks_repaired);
	}
	vnet_dev.rx_armed = !arrived;
	return arrived;
}

uint64_t vnet_next_deadline_ns(void)
{
	if (!vnet_dev.present)
		return UINT64_MAX;
	uint64_t held = vnet_tx_hold_deadline();
	if (!vnet_tx_outstanding())
		return held;
	uint64_t watch = vnet_tx_watch(clock_ns());
	return watch < held ? watch : held;
}

bool vnet_service_due(void)
{
	if (!vnet_dev.present)
		return false;
	if (vnet_dev.repair && (vq_kick_owed(&vnet_dev.rx.vq) || vq_kick_owed(&vnet_dev.tx.vq)))
		return true;
	uint64_t held = vnet_tx_hold_deadline();
	if (vnet_tx_held() && held == UINT64_MAX) /* an untimed hold: its decision waits for a poll */
		return true;
	bool outstanding = vnet_tx_outstanding();
	if (!outstanding && held == UINT64_MAX)
		return false;
	uint64_t now = clock_ns(); /* a timed hold waits for its deadline, the watchdog for its own */
	return now >= held || (outstanding && now >= vnet_tx_watch(now));
}

/* ---- features ---------------------------------------------------------------- */

static uint64_t bit(int b) { return 1ULL << b; }

/* What we take of what the device offers: the offloads only as kernel option
 * vnet_offload allows (all, csum: no TSO, 0: none) and each with what it
 * depends on. */
static uint64_t choose_features(uint64_t offered)
{
	uint64_t want = bit(VIRTIO_NET_F_MAC) | bit(VIRTIO_NET_F_STATUS) | bit(VIRTIO_NET_F_MRG_RXBUF) |
			bit(VIRTIO_F_RING_EVENT_IDX);
	bool csum = !kopt_is(KOPT_VNET_OFFLOAD, "0"), tso = kopt_is(KOPT_VNET_OFFLOAD, "all");
	if (csum)
		want |= bit(VIRTIO_NET_F_CSUM) | bit(VIRTIO_NET_F_GUEST_CSUM);
	if (tso && (offered & bit(VIRTIO_NET_F_CSUM)))
		want |= bit(VIRTIO_NET_F_HOST_TSO4);
	if (tso && (offered & bit(VIRTIO_NET_F_GUEST_CSUM)) && (offered & bit(VIRTIO_NET_F_MRG_RXBUF)))
		want |= bit(VIRTIO_NET_F_GUEST_TSO4);
	return want;
}

/* The offloads the negotiated features give. */
static unsigned offloads_of(uint64_t f)
{
	return (f & bit(VIRTIO_NET_F_CSUM) ? VNET_OFF_TX_CSUM : 0) |
	       (f & bit(VIRTIO_NET_F_GUEST_CSUM) ? VNET_OFF_RX_CSUM : 0) |
	       (f & bit(VIRTIO_NET_F_HOST_TSO4) ? VNET_OFF_TX_TSO4 : 0) |
	       (f & bit(VIRTIO_NET_F_GUEST_TSO4) ? VNET_OFF_RX_TSO4 : 0);
}

unsigned vnet_offloads(void) { return vnet_dev.present ? vnet_dev.offloads : 0; }

/* A fault-injection option's N (one in N), 0 for off. */
static unsigned one_in(enum kopt id)
{
	return (unsigned)kopt_number(id);
}

/* ---- set-up ------------------------------------------------------------------ */

static int queue_setup(struct queue_state *q, uint16_t index)
{
	uint16_t size = virtio_queue_size(&vnet_dev.vd, index);
	if (size == 0) {
		virtio_fail(&vnet_dev.vd, "a required queue is missing");
		return -1;
	}
	if (size > MAX_QUEUE)
		size = MAX_QUEUE;
	if (size & (size - 1)) {
		virtio_fail(&vnet_dev.vd, "queue size is not a power of two");
		return -1;
	}
	void *ring = page_alloc(vq_ring_bytes(size) / PAGE_SIZE);
	if (!ring) {
		virtio_fail(&vnet_dev.vd, "no memory for the rings");
		return -1;
	}
	bool event_idx = vnet_dev.vd.features & bit(VIRTIO_F_RING_EVENT_IDX);
	vq_init(&q->vq, index, size, event_idx, ring, q->cookie, q->chain_len, q->chain_in);
	q->vq.waits_when_done = index == TXQ; /* see virtqueue.c, "lost notifications" */
	return virtio_queue_enable(&vnet_dev.vd, &q->vq);
}

bool vnet_present(void) { return vnet_dev.present; }

void vnet_mac(uint8_t mac[6])
{
	for (int i = 0; i < 6; i++)
		mac[i] = vnet_dev.mac[i];
}

bool vnet_link_up(void)
{
	if (!vnet_dev.present)
		return false;
	if (!(vnet_dev.vd.features & bit(VIRTIO_NET_F_STATUS)))
		return true; /* no status field: the link is always up */
	uint16_t status;
	if (virtio_config_read(&vnet_dev.vd, VIRTIO_NET_CFG_STATUS, &status, sizeof status) < 0)
		return false;
	return status & VIRTIO_NET_S_LINK_UP;
}

/* Whether the last look before a park is ordered by a device read (see
 * "Interrupts" above). Under KVM, and on hardware, the vCPU is a CPU: the
 * full fence in vq_enable_cb orders our used_event store before the load of
 * the used index against the device's thread, which fences on its side, and
 * the read would only add an exit to QEMU's user space per park. Under TCG a
 * guest fence may emit no host barrier (QEMU before 8.1, one possible CPU),
 * so the read, which takes QEMU's lock, stays. */
static bool choose_barrier(void)
{
	if (kopt_is(KOPT_VNET_BARRIER, "read"))
		return true;
	if (kopt_is(KOPT_VNET_BARRIER, "fence"))
		return false;
	return cpu_hypervisor() == HYPERVISOR_TCG;
}

/* The receive buffers to take: the ring's, and with lending a reserve of
 * RX_RESERVE_RINGS rings (vnet_rx.c), or fewer where the reserve would take
 * more than a quarter of the free memory (a small machine: none). */
static uint16_t rx_buffers_wanted(void)
{
	unsigned ring = vnet_dev.rx.vq.size;
	uint64_t free = mem_heap_room();
	for (unsigned spare = vnet_dev.rx_lend_on ? RX_RESERVE_RINGS : 0; spare > 0; spare--) {
		unsigned n = ring * (1 + spare) < VNET_RX_BUFS_MAX ? ring * (1 + spare) : VNET_RX_BUFS_MAX;
		if ((uint64_t)(n - ring) * RX_BUF_SIZE * 4 <= free)
			return (uint16_t)n;
	}
	return (uint16_t)ring;
}

int vnet_init(void)
{
	if (vnet_dev.present)
		return 0;
	if (virtio_find(&vnet_dev.vd, VIRTIO_ID_NET) < 0) {
		kprintf("virtio-net: no modern virtio-net device (QEMU: -device virtio-net-pci,disable-legacy=on; "
			"on microvm -device virtio-net-device with -global virtio-mmio.force-legacy=false)\n");
		return -ENODEV;
	}
	vnet_dev.repair = kopt_number(KOPT_VNET_REPAIR) != 0;
	vnet_dev.barrier_read = choose_barrier();
	vnet_dev.tx_watchdog_ns = (uint64_t)kopt_number_or(KOPT_VNET_TX_WATCHDOG_US,
		(cpu_hypervisor() == HYPERVISOR_TCG ? TX_WATCHDOG_TCG_NS : TX_WATCHDOG_NS) / 1000) * 1000;
	if (vnet_dev.tx_watchdog_ns == 0)
		vnet_dev.tx_watchdog_ns = TX_WATCHDOG_TCG_NS; /* a watchdog of 0 would notify at every poll */
	vnet_dev.tx_batch = (int)kopt_number(KOPT_VNET_TX_BATCH); /* VNET_TX_BATCH_*: see vnet_tx.c */
	/* A timed hold trades a reply's latency for a notify, an exit under KVM;
	 * under TCG a notify costs no exit (vnet_tx.c, "A timed hold"). */
	long hold_us = kopt_number_or(KOPT_VNET_TX_HOLD_US, cpu_hypervisor() == HYPERVISOR_TCG ? 0 : -1);
	vnet_dev.tx_hold_ns = hold_us < 0 ? -1 : hold_us * 1000;
	vnet_dev.drop_kicks = one_in(KOPT_VNET_DROP_KICKS);
	vnet_dev.drop_rx = one_in(KOPT_VNET_DROP_RX);
	vnet_dev.drop_tx = one_in(KOPT_VNET_DROP_TX);
	if (virtio_irqs_prepare(&vnet_dev.vd, VIRTIO_IRQ_MAX) < 0)
		return -EIO;
	if (virtio_negotiate(&vnet_dev.vd, choose_features, bit(VIRTIO_F_VERSION_1)) < 0)
		return -EIO;
	vnet_dev.offloads = offloads_of(vnet_dev.vd.features);
	vnet_dev.merged = vnet_dev.vd.features & bit(VIRTIO_NET_F_MRG_RXBUF);
	if (queue_setup(&vnet_dev.rx, RXQ) < 0 || queue_setup(&vnet_dev.tx, TXQ) < 0)
		return -EIO;
	/* Indexed by source: VIRTIO_IRQ_CONFIG, then VIRTIO_IRQ_QUEUE0 + RXQ, + TXQ. */
	static const irq_handler_t handlers[VIRTIO_IRQ_MAX] = { config_interrupt, rx_interrupt, tx_interrupt };
	if (virtio_bind_irqs(&vnet_dev.vd, handlers, VIRTIO_IRQ_MAX) < 0)
		return -EIO;
	vnet_dev.rx_lend_on = kopt_number(KOPT_VNET_RX_LEND) != 0;
	vnet_dev.rx_nbufs = rx_buffers_wanted();
	vnet_dev.rx_lend_on = vnet_dev.rx_nbufs > vnet_dev.rx.vq.size; /* a reserve to lend from */
	vnet_dev.rx_bufs = page_alloc((size_t)vnet_dev.rx_nbufs * RX_BUF_SIZE / PAGE_SIZE);
	if (!vnet_dev.rx_bufs) {
		virtio_fail(&vnet_dev.vd, "no memory for receive buffers");
		return -ENOMEM;
	}
	if (vnet_dev.vd.features & bit(VIRTIO_NET_F_MAC)) {
		if (virtio_config_read(&vnet_dev.vd, 0, vnet_dev.mac, sizeof vnet_dev.mac) < 0) {
			virtio_fail(&vnet_dev.vd, "its MAC address cannot be read");
			return -EIO;
		}
	} else {
		/* A locally administered address from the TSC. */
		uint64_t r = clock_ns() ^ 0x5a5a5a5a5a5aULL;
		for (int i = 0; i < 6; i++)
			vnet_dev.mac[i] = (uint8_t)(r >> (8 * i));
		vnet_dev.mac[0] = (uint8_t)((vnet_dev.mac[0] & 0xfe) | 0x02);
	}
	/* Transmissions are reclaimed by polling: their interrupt stays off.
	 * Receive interrupts are off until a waiter turns them on to park. */
	vq_disable_cb(&vnet_dev.tx.vq);
	vq_disable_cb(&vnet_dev.rx.vq);
	if (virtio_driver_ok(&vnet_dev.vd) < 0)
		return -EIO;
	vnet_dev.present = true;
	vnet_rx_fill();
	return 0;
}

/* ---- counters ---------------------------------------------------------------- */

void vnet_get_stats(struct vnet_stats *st) { *st = vnet_dev.st; }

static const char *on_off(unsigned offload) { return vnet_dev.offloads & offload ? "on" : "off"; }

void vnet_stats_print(void)
{
	const struct vnet_stats *s = &vnet_dev.st;
	if (!vnet_dev.present)
		return;
	kprintf("virtio-net: rx %lu frames %lu bytes, tx %lu frames %lu bytes; drops: bad used %lu/%lu, "
		"runt %lu, merged %lu, bad header %lu, too long %lu, ring full %lu, too many segs %lu, "
		"bad length %lu, bad offload %lu, injected rx %lu tx %lu; kicks rx %lu tx %lu (suppressed %lu); "
		"irqs rx %lu tx %lu config %lu; features 0x%lx\n",
		s->rx_frames, s->rx_bytes, s->tx_frames, s->tx_bytes, s->rx_drop_bad_used, s->tx_drop_bad_used,
		s->rx_drop_runt, s->rx_drop_merged, s->rx_drop_bad_header, s->rx_drop_too_long, s->tx_ring_full,
		s->tx_too_many_segs, s->tx_bad_len, s->tx_bad_offload, s->rx_drop_injected, s->tx_drop_injected,
		s->rx_kicks, s->tx_kicks, s->kicks_suppressed, s->rx_interrupts, s->tx_interrupts,
		s->config_interrupts, vnet_dev.vd.features);
	kprintf("virtio-net: offloads tx-csum %s rx-csum %s tx-tso4 %s rx-tso4 %s; rx multi-buffer %lu, "
		"gso %lu, csum valid %lu, csum partial %lu; tx csum %lu, gso %lu (segments %lu)\n",
		on_off(VNET_OFF_TX_CSUM), on_off(VNET_OFF_RX_CSUM), on_off(VNET_OFF_TX_TSO4),
		on_off(VNET_OFF_RX_TSO4), s->rx_multi_buffer, s->rx_gso, s->rx_csum_valid, s->rx_csum_partial,
		s->tx_csum, s->tx_gso, s->tx_gso_segments);
	kprintf("virtio-net: rx lent %lu frames (%lu buffers, given back %lu, held now %u, bad %lu), "
		"lend refused %lu; rx buffers in reserve %u, in all %u; lending %s; post failed %lu; "
		"empty buffers %lu\n",
		s->rx_lent, s->rx_lent_bufs, s->rx_given_back, vnet_rx_buffers_held(), s->rx_give_back_bad,
		s->rx_lend_refused,
		vnet_dev.rx_nfree, vnet_dev.rx_nbufs, vnet_dev.rx_lend_on ? "on" : "off", s->rx_post_failed,
		s->rx_drop_empty_buffer);
	kprintf("virtio-net: rx lost kicks repaired %lu; tx lost kicks repaired %lu; "
		"tx watchdog kicks %lu (lost %lu, late %lu); rx lost interrupts %lu; kicks dropped %lu; repair %s; "
		"barrier %s (reads %lu)\n",
		s->rx_kicks_repaired, s->tx_kicks_repaired, s->tx_watchdog_kicks, s->tx_watchdog_lost,
		s->tx_watchdog_late, s->rx_lost_interrupts, s->kicks_dropped, vnet_dev.repair ? "on" : "off",
		vnet_dev.barrier_read ? "read" : "fence", s->rx_barrier_reads);
	static const char *const batch_mode[] = { "none", "all", "bursts", "hold" };
	kprintf("virtio-net: tx batches %lu (held %lu frames); batching %s\n", s->tx_batches,
		s->tx_batched_frames, batch_mode[vnet_dev.tx_batch]);
	kprintf("virtio-net: tx notify holds %lu (publishes %lu, decided for a park %lu)\n", s->tx_holds,
		s->tx_held_publishes, s->tx_holds_parked);
	kprintf("virtio-net: tx timed holds %lu (joined %lu, expired %lu); hold %s\n", s->tx_timed_holds,
		s->tx_timed_holds_joined, s->tx_timed_holds_expired,
		vnet_dev.tx_hold_ns < 0 ? "spin window" : vnet_dev.tx_hold_ns ? "fixed" : "off");
	/* Where each ring stands: the driver's published and consumed indexes,
	 * the device's, and the event indexes each side asked for. */
	for (int q = 0; q < 2; q++) {
		struct virtqueue *vq = q ? &vnet_dev.tx.vq : &vnet_dev.rx.vq;
		kprintf("virtio-net: %s ring: avail %u (kicked %u notified %u) used %u (read %u) free %u; "
			"avail_event %u used_event %u\n",
			q ? "tx" : "rx", vq->avail->idx, vq->kicked_avail_idx, vq->notified_avail_idx,
			*(volatile uint16_t *)&vq->used->idx, vq->last_used, vq_num_free(vq),
			*(volatile uint16_t *)((uintptr_t)vq->used + 4 + sizeof(struct vring_used_elem) * vq->size),
			vq->avail->ring[vq->size]);
	}
}
