/*
 * device.c: a virtio-net device for the netrx harness, under the guest's
 * unmodified driver (drivers/virtio/virtio_net.c and virtqueue.c).
 *
 * The driver's transport (virtio_dev.c over virtio_pci.c or virtio_mmio.c,
 * with pci.c, MSI-X and the I/O APIC) is replaced by stand-ins for
 * virtio_dev.h that hand it a device offering what QEMU's virtio-net-pci offers
 * on tap (MAC, STATUS, MRG_RXBUF, EVENT_IDX, VERSION_1, and the offloads
 * CSUM, GUEST_CSUM, HOST_TSO4, GUEST_TSO4; dev_offer changes that before the
 * driver starts) and remember where the two rings are. The harness then plays the device's side of the ring protocol:
 * it takes the receive buffers the driver posted, writes the fuzzer's bytes
 * into them and returns them as used, and it completes the frames the driver
 * publishes for transmission. So the header checks and ring handling in
 * vnet_rx are the code the guest runs, not a copy of it.
 *
 * Notifications go as with QEMU's virtio-net (hw/net/virtio-net.c, tx=bh):
 * the transmit side takes frames only once notified, then with its
 * notifications off (avail_event left where it was) takes everything
 * published, and goes back to waiting by writing avail_event = what it has
 * taken; the receive side, finding no buffer, writes avail_event the same
 * way and takes no frame until notified. In the miss modes (dev_set_mode) a
 * side that goes back to waiting does so as the Dekker race of issue 12
 * leaves it: its avail_event store reaches the driver only after the
 * driver's next publish and decision, and its re-check saw nothing new, so
 * it waits for a notification the driver, deciding on the old avail_event,
 * does not send. DEV_MISS_IRQ makes interrupt decisions read the used_event
 * of the decision before (the same race, the other way).
 *
 * Completing a transmission reads every byte of the frame first: if the
 * stack freed a frame's pbufs before the device was done with them, that is
 * a use after free AddressSanitizer reports (lwIP allocates with malloc in
 * this build). Each frame is also checked, as the host would take it: its
 * header asks only for negotiated offloads; a checksum left to the device is
 * completed as it would (the field must hold the pseudo-header's sum); a
 * frame to be segmented must be one TCPv4 packet whose headers end at
 * hdr_len, and is cut as Linux's GSO cuts it (headers copied, sequence
 * numbers advanced, PSH and FIN on the last segment only); then every frame
 * that would reach the wire must have a length an Ethernet frame may have
 * and valid IPv4, TCP, UDP and ICMP checksums.
 *
 * A received record longer than one buffer fills several (MRG_RXBUF), as
 * QEMU fills them for a merged TCP segment.
 *
 * The bytes of a receive buffer past the length the device reports for it
 * (past its virtio-net header at least) are poisoned for AddressSanitizer
 * until the device writes the buffer again: they are no part of the frame,
 * so the driver or the stack reading them (a header read without a length
 * check, on a buffer lent to the stack) is reported as a read past the
 * frame.
 */
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>
#include "drivers/virtio/virtio_dev.h"
#include "drivers/virtio/virtqueue.h"
#include "kernel/kernel.h"
#include "netrx.h"

#define VNET_HDR_LEN 12
#define ETH_HLEN     14
#define ETH_MAX      1514
#define VNET_GSO_MAX (14 + 65535) /* a frame the device is to segment */
/* QEMU offers 256; 32 lets one burst of records use every buffer, so the
 * device waits for the refill's notification (and can miss it). */
#define RX_QUEUE     32
/* Smaller than QEMU's 256 (a device may offer any power of two), so that
 * one burst of output fills it: the driver's ring-full and netif.c's
 * reclaim-and-retry paths get their turn. */
#define TX_QUEUE     16

