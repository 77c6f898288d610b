/*
 * sock_rx.c: a TCP socket's receive queue: what lwIP hands over waits here
 * until the application reads it, and the window opens as it does.
 *
 * What a peer can make one connection hold is bounded in buffers, not only
 * in bytes. The window bounds the bytes, but a received frame travels up on
 * a whole receive buffer (the driver's, lent; or a pool pbuf), so a peer that
 * sends one-byte segments to an application that does not read would pin a
 * buffer per byte: a few thousand such segments take every buffer the guest
 * has, and no other client is heard. So:
 *
 *  - Small pieces are copied, not queued: a piece of up to SOCK_RX_COPY_MAX
 *    bytes that arrives behind unread data goes into the free room of the
 *    queue's last chunk (a heap pbuf of SOCK_RX_CHUNK bytes this file made)
 *    or a new one, and its own buffer goes back at once: a run of small
 *    pieces takes one buffer per SOCK_RX_CHUNK bytes. Larger pieces are
 *    queued as they came (at least SOCK_RX_COPY_MAX bytes a buffer). The
 *    first piece of an empty queue (a request, the common case) is queued
 *    as it came, with no copy.
 *  - A socket holds at most SOCK_RX_BUFS_MAX buffers (small and large
 *    pieces alternated would otherwise take two per 1 KiB): more is
 *    refused. lwIP then keeps that piece (its refused_data, already
 *    acknowledged) and drops the peer's later segments unacknowledged
 *    until the application reads; the peer sends them again. Each refusal
 *    is counted.
 *  - Under memory pressure (most receive buffers in use, netif.c says) a
 *    socket that already holds more than SOCK_RX_BUFS_FAIR buffers is refused
 *    too, so that the rest stay for other connections.
 */
#include "lwip/priv/tcp_priv.h"
#include "sock.h"

/* The window given back to lwIP as the application takes `n` bytes (or
 * drops them unread). tcp_recved() takes 16 bits at a time; a queue under a
 * scaled window can hold more. */
void sock_window_open(struct tcp_pcb *pcb, size_t n)
{
	while (n) {
		u16_t piece = n > 0xffff ? 0xffff : (u16_t)n;
		tcp_recved(pcb, piece);
		n -= piece;
	}
}

/* Copy chain `p` onto s's queue, into the last chunk's room and new chunks;
 * false (nothing changed) when the heap has no chunk to give or a new chunk
 * would pass the socket's buffer bound. */
static bool rx_copy_in(struct sock *s, struct pbuf *p, size_t len)
{
	size_t room = s->rx_tail ? s->rx_tail_room : 0;
	struct pbuf *chunk = NULL;
	if (len > room) {
		/* A new chunk is a buffer like any other: past the bounds,
		 * sock_rx_queue refuses the piece (and counts it). */
		if (s->rx_bufs + 1u > SOCK_RX_BUFS_MAX ||
		    (s->rx_bufs + 1u > SOCK_RX_BUFS_FAIR && net_rx_memory_short()))
			return false;
		chunk = pbuf_alloc(PBUF_RAW, SOCK_RX_CHUNK, PBUF_RAM);
		if (!chunk)
			return false;
	}
	/* Into the last chunk's room: its length and every tot_len before it
	 * grow (the queue is that chunk's chain). */
	size_t first = len < room ? len : room;
	if (first) {
		pbuf_copy_partial(p, (u8_t *)s->rx_tail->payload + s->rx_tail->len, (u16_t)first, 0);
		for (struct pbuf *q = s->rx; q; q = q->next)
			q->tot_len = (u16_t)(q->tot_len + first);
		s->rx_tail->len = (u16_t)(s->rx_tail->len + first);
		s->rx_tail_room = (u16_t)(s->rx_tail_room - first);
	}
	if (chunk) {
		size_t rest = len - first;
		pbuf_copy_partial(p, chunk->payload, (u16_t)rest, (u16_t)first);
		chunk->len = chunk->tot_len = (u16_t)rest;
		pbuf_cat(s->rx, chunk);
		s->rx_tail = chunk;
		s->rx_tail_room = (u16_t)(SOCK_RX_CHUNK - rest);
		s->rx_bufs++;
	}
	net_counters.rx_coalesced++;
	net_counters.rx_coalesced_bytes += len;
	return true;
}

err_t sock_rx_queue(struct sock *s, struct pbuf *p)
{
	/* Its bytes and its buffers, in one walk (every received piece comes here). */
	size_t len = 0;
	unsigned bufs = 0;
	for (const struct pbuf *q = p; q; q = q->next, bufs++)
		len += q->len;
	if (s->rx && len <= SOCK_RX_COPY_MAX && rx_copy_in(s, p, len)) {
		s->rx_len += len;
		pbuf_free(p);
		KASSERT(sock_rx_consistent(s));
		return ERR_OK;
	}
	if (s->rx_bufs + bufs > SOCK_RX_BUFS_MAX) {
		net_counters.rx_cap_refused++;
		return ERR_MEM; /* lwIP keeps it and offers it again later */
	}
	if (s->rx_bufs + bufs > SOCK_RX_BUFS_FAIR && net_rx_memory_short()) {
		net_counters.rx_pressure_refused++;
		return ERR_MEM;
	}
	if (s->rx)
		pbuf_cat(s->rx, p);
	else
		s->rx = p;
	s->rx_tail = NULL; /* the last pbuf is not a chunk of ours now */
	s->rx_tail_room = 0;
	s->rx_bufs = (uint16_t)(s->rx_bufs + bufs);
	s->rx_len += len;
	KASSERT(sock_rx_consistent(s));
	return ERR_OK;
}

size_t sock_rx_take(struct sock *s, void *buf, size_t len)
{
	size_t n = len < s->rx_len ? len : s->rx_len;
	size_t got = pbuf_copy_partial(s->rx, buf, (u16_t)(n > 0xffff ? 0xffff : n), s->rx_off);
	net_counters.copied_rx_to_app += got;
	/* Drop the pbufs read completely. */
	size_t off = s->rx_off + got;
	while (s->rx && off >= s->rx->len) {
		struct pbuf *p = s->rx;
		off -= p->len;
		s->rx = p->next;
		if (s->rx)
			pbuf_ref(s->rx);
		if (p == s->rx_tail) {
			s->rx_tail = NULL;
			s->rx_tail_room = 0;
		}
		pbuf_free(p);
		s->rx_bufs--;
	}
	s->rx_off = (uint16_t)off;
	s->rx_len -= got;
	KASSERT(sock_rx_consistent(s));
	trace_mark(TP_READ);
	if (s->pcb) {
		sock_window_open(s->pcb, got); /* the window opens as the app reads */
		/* A piece refused while the queue was full can come in now,
		 * rather than at lwIP's next timer or the peer's next segment. */
		if (s->pcb->refused_data && s->rx_bufs < SOCK_RX_BUFS_MAX / 2)
			tcp_process_refused_data(s->pcb);
	}
	return got;
}

void sock_drop_unread(struct sock *s)
{
	if (!s->rx)
		return;
	if (s->pcb)
		sock_window_open(s->pcb, s->rx_len);
	pbuf_free(s->rx);
	s->rx = NULL;
	s->rx_tail = NULL;
	s->rx_tail_room = 0;
	s->rx_bufs = 0;
	s->rx_off = 0;
	s->rx_len = 0;
}
