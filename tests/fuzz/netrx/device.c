/*
 * device.c: a virtio-net device for the netrx harness, under the guest's
 * unmodified driver (drivers/virtio/virtio_net.c and virtqueue.c).
 *
 * The driver's PCI transport (virtio_pci.c, pci.c, MSI-X) is replaced by
 * stand-ins that hand it a device offering what QEMU's virtio-net-pci offers
 * (MAC, STATUS, MRG_RXBUF, EVENT_IDX, VERSION_1) and remember where the two
 * rings are. The harness then plays the device's side of the ring protocol:
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
 * this build). Each frame is also checked: the all-zero header the driver
 * promises, a length an Ethernet frame may have, and valid IPv4, TCP, UDP and
 * ICMP checksums in what lwIP built.
 */
#include <stdlib.h>
#include <string.h>
#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtqueue.h"
#include "kernel/kernel.h"
#include "netrx.h"

#define VNET_HDR_LEN 12
#define ETH_HLEN     14
#define ETH_MAX      1514
/* QEMU offers 256; 32 lets one burst of records use every buffer, so the
 * device waits for the refill's notification (and can miss it). */
#define RX_QUEUE     32
/* Smaller than QEMU's 256 (a device may offer any power of two), so that
 * one burst of output fills it: the driver's ring-full and netif.c's
 * reclaim-and-retry paths get their turn. */
#define TX_QUEUE     16

/* Feature bits (virtio spec 5.1.3). */
#define F_MAC       (1ULL << 5)
#define F_MRG_RXBUF (1ULL << 15)
#define F_STATUS    (1ULL << 16)
#define F_EVENT_IDX (1ULL << VIRTIO_F_RING_EVENT_IDX)
#define F_VERSION_1 (1ULL << VIRTIO_F_VERSION_1)

const uint8_t dev_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static struct {
	struct pci_dev pci;
	uint8_t config[8];             /* device configuration: mac[6], status (link up) */
	struct virtqueue *q[2];        /* the driver's rx (0) and tx (1) queues */
	uint16_t next_avail[2];        /* the device's position in each available ring */
	uint16_t used_idx[2];          /* and in each used ring */
	irq_handler_t handler[3];      /* per MSI-X entry, as the driver routed them */
	irq_handler_t vector_fn[256];  /* per vector allocated, its handler */
	int nvectors;                  /* vectors allocated */
	bool waiting[2];               /* notifications on: the side waits for one
	                                * (tx: idle; rx: out of buffers) */
	unsigned mode;                 /* DEV_MISS_* */
	unsigned waits;                /* times a side went back to waiting (DEV_MISS_ALTERNATE) */
	bool event_held[2];            /* an avail_event store the driver does not see yet */
	uint16_t event_value[2];       /* its value */
	uint16_t used_event_seen;      /* rx used_event at the last interrupt decision */
	unsigned notifies[2];          /* notifications received per queue */
	unsigned barriers;             /* virtio_pci_barrier calls */
} dev = { .waiting = { true, true } };

/* ---- the PCI transport and kernel calls the driver makes ---------------------- */

struct pci_dev *pci_find(uint16_t vendor, uint16_t device, int nth)
{
	if (vendor != 0x1af4 || device != 0x1041 || nth != 0)
		return NULL;
	dev.pci = (struct pci_dev){ .vendor = vendor, .device = device, .msix_size = 3 };
	return &dev.pci;
}

int pci_msix_enable(struct pci_dev *d) { (void)d; return 0; }
void pci_msix_mask(struct pci_dev *d, int entry, bool masked) { (void)d, (void)entry, (void)masked; }

void pci_msix_route(struct pci_dev *d, int entry, int vector)
{
	(void)d;
	if (entry >= 0 && entry < 3 && vector >= 0 && vector < 256)
		dev.handler[entry] = dev.vector_fn[vector];
}

int irq_alloc(irq_handler_t handler, void *arg)
{
	(void)arg;
	if (dev.nvectors == 256)
		return -1;
	dev.vector_fn[dev.nvectors] = handler;
	return dev.nvectors++;
}

int virtio_pci_probe(struct virtio_pci *vp, struct pci_dev *pci)
{
	*vp = (struct virtio_pci){ .pci = pci, .device_cfg = dev.config, .device_cfg_len = sizeof dev.config };
	memcpy(dev.config, dev_mac, 6);
	dev.config[6] = 1; /* VIRTIO_NET_S_LINK_UP */
	return 0;
}