/* Feature bits (virtio spec 5.1.3). */
#define F_CSUM       (1ULL << 0)
#define F_GUEST_CSUM (1ULL << 1)
#define F_MAC       (1ULL << 5)
#define F_GUEST_TSO4 (1ULL << 7)
#define F_HOST_TSO4  (1ULL << 11)
#define F_MRG_RXBUF (1ULL << 15)
#define F_STATUS    (1ULL << 16)
#define F_EVENT_IDX (1ULL << VIRTIO_F_RING_EVENT_IDX)
#define F_VERSION_1 (1ULL << VIRTIO_F_VERSION_1)

/* The virtio-net header as the device reads it (virtio 5.1.6). */
struct virtio_net_hdr {
	uint8_t flags;        /* 1: NEEDS_CSUM */
	uint8_t gso_type;     /* 1: TCPV4 */
	uint16_t hdr_len;     /* headers, for GSO */
	uint16_t gso_size;    /* payload per segment, for GSO */
	uint16_t csum_start;  /* the checksum's coverage starts here */
	uint16_t csum_offset; /* and it goes here, from csum_start */
	uint16_t num_buffers; /* receive only */
} __attribute__((packed));

const uint8_t dev_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static struct {
	uint8_t config[8];             /* device configuration: mac[6], status (link up) */
	struct virtqueue *q[2];        /* the driver's rx (0) and tx (1) queues */
	uint16_t next_avail[2];        /* the device's position in each available ring */
	uint16_t used_idx[2];          /* and in each used ring */
	irq_handler_t handler[VIRTIO_IRQ_MAX]; /* per interrupt source, as the driver bound them */
	bool waiting[2];               /* notifications on: the side waits for one
	                                * (tx: idle; rx: out of buffers) */
	unsigned mode;                 /* DEV_MISS_* */
	unsigned waits;                /* times a side went back to waiting (DEV_MISS_ALTERNATE) */
	bool event_held[2];            /* an avail_event store the driver does not see yet */
	uint16_t event_value[2];       /* its value */
	uint16_t used_event_seen;      /* rx used_event at the last interrupt decision */
	unsigned notifies[2];          /* notifications received per queue */
	unsigned barriers;             /* virtio_barrier calls */
	uint64_t offered;              /* feature bits offered (dev_offer) */
	uint64_t features;             /* and negotiated */
	unsigned tx_gso_frames;        /* transmitted frames cut into segments */
	unsigned tx_wire_frames;       /* frames that reached the "wire" */
	void (*tap)(const uint8_t *frame, size_t len); /* shown each of them (dev_tap) */
} dev = { .waiting = { true, true }, .offered = DEV_OFFER_TAP };

/* ---- the transport and kernel calls the driver makes -------------------------- */

int virtio_find(struct virtio_dev *vd, uint32_t type)
{
	if (type != VIRTIO_ID_NET)
		return -1;
	*vd = (struct virtio_dev){ .transport = VIRTIO_TRANSPORT_PCI };
	memcpy(dev.config, dev_mac, 6);
	dev.config[6] = 1; /* VIRTIO_NET_S_LINK_UP */
	return 0;
}

const char *virtio_name(const struct virtio_dev *vd) { (void)vd; return "harness"; }

int virtio_irqs_prepare(struct virtio_dev *vd, int nirqs)
{
	if (nirqs < 1 || nirqs > VIRTIO_IRQ_MAX)
		harness_fail("driver asked for %d interrupt sources", nirqs);
	vd->nirqs = nirqs;
	return 0;
}

int virtio_bind_irqs(struct virtio_dev *vd, const irq_handler_t *fn, int n)
{
	if (n < 1 || n > vd->nirqs)
		harness_fail("driver bound %d interrupt sources of %d prepared", n, vd->nirqs);
	for (int i = 0; i < n; i++)
		dev.handler[i] = fn[i];
	return 0;
}

int virtio_config_read(struct virtio_dev *vd, uint32_t off, void *buf, uint32_t len)
{
	(void)vd;
	if (off > sizeof dev.config || len > sizeof dev.config - off)
		harness_fail("driver read configuration bytes %u..%u", off, off + len);
	memcpy(buf, dev.config + off, len);
	return 0;
}

