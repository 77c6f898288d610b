/*
 * vnet_rx.c: the virtio-net receive path (see virtio.h, vnet_internal.h).
 *
 * Every receive descriptor is one RX_BUF_SIZE buffer. A frame fills one
 * buffer behind the 12-byte virtio-net header, or with MRG_RXBUF several
 * (the header's num_buffers; the rest hold frame bytes only): a TCP
 * segment of up to 64 KiB the host did not cut (GUEST_TSO4). The device
 * returns all of a frame's buffers at once (QEMU moves its used index once
 * per frame), so, as Linux's driver does, a frame whose buffers are not all
 * there is dropped (counted with bad num_buffers), never waited for: no
 * buffer is held between calls. Buffers go back to the ring in one batch
 * and one notify decision per call.
 *
 * Lending: the stack may keep a delivered frame's buffers instead of
 * copying them (vnet_rx_lend). Their places in the ring are then taken by
 * buffers from a reserve (RX_RESERVE_RINGS times the ring), and a lent buffer handed
 * back (vnet_rx_give_back) joins the reserve. So the ring is always full,
 * and what the stack holds is bounded by the reserve: with the reserve
 * short, a loan is refused and the stack copies (counted).
 *
 * The device is not trusted: the header's flags, gso_type, csum_start and
 * csum_offset, gso_size, hdr_len and num_buffers are checked against what
 * was negotiated and against the packet itself before anything of them
 * reaches the stack (which learns only "checksum vouched for" and "a merged
 * TCP segment"); a frame whose header does not hold is dropped and counted.
 */
#include "kernel/kernel.h"
#include "vnet_internal.h"

/* Ethernet type IPv4; IP protocols. */
#define ETHERTYPE_IPV4 0x0800
#define PROTO_TCP 6
#define PROTO_UDP 17

/* A received frame that spans several buffers, gathered as vnet_rx takes
 * them; its buffers go back to the ring once it is delivered or dropped. */
struct rx_gather {
	uint16_t need;                      /* buffers its header announced; 0: none being gathered */
	uint16_t have;                      /* gathered so far */
	bool bad;                           /* one of them had a bad length: drop the frame */
	uintptr_t slot[RX_MAX_BUFS];        /* the buffers */
	struct vnet_seg piece[RX_MAX_BUFS]; /* the frame's bytes in each */
	size_t len;                         /* frame bytes so far */
};

static uint8_t *rx_buf(uintptr_t slot) { return vnet_dev.rx_bufs + slot * RX_BUF_SIZE; }

/* Offer buffer `slot` to the device again (published at the next kick).
 * Each post follows a used entry the ring gave back, so the ring has room;
 * should it not, the buffer joins the reserve (counted) rather than being
 * lost, and the ring runs one buffer short. */
static void rx_post(uintptr_t slot)
{
	struct vq_buf b = { (uint64_t)rx_buf(slot), RX_BUF_SIZE };
	/* The cookie is slot + 1: a NULL cookie means "not in flight". */
	if (vq_add(&vnet_dev.rx.vq, &b, 0, 1, (void *)(slot + 1)) < 0) {
		vnet_dev.st.rx_post_failed++;
		vnet_dev.rx_where[slot] = RX_IN_RESERVE;
		vnet_dev.rx_free[vnet_dev.rx_nfree++] = (uint16_t)slot;
		return;
	}
	vnet_dev.st.rx_refills++;
}

/* Give a frame's buffers back to the ring after its delivery: the same
 * ones, or, when the stack borrowed them (it may have handed some back
 * already, into the reserve), as many from the reserve. */
static void rx_recycle(const uintptr_t *slot, int n, int *reposted)
{
	bool lent = vnet_dev.rx_lending;
	vnet_dev.rx_lending = false;
	for (int i = 0; i < n; i++) {
		uintptr_t post = slot[i];
		if (lent) {
			KCHECK(vnet_dev.rx_nfree > 0); /* vnet_rx_lend saw enough */
			post = vnet_dev.rx_free[--vnet_dev.rx_nfree];
			KCHECK(vnet_dev.rx_where[post] == RX_IN_RESERVE);
			vnet_dev.rx_where[post] = RX_IN_RING;
		}
		rx_post(post);
	}
	*reposted += n;
}