int virtio_pci_negotiate(struct virtio_pci *vp, uint64_t wanted, uint64_t required)
{
	uint64_t offered = F_MAC | F_MRG_RXBUF | F_STATUS | F_EVENT_IDX | F_VERSION_1;
	if ((offered & required) != required)
		harness_fail("driver requires features the device does not offer");
	vp->features = (wanted | required) & offered;
	return 0;
}

uint16_t virtio_pci_queue_size(struct virtio_pci *vp, uint16_t q)
{
	(void)vp;
	return q == 0 ? RX_QUEUE : q == 1 ? TX_QUEUE : 0;
}

int virtio_pci_queue_enable(struct virtio_pci *vp, struct virtqueue *vq, uint16_t msix)
{
	(void)vp, (void)msix;
	if (vq->index > 1)
		harness_fail("driver enabled queue %u", vq->index);
	dev.q[vq->index] = vq;
	return 0;
}

int virtio_pci_config_vector(struct virtio_pci *vp, uint16_t msix) { (void)vp, (void)msix; return 0; }
void virtio_pci_driver_ok(struct virtio_pci *vp) { (void)vp; }
/* A notification: the transmit side will take what is published at its next
 * step (QEMU schedules its bottom half); the receive side looks at the ring
 * again. Either leaves avail_event where it is, as QEMU does. */
void virtio_pci_notify(struct virtqueue *vq)
{
	int qi = vq == dev.q[1];
	dev.notifies[qi]++;
	dev.waiting[qi] = false;
}

/* The driver's ordering point before it parks: nothing to order in one
 * thread; counted. */
void virtio_pci_barrier(struct virtio_pci *vp)
{
	(void)vp;
	dev.barriers++;
}

void virtio_pci_fail(struct virtio_pci *vp, const char *why)
{
	(void)vp;
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
	if (!vq->event_idx)
		vq->used->flags = 0; /* the flags: no model of a late store */
	else if (miss)
		dev.event_held[qi] = true, dev.event_value[qi] = dev.next_avail[qi];
	else
		write_avail_event(qi, dev.next_avail[qi]);
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
	irq_handler_t fn = dev.handler[qi + 1]; /* MSI-X entries: config 0, rx 1, tx 2 */
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

bool dev_rx(const uint8_t *bytes, size_t n, uint32_t claimed)
{
	settle(0);
	if (dev.waiting[0])
		return false; /* QEMU reads no frame from the tap until notified */
	int head = take_avail(0);
	if (head < 0) {
		wait_for_notify(0);
		return false;
	}
	busy(0);
	struct vring_desc *d = &dev.q[0]->desc[head];
	if (!(d->flags & VRING_DESC_F_WRITE) || (d->flags & VRING_DESC_F_NEXT))
		harness_fail("receive buffer %d is not one device-writable descriptor", head);
	uint8_t *buf = (uint8_t *)(uintptr_t)d->addr;
	size_t take = n < d->len ? n : d->len;
	memcpy(buf, bytes, take);
	memset(buf + take, 0, d->len - take);
	push_used(0, (uint32_t)head, claimed);
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

void dev_tx_complete(void)
{
	static uint8_t frame[ETH_MAX + 1];
	struct virtqueue *vq = dev.q[1];
	int head;
	settle(1);
	if (!vq || dev.waiting[1])
		return; /* not notified: nothing scheduled */
	busy(1);
	while ((head = take_avail(1)) >= 0) {
		size_t len = 0;
		bool overlong = false;
		uint16_t i = (uint16_t)head;
		for (int k = 0;; k++) {
			if (k == vq->size)
				harness_fail("transmit chain at %d does not end", head);
			const struct vring_desc *d = &vq->desc[i];
			const uint8_t *p = (const uint8_t *)(uintptr_t)d->addr;
			if (d->flags & VRING_DESC_F_WRITE)
				harness_fail("transmit chain with a device-writable buffer");
			if (k == 0) {
				static const uint8_t zero[VNET_HDR_LEN];
				if (d->len != VNET_HDR_LEN || memcmp(p, zero, VNET_HDR_LEN))
					harness_fail("transmit header is not %d zero bytes", VNET_HDR_LEN);
			} else if (len + d->len <= ETH_MAX) {
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
			harness_fail("transmitted frame longer than %d bytes", ETH_MAX);
		check_tx_frame(frame, len);
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
unsigned dev_barriers(void) { return dev.barriers; }