int virtio_negotiate(struct virtio_dev *vd, uint64_t (*choose)(uint64_t offered), uint64_t required)
{
	uint64_t offered = F_MAC | F_MRG_RXBUF | F_STATUS | F_EVENT_IDX | F_VERSION_1 | dev.offered;
	if ((offered & required) != required)
		harness_fail("driver requires features the device does not offer");
	vd->offered = offered;
	vd->features = (choose(offered) | required) & offered;
	if (((vd->features & F_HOST_TSO4) && !(vd->features & F_CSUM)) ||
	    ((vd->features & F_GUEST_TSO4) && !(vd->features & F_GUEST_CSUM)))
		harness_fail("driver took a TSO without its checksum offload (virtio 5.1.3.1)");
	dev.features = vd->features;
	return 0;
}

void dev_offer(uint64_t offloads) { dev.offered = offloads; }

uint16_t virtio_queue_size(struct virtio_dev *vd, uint16_t q)
{
	(void)vd;
	return q == 0 ? RX_QUEUE : q == 1 ? TX_QUEUE : 0;
}

int virtio_queue_enable(struct virtio_dev *vd, struct virtqueue *vq)
{
	(void)vd;
	if (vq->index > 1)
		harness_fail("driver enabled queue %u", vq->index);
	dev.q[vq->index] = vq;
	return 0;
}

int virtio_driver_ok(struct virtio_dev *vd) { (void)vd; return 0; }
/* One CPU in the harness: the device's interrupts are already here. */
int virtio_route_irqs_here(struct virtio_dev *vd) { (void)vd; return 0; }
/* A notification: the transmit side will take what is published at its next
 * step (QEMU schedules its bottom half); the receive side looks at the ring
 * again. Either leaves avail_event where it is, as QEMU does. */
void virtio_notify(struct virtqueue *vq)
{
	int qi = vq == dev.q[1];
	dev.notifies[qi]++;
	dev.waiting[qi] = false;
}

/* The driver's ordering point before it parks: nothing to order in one
 * thread; counted. */
void virtio_barrier(struct virtio_dev *vd)
{
	(void)vd;
	dev.barriers++;
}

void virtio_fail(struct virtio_dev *vd, const char *why)
{
	(void)vd;
	harness_fail("virtio-net set-up failed: %s", why);
}

/* Zeroed, page-aligned memory (rings and receive buffers); never freed, as
 * in the guest. */
void *page_alloc(size_t npages)
{
	void *p = aligned_alloc(PAGE_SIZE, npages * PAGE_SIZE);
	if (p)
		memset(p, 0, npages * PAGE_SIZE);
	return p;
}

/* ---- the device's side of the rings ------------------------------------------- */

static uint16_t avail_idx(struct virtqueue *vq) { return *(volatile uint16_t *)&vq->avail->idx; }

static void write_avail_event(int qi, uint16_t value)
{
	struct virtqueue *vq = dev.q[qi];
	char *after_ring = (char *)vq->used->ring + sizeof(struct vring_used_elem) * vq->size;
	*(volatile uint16_t *)after_ring = value;
}

/* Side qi moves on: its held avail_event store lands. */
static void settle(int qi)
{
	if (dev.event_held[qi]) {
		write_avail_event(qi, dev.event_value[qi]);
		dev.event_held[qi] = false;
	}
}

/* Side qi has taken everything published and goes back to waiting for a
 * notification of the next entry: avail_event (or, without EVENT_IDX, the
 * used flags) says so, then a re-check of avail idx, which in one thread
 * never finds more. In its miss mode the store is held back until after
 * the driver's next decision (settle, at that side's next step). */
static void wait_for_notify(int qi)
{
	struct virtqueue *vq = dev.q[qi];
	dev.waiting[qi] = true;
	dev.waits++;
	bool miss = (dev.mode & (qi ? DEV_MISS_TX : DEV_MISS_RX)) &&
		    (!(dev.mode & DEV_MISS_ALTERNATE) || (dev.waits & 1));
	uint16_t value = avail_idx(vq); /* QEMU: vring_avail_idx, past what it could not take */
	if (!vq->event_idx)
		vq->used->flags = 0; /* the flags: no model of a late store */
	else if (miss)
		dev.event_held[qi] = true, dev.event_value[qi] = value;
	else
		write_avail_event(qi, value);
}