bool vnet_rx_lend(const struct vnet_frame *fr)
{
	if (!vnet_dev.rx_lend_on || vnet_dev.rx_lending)
		return false;
	if (vnet_dev.rx_nfree < fr->npieces) {
		vnet_dev.st.rx_lend_refused++;
		return false;
	}
	for (int i = 0; i < fr->npieces; i++) {
		KCHECK(fr->buf[i] < vnet_dev.rx_nbufs && vnet_dev.rx_where[fr->buf[i]] == RX_IN_RING);
		vnet_dev.rx_where[fr->buf[i]] = RX_IN_STACK;
	}
	vnet_dev.rx_lending = true;
	vnet_dev.st.rx_lent++;
	vnet_dev.st.rx_lent_bufs += (uint64_t)fr->npieces;
	return true;
}

void vnet_rx_give_back(uint16_t buf)
{
	if (buf >= vnet_dev.rx_nbufs || vnet_dev.rx_where[buf] != RX_IN_STACK) {
		vnet_dev.st.rx_give_back_bad++; /* a buffer not lent, or handed back twice */
		KASSERT(!"receive buffer handed back that was not lent");
		return;
	}
	vnet_dev.rx_where[buf] = RX_IN_RESERVE;
	vnet_dev.rx_free[vnet_dev.rx_nfree++] = buf;
	vnet_dev.st.rx_given_back++;
}

unsigned vnet_rx_buffers_held(void)
{
	if (!vnet_dev.present)
		return 0;
	return (unsigned)(vnet_dev.rx_nbufs - vnet_dev.rx.vq.size - vnet_dev.rx_nfree);
}

unsigned vnet_rx_reserve_size(void)
{
	return vnet_dev.present ? (unsigned)(vnet_dev.rx_nbufs - vnet_dev.rx.vq.size) : 0;
}

static void rx_kick(void)
{
	if (vnet_kick(&vnet_dev.rx.vq))
		vnet_dev.st.rx_kicks++;
}

void vnet_rx_fill(void)
{
	for (uintptr_t slot = 0; slot < vnet_dev.rx.vq.size; slot++) {
		vnet_dev.rx_where[slot] = RX_IN_RING;
		rx_post(slot);
	}
	vnet_dev.rx_nfree = 0;
	for (uint16_t b = vnet_dev.rx_nbufs; b-- > vnet_dev.rx.vq.size;) {
		vnet_dev.rx_where[b] = RX_IN_RESERVE;
		vnet_dev.rx_free[vnet_dev.rx_nfree++] = b;
	}
	rx_kick();
}

bool vnet_rx_pending(void)
{
	return vnet_dev.present && vq_has_used(&vnet_dev.rx.vq);
}

bool vnet_rx_burst(void)
{
	return vnet_dev.present && vq_used_waiting(&vnet_dev.rx.vq) >= 2;
}

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

/* Where an IPv4 TCP or UDP packet's transport header lies in the frame. */
struct l4_at {
	uint16_t start; /* offset of the TCP or UDP header */
	uint8_t proto;  /* PROTO_TCP or PROTO_UDP */
};

/* Whether frame `f` (`first` bytes of it in hand, `len` in all) is one whole
 * IPv4 TCP or UDP packet (not a fragment) with its IP header and transport
 * header in those first bytes; where the transport header starts. */
static bool find_l4(const uint8_t *f, size_t first, size_t len, struct l4_at *at)
{
	if (first < ETH_HLEN + 20 || be16(f + 12) != ETHERTYPE_IPV4)
		return false;
	const uint8_t *ip = f + ETH_HLEN;
	size_t ihl = (size_t)(ip[0] & 15) * 4, total = be16(ip + 2);
	if (ip[0] >> 4 != 4 || ihl < 20 || total < ihl || ETH_HLEN + total > len || (be16(ip + 6) & 0x3fff))
		return false;
	size_t l4_len = ip[9] == PROTO_TCP ? 20 : ip[9] == PROTO_UDP ? 8 : 0;
	if (!l4_len || total - ihl < l4_len || ETH_HLEN + ihl + l4_len > first)
		return false;
	at->start = (uint16_t)(ETH_HLEN + ihl);
	at->proto = ip[9];
	return true;
}