/* Taken off side qi's ring with its notifications off (QEMU: while it has
 * work); without EVENT_IDX the used flags say so. */
static void busy(int qi)
{
	if (!dev.q[qi]->event_idx)
		dev.q[qi]->used->flags = VRING_USED_F_NO_NOTIFY;
}

/* Publish a used entry, and interrupt as the driver's suppression allows
 * (virtio spec 2.7.10: with EVENT_IDX, when used_event lies in the batch). */
static void push_used(int qi, uint32_t id, uint32_t len)
{
	struct virtqueue *vq = dev.q[qi];
	uint16_t old = dev.used_idx[qi], new = (uint16_t)(old + 1);
	vq->used->ring[old & (vq->size - 1)] = (struct vring_used_elem){ id, len };
	__asm__ volatile("" ::: "memory");
	*(volatile uint16_t *)&vq->used->idx = new;
	dev.used_idx[qi] = new;
	bool irq;
	if (vq->event_idx) {
		uint16_t event = vq->avail->ring[vq->size];
		if (qi == 0 && (dev.mode & DEV_MISS_IRQ)) {
			uint16_t stale = dev.used_event_seen;
			dev.used_event_seen = event;
			event = stale;
		}
		irq = (uint16_t)(new - event - 1) < (uint16_t)(new - old);
	} else {
		irq = !(vq->avail->flags & VRING_AVAIL_F_NO_INTERRUPT);
	}
	irq_handler_t fn = dev.handler[VIRTIO_IRQ_QUEUE0 + qi];
	if (irq && fn)
		fn(NULL);
}

/* The next chain the driver made available on queue qi: its head, or -1. */
static int take_avail(int qi)
{
	struct virtqueue *vq = dev.q[qi];
	if (!vq || dev.next_avail[qi] == avail_idx(vq))
		return -1;
	__asm__ volatile("" ::: "memory");
	uint16_t head = vq->avail->ring[dev.next_avail[qi] & (vq->size - 1)];
	dev.next_avail[qi]++;
	if (head >= vq->size)
		harness_fail("driver made descriptor %u available on a ring of %u", head, vq->size);
	return head;
}

/* The buffer descriptor at `head` of the receive ring: one device-writable
 * descriptor, or the harness fails. */
static struct vring_desc *rx_desc(int head)
{
	struct vring_desc *d = &dev.q[0]->desc[head];
	if (!(d->flags & VRING_DESC_F_WRITE) || (d->flags & VRING_DESC_F_NEXT))
		harness_fail("receive buffer %d is not one device-writable descriptor", head);
	return d;
}

bool dev_rx(const uint8_t *bytes, size_t n, uint32_t claimed, bool count_buffers)
{
	settle(0);
	if (dev.waiting[0])
		return false; /* QEMU reads no frame from the tap until notified */
	struct virtqueue *vq = dev.q[0];
	if (!vq)
		return false;
	/* How many buffers it takes (the driver's are all alike), and whether
	 * the driver posted that many: QEMU takes none until it can take all. */
	size_t buf_len = vq->desc[vq->avail->ring[dev.next_avail[0] & (vq->size - 1)] & (vq->size - 1)].len;
	unsigned need = 1;
	if (n > buf_len && (dev.features & F_MRG_RXBUF) && buf_len)
		need = (unsigned)((n + buf_len - 1) / buf_len);
	if (dev_rx_posted() < need || need > vq->size) {
		wait_for_notify(0);
		return false;
	}
	busy(0);
	int heads[64];
	if (need > 64)
		harness_fail("a record of %zu bytes needs %u buffers", n, need);
	for (unsigned k = 0; k < need; k++)
		heads[k] = take_avail(0);
	size_t at = 0;
	for (unsigned k = 0; k < need; k++) {
		struct vring_desc *d = rx_desc(heads[k]);
		uint8_t *buf = (uint8_t *)(uintptr_t)d->addr;
		size_t take = n - at < d->len ? n - at : d->len;
		ASAN_UNPOISON_MEMORY_REGION(buf, d->len); /* poisoned when last returned */
		memcpy(buf, bytes + at, take);
		memset(buf + take, 0, d->len - take);
		if (k == 0 && count_buffers && take >= VNET_HDR_LEN) {
			buf[10] = (uint8_t)need, buf[11] = (uint8_t)(need >> 8); /* num_buffers, little-endian */
		}
		at += take;
		/* The length the device claims: the truth for all buffers but
		 * the last, which carries what it claims beyond the others. */
		uint32_t len = (uint32_t)take;
		if (k + 1 == need)
			len = claimed >= at - take ? (uint32_t)(claimed - (at - take)) : 0;
		if (need == 1)
			len = claimed;
		/* What follows the frame in this buffer. The first 12 bytes
		 * (a first buffer's header) stay readable: the driver reads
		 * num_buffers before it drops a runt, and uses it only for
		 * frames that are not. */
		size_t frame_end = len > VNET_HDR_LEN ? len : VNET_HDR_LEN;
		if (frame_end < d->len)
			ASAN_POISON_MEMORY_REGION(buf + frame_end, d->len - frame_end);
		push_used(0, (uint32_t)heads[k], len);
	}
	return true;
}

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }
static unsigned be32(const uint8_t *p) { return be16(p) << 16 | be16(p + 2); }

/* Check one frame the stack sent: what a NIC (and the peer) would choke on. */
static void check_tx_frame(const uint8_t *f, size_t len)
{
	if (len < ETH_HLEN || len > ETH_MAX)
		harness_fail("transmitted frame of %zu bytes", len);
	if (f[12] != 0x08 || f[13] != 0x00) {
		trace("  tx: ethertype %02x%02x, %zu bytes\n", f[12], f[13], len);
		return; /* ARP: nothing to add up */
	}
	const uint8_t *ip = f + ETH_HLEN;
	size_t room = len - ETH_HLEN;
	size_t ihl = (size_t)(ip[0] & 15) * 4, total = be16(ip + 2);
	if (room < 20 || ip[0] >> 4 != 4 || ihl < 20 || total < ihl || total > room)
		harness_fail("transmitted a malformed IPv4 header (len %zu, ihl %zu, total %zu)", len, ihl, total);
	if (csum_fold(csum_add(0, ip, ihl)) != 0)
		harness_fail("transmitted IPv4 header with a bad checksum");
	if ((ip[6] & 0x3f) || ip[7])
		return; /* a fragment: its transport header is elsewhere */
	const uint8_t *l4 = ip + ihl;
	uint16_t l4len = (uint16_t)(total - ihl);
	if (ip[9] == 6 && l4len >= 20)
		trace("  tx: TCP %u > %u flags %02x seq %u ack %u win %u, %u bytes\n", be16(l4), be16(l4 + 2),
		      l4[13], be32(l4 + 4), be32(l4 + 8), be16(l4 + 14), l4len - (l4[12] >> 4) * 4);
	else
		trace("  tx: IP protocol %u, %u bytes\n", ip[9], l4len);
	uint32_t sum;
	if (ip[9] == 6 && l4len >= 20)
		sum = csum_pseudo(ip, 6, l4len);
	else if (ip[9] == 17 && l4len >= 8 && (l4[6] | l4[7]))
		sum = csum_pseudo(ip, 17, l4len);
	else if (ip[9] == 1 && l4len >= 4)
		sum = 0;
	else
		return;
	if (csum_fold(csum_add(sum, l4, l4len)) != 0)
		harness_fail("transmitted protocol %u segment with a bad checksum", ip[9]);
}

static void put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }

/* A frame on the "wire": checked, counted, shown to the tap. */
static void wire(const uint8_t *f, size_t len)
{
	check_tx_frame(f, len);
	dev.tx_wire_frames++;
	if (dev.tap)
		dev.tap(f, len);
}

/* Complete the checksum the driver left to us: over [start, len), with the
 * field holding the pseudo-header's sum; UDP sends a 0 result as 0xffff. */
static void complete_checksum(uint8_t *f, size_t len, const struct virtio_net_hdr *h)
{
	if ((size_t)h->csum_start + h->csum_offset + 2 > len || h->csum_start < ETH_HLEN)
		harness_fail("csum_start %u + csum_offset %u outside a frame of %zu bytes", h->csum_start,
			     h->csum_offset, len);
	uint16_t c = csum_fold(csum_add(0, f + h->csum_start, len - h->csum_start));
	if (c == 0 && h->csum_offset == 6)
		c = 0xffff;
	put16(f + h->csum_start + h->csum_offset, c);
}

/* Cut a TCPv4 frame the driver asked us to segment, as Linux's GSO does. */
static void segment(uint8_t *f, size_t len, const struct virtio_net_hdr *h)
{
	static uint8_t seg[ETH_MAX + 1];
	const uint8_t *ip = f + ETH_HLEN;
	size_t ihl = (size_t)(ip[0] & 15) * 4, l4 = ETH_HLEN + ihl;
	if (len < l4 + 20 || f[12] != 0x08 || f[13] != 0x00 || ip[9] != 6 || h->csum_start != l4 ||
	    h->csum_offset != 16)
		harness_fail("a frame to segment is not TCPv4 with the checksum at its TCP header");
	size_t thl = (size_t)(f[l4 + 12] >> 4) * 4, hdr = l4 + thl;
	if (h->hdr_len != hdr || h->gso_size == 0 || hdr >= len || be16(ip + 2) != len - ETH_HLEN)
		harness_fail("GSO frame: hdr_len %u (headers end at %zu), gso_size %u, IP length %u of %zu",
			     h->hdr_len, hdr, h->gso_size, be16(ip + 2), len - ETH_HLEN);
	/* Linux adjusts the super packet's pseudo-header sum per segment. */
	uint16_t pseudo = csum_fold(csum_pseudo(ip, 6, (uint16_t)(len - l4)));
	if ((uint16_t)~pseudo != be16(f + l4 + 16))
		harness_fail("GSO frame's TCP checksum field is not its pseudo-header sum");
	if (hdr + h->gso_size > ETH_MAX)
		harness_fail("gso_size %u makes segments longer than %d bytes", h->gso_size, ETH_MAX);
	dev.tx_gso_frames++;
	uint32_t seq = be32(f + l4 + 4);
	unsigned id = be16(ip + 4), k = 0;
	for (size_t at = hdr; at < len; at += h->gso_size, k++) {
		size_t chunk = len - at < h->gso_size ? len - at : h->gso_size;
		bool last = at + chunk == len;
		memcpy(seg, f, hdr);
		memcpy(seg + hdr, f + at, chunk);
		uint8_t *sip = seg + ETH_HLEN, *tcp = seg + l4;
		put16(sip + 2, (unsigned)(ihl + thl + chunk));
		put16(sip + 4, (id + k) & 0xffff);
		put16(sip + 10, 0);
		put16(sip + 10, csum_fold(csum_add(0, sip, ihl)));
		uint32_t s = seq + (uint32_t)(at - hdr);
		tcp[4] = (uint8_t)(s >> 24), tcp[5] = (uint8_t)(s >> 16), tcp[6] = (uint8_t)(s >> 8), tcp[7] = (uint8_t)s;
		if (!last)
			tcp[13] &= (uint8_t)~0x09; /* PSH and FIN only on the last */
		put16(tcp + 16, 0);
		put16(tcp + 16, csum_fold(csum_add(csum_pseudo(sip, 6, (uint16_t)(thl + chunk)), tcp, thl + chunk)));
		wire(seg, hdr + chunk);
	}
}