/*
 * The header's claims about frame `fr` (its first piece holds at least the
 * Ethernet header), checked; fills csum_ok and gso_size. Returns the drop
 * counter to charge, or NULL when the frame may be delivered. The device
 * may set flags only with GUEST_CSUM and a gso_type only with GUEST_TSO4
 * (virtio 5.1.6.4.1); NEEDS_CSUM must name this packet's own TCP or UDP
 * checksum; a merged TCP segment must be one.
 */
static uint64_t *check_header(const struct virtio_net_hdr *h, struct vnet_frame *fr)
{
	fr->csum_ok = false;
	fr->gso_size = 0;
	if (fr->len > RX_FRAME_MAX)
		return &vnet_dev.st.rx_drop_too_long;
	uint8_t known = VNET_HDR_F_NEEDS_CSUM | VNET_HDR_F_DATA_VALID;
	if ((h->flags & ~known) || (h->flags && !(vnet_dev.offloads & VNET_OFF_RX_CSUM)))
		return &vnet_dev.st.rx_drop_bad_header;
	if (h->gso_type != VNET_HDR_GSO_NONE &&
	    (h->gso_type != VNET_HDR_GSO_TCPV4 || !(vnet_dev.offloads & VNET_OFF_RX_TSO4)))
		return &vnet_dev.st.rx_drop_bad_header;
	if (!h->flags && h->gso_type == VNET_HDR_GSO_NONE)
		return NULL; /* an ordinary frame: the stack checks everything */
	struct l4_at at;
	bool l4 = find_l4(fr->piece[0].base, fr->piece[0].len, fr->len, &at);
	if (h->flags & VNET_HDR_F_NEEDS_CSUM) {
		uint16_t field = l4 && at.proto == PROTO_TCP ? 16 : 6;
		if (!l4 || h->csum_start != at.start || h->csum_offset != field)
			return &vnet_dev.st.rx_drop_bad_header;
	}
	if (h->gso_type == VNET_HDR_GSO_TCPV4) {
		if (!l4 || at.proto != PROTO_TCP || h->gso_size == 0 || h->hdr_len > fr->len)
			return &vnet_dev.st.rx_drop_bad_header;
		fr->gso_size = h->gso_size;
	}
	/* DATA_VALID on anything else (ARP, a fragment) vouches for nothing. */
	fr->csum_ok = l4;
	return NULL;
}

/* A whole frame, its header in `h`: check it and deliver it, or drop and
 * count it. Returns 1 when delivered. */
static int finish(const struct virtio_net_hdr *h, struct vnet_frame *fr, vnet_deliver_fn deliver, void *ctx)
{
	uint64_t *drop = check_header(h, fr);
	if (drop) {
		(*drop)++;
		return 0;
	}
	if (vnet_dev.drop_rx && ++vnet_dev.rx_counted % vnet_dev.drop_rx == 0) {
		vnet_dev.st.rx_drop_injected++;
		return 0;
	}
	deliver(ctx, fr);
	vnet_dev.st.rx_frames++;
	vnet_dev.st.rx_bytes += fr->len;
	vnet_dev.st.rx_multi_buffer += fr->npieces > 1;
	vnet_dev.st.rx_gso += fr->gso_size != 0;
	if (fr->csum_ok && (h->flags & VNET_HDR_F_NEEDS_CSUM))
		vnet_dev.st.rx_csum_partial++;
	else if (fr->csum_ok)
		vnet_dev.st.rx_csum_valid++;
	return 1;
}

/* Deliver (or drop) the gathered frame, or drop a partial one, and give
 * its buffers back. Returns 1 when delivered. */
static int finish_gather(struct rx_gather *g, vnet_deliver_fn deliver, void *ctx, int *reposted)
{
	int delivered = 0;
	if (g->have < g->need) {
		vnet_dev.st.rx_drop_merged++; /* the device returned fewer buffers than it said */
	} else if (!g->bad) {
		uint16_t buf[RX_MAX_BUFS];
		for (int i = 0; i < g->have; i++)
			buf[i] = (uint16_t)g->slot[i];
		struct vnet_frame fr = { .piece = g->piece, .buf = buf, .npieces = g->have, .len = g->len };
		const struct virtio_net_hdr *h = (const void *)rx_buf(g->slot[0]);
		delivered = finish(h, &fr, deliver, ctx);
	}
	rx_recycle(g->slot, g->have, reposted);
	*g = (struct rx_gather){ 0 };
	return delivered;
}

/* One used buffer, `len` bytes written (VQ_BAD_LEN: more than it holds),
 * into gathering state `g` (a multi-buffer frame under way) and `skip` (the
 * rest of a frame dropped for its num_buffers). Returns frames delivered;
 * *reposted counts buffers given back. */
static int take_buffer(struct rx_gather *g, unsigned *skip, uintptr_t slot, uint32_t len, vnet_deliver_fn deliver,
		       void *ctx, int *reposted)
{
	const struct virtio_net_hdr *h = (const void *)rx_buf(slot);
	if (g->need) { /* the next buffer of a frame being gathered */
		g->slot[g->have] = slot;
		if (len == VQ_BAD_LEN) {
			g->bad = true;
		} else if (len == 0) {
			/* A merged frame's buffer with nothing in it: QEMU never
			 * returns one, and a frame lent as pbufs would end in an
			 * empty pbuf, a chain lwIP asserts on when it queues or
			 * clones it (docs/hardening.md). */
			g->bad = true;
			vnet_dev.st.rx_drop_empty_buffer++;
		} else {
			g->piece[g->have] = (struct vnet_seg){ rx_buf(slot), len }, g->len += len;
		}
		if (++g->have < g->need)
			return 0;
		return finish_gather(g, deliver, ctx, reposted);
	}
	int delivered = 0;
	uint16_t nbufs = vnet_dev.merged ? h->num_buffers : 1;
	uint16_t most = vnet_dev.rx.vq.size < RX_MAX_BUFS ? vnet_dev.rx.vq.size : RX_MAX_BUFS;
	if (*skip) {
		(*skip)--;
	} else if (len == VQ_BAD_LEN) {
		/* counted by the virtqueue (bad_used) */
	} else if (len < sizeof *h + ETH_HLEN) {
		vnet_dev.st.rx_drop_runt++;
	} else if (nbufs == 0 || nbufs > most) {
		vnet_dev.st.rx_drop_merged++;
		*skip = nbufs > 1 ? nbufs - 1u : 0; /* what of them the device returned with it */
	} else if (nbufs > 1) {
		*g = (struct rx_gather){ .need = nbufs, .have = 1, .slot = { slot },
					 .piece = { { (const uint8_t *)h + sizeof *h, len - sizeof *h } },
					 .len = len - sizeof *h };
		return 0; /* its buffer waits for the frame's others */
	} else {
		struct vnet_seg piece = { (const uint8_t *)h + sizeof *h, len - sizeof *h };
		uint16_t buf = (uint16_t)slot;
		struct vnet_frame fr = { .piece = &piece, .buf = &buf, .npieces = 1, .len = piece.len };
		delivered = finish(h, &fr, deliver, ctx);
	}
	rx_recycle(&slot, 1, reposted);
	return delivered;
}

int vnet_rx(vnet_deliver_fn deliver, void *ctx, int budget)
{
	int delivered = 0, reposted = 0;
	struct rx_gather gather = { 0 };
	unsigned skip = 0;
	void *cookie;
	uint32_t len;
	if (!vnet_dev.present)
		return 0;
	/* The last refill's decision was taken long enough ago that the
	 * device's answer to it is visible now. */
	vnet_repair(&vnet_dev.rx.vq, &vnet_dev.st.rx_kicks_repaired);
	/* The budget counts whole frames: one under way is finished. */
	while ((delivered < budget || gather.need || skip) && vq_get_used(&vnet_dev.rx.vq, &cookie, &len))
		delivered += take_buffer(&gather, &skip, (uintptr_t)cookie - 1, len, deliver, ctx, &reposted);
	if (gather.need)
		delivered += finish_gather(&gather, deliver, ctx, &reposted); /* dropped: buffers missing */
	/* Entries the virtqueue rejected: bad ids (which never reach us) and
	 * lengths beyond their buffers (which reach us as VQ_BAD_LEN). */
	vnet_dev.st.rx_drop_bad_used = vnet_dev.rx.vq.bad_used;
	if (reposted)
		rx_kick();
	return delivered;
}