void dev_tx_complete(void)
{
	static uint8_t frame[VNET_GSO_MAX + 1];
	struct virtqueue *vq = dev.q[1];
	int head;
	settle(1);
	if (!vq || dev.waiting[1])
		return; /* not notified: nothing scheduled */
	busy(1);
	while ((head = take_avail(1)) >= 0) {
		size_t len = 0;
		bool overlong = false;
		struct virtio_net_hdr h;
		uint16_t i = (uint16_t)head;
		for (int k = 0;; k++) {
			if (k == vq->size)
				harness_fail("transmit chain at %d does not end", head);
			const struct vring_desc *d = &vq->desc[i];
			const uint8_t *p = (const uint8_t *)(uintptr_t)d->addr;
			if (d->flags & VRING_DESC_F_WRITE)
				harness_fail("transmit chain with a device-writable buffer");
			if (k == 0) {
				if (d->len != VNET_HDR_LEN)
					harness_fail("transmit header is not %d bytes", VNET_HDR_LEN);
				memcpy(&h, p, sizeof h);
			} else if (len + d->len <= VNET_GSO_MAX) {
				memcpy(frame + len, p, d->len);
				len += d->len;
			} else {
				overlong = true;
			}
			if (!(d->flags & VRING_DESC_F_NEXT))
				break;
			i = d->next;
			if (i >= vq->size)
				harness_fail("transmit chain links to descriptor %u", i);
		}
		if (overlong)
			harness_fail("transmitted frame longer than %d bytes", VNET_GSO_MAX);
		bool csum = h.flags == 1, gso = h.gso_type == 1;
		if ((h.flags && !csum) || (h.gso_type && !gso) || h.num_buffers || (!csum && (h.gso_type || h.hdr_len ||
		    h.gso_size || h.csum_start || h.csum_offset)) || (!gso && (h.gso_size || h.hdr_len)))
			harness_fail("transmit header %02x %02x %u %u %u %u %u: not what the driver may send",
				     h.flags, h.gso_type, h.hdr_len, h.gso_size, h.csum_start, h.csum_offset,
				     h.num_buffers);
		if ((csum && !(dev.features & F_CSUM)) || (gso && !(dev.features & F_HOST_TSO4)))
			harness_fail("transmit header asks for an offload not negotiated");
		if (gso) {
			segment(frame, len, &h); /* each segment's checksum made there */
		} else {
			if (csum)
				complete_checksum(frame, len, &h);
			wire(frame, len);
		}
		push_used(1, (uint32_t)head, 0);
	}
	wait_for_notify(1);
}

unsigned dev_tx_pending(void)
{
	return dev.q[1] ? (uint16_t)(avail_idx(dev.q[1]) - dev.next_avail[1]) : 0;
}

unsigned dev_rx_posted(void)
{
	return dev.q[0] ? (uint16_t)(avail_idx(dev.q[0]) - dev.next_avail[0]) : 0;
}

unsigned dev_rx_ring_size(void) { return dev.q[0] ? dev.q[0]->size : 0; }

void dev_set_mode(unsigned mode)
{
	settle(0), settle(1);
	dev.mode = mode;
}

void dev_settle(void) { settle(0), settle(1); }

const char *dev_owed(void)
{
	/* A side whose store is still held has not told the driver yet. */
	if (dev.waiting[1] && !dev.event_held[1] && dev_tx_pending())
		return "the transmit side waits for a notification of frames published";
	if (dev.waiting[0] && !dev.event_held[0] && dev_rx_posted())
		return "the receive side waits for a notification of buffers posted";
	return NULL;
}

unsigned dev_notifies(int qi) { return dev.notifies[qi]; }
unsigned dev_tx_gso_frames(void) { return dev.tx_gso_frames; }
unsigned dev_tx_wire_frames(void) { return dev.tx_wire_frames; }
void dev_tap(void (*tap)(const uint8_t *frame, size_t len)) { dev.tap = tap; }
unsigned dev_barriers(void) { return dev.barriers; }
