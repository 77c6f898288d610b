/*
 * tcp_hooks.c: the TCP hooks lwipopts.h installs in lwIP, and the step that
 * runs lwIP's timers.
 *
 *  - net_tcp_isn: initial sequence numbers after RFC 6528 (clock + keyed hash)
 *    instead of lwIP's global counter, which any peer can predict.
 *  - TIME_WAIT recycling: lwIP answers a SYN that matches a connection in
 *    TIME_WAIT with an ACK or RST, so a client reusing its port within the
 *    TIME_WAIT period stalls. Like Linux, we accept such a SYN when its
 *    sequence number lies beyond everything the old connection received: the
 *    hook drops the SYN and remembers the pcb; the netif input path then ends
 *    that pcb (net_tcp_make_room) and feeds the frame in again, and the
 *    listener accepts it.
 *  - SYN_RCVD eviction: lwIP keeps a half-open connection for 20 s and, when
 *    its pcb pool is full, drops every new SYN; a flood of SYNs from addresses
 *    that never answer would lock out real clients for that long. When a SYN
 *    reaches a listener and the pool is full (no TIME_WAIT pcb lwIP could
 *    take instead), the hook drops it and remembers the oldest half-open
 *    connection that has waited at least 4 s; the same path as above ends
 *    it and feeds the SYN again.
 *  - A full backlog holds handshakes back: lwIP completes a handshake and
 *    runs the accept callback on the client's ACK, and a listener with every
 *    backlog entry taken could only reset the connection, whose client
 *    already believes it is established and has sent its request. As Linux
 *    does, the hook drops that ACK (and whatever the client sends with or
 *    after it) while the backlog is full: the connection stays half-open,
 *    the client sends again, and a later copy completes it once the
 *    application has accepted. The pcb counts as heard from, so the
 *    SYN_RCVD eviction below does not take it for dead.
 *  - Guards for assertions in lwIP's receive path that any peer can
 *    trigger with crafted segments (insane_offset, ooseq_beyond_window
 *    below; docs/hardening.md lists every assertion a frame can reach).
 *  - Whether two or more connections are open (net_tcp_several_open), which
 *    the driver asks before it holds a reply's notify for another's.
 *  - A closing connection keeps its data: lwIP drops a pcb that has sat in
 *    LAST_ACK for 2 * TCP_MSL, and our short TCP_MSL makes that sooner than
 *    its first retransmission (see net_tcp_run_timers below).
 */
#include "lwip/ip4_addr.h"
#include "lwip/memp.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"
#include "kernel/kernel.h"
#include "net_internal.h"

/* ---- initial sequence numbers -------------------------------------------- */

/* Secret key of the hash, drawn once on first use. */
static uint64_t isn_key[2];
static bool isn_key_set;

u32_t net_tcp_isn(const struct ip4_addr *local_ip, u16_t local_port,
		  const struct ip4_addr *remote_ip, u16_t remote_port)
{
	if (!isn_key_set) {
		isn_key[0] = ((uint64_t)net_random_u32() << 32) | net_random_u32();
		isn_key[1] = ((uint64_t)net_random_u32() << 32) | net_random_u32();
		isn_key_set = true;
	}
	uint64_t addrs = ((uint64_t)local_ip->addr << 32) | remote_ip->addr;
	uint64_t ports = ((uint64_t)local_port << 16) | remote_port;
	uint64_t hash = mix64(mix64(addrs ^ isn_key[0]) ^ ports ^ isn_key[1]);
	/* RFC 793's clock ticks every 4 us. */
	return (u32_t)(clock_ns() / 4000) + (u32_t)hash;
}

/* ---- TIME_WAIT recycling --------------------------------------------------- */

/* The pcb a just-dropped SYN wants ended to make room for itself (a TIME_WAIT
 * pcb on its port, or the oldest half-open connection), and the counter that
 * says which; NULL when none. The hook may not change pcb lists, so it only
 * sets these; net_tcp_make_room() acts on them right after the same frame's
 * input, before anything else can free the pcb. */
static struct tcp_pcb *pcb_to_end;
static uint64_t *pcb_to_end_counter;

static bool tcp_pcb_pool_full(void)
{
	const struct stats_mem *m = lwip_stats.memp[MEMP_TCP_PCB];
	return m->used >= m->avail;
}

/* A half-open connection younger than this may be a real client whose ACK
 * was lost in a burst: lwIP sends the SYN-ACK again after 3 s (its initial
 * RTO) and the client answers at once. Older ones are taken to be dead. In
 * ticks of lwIP's slow timer (500 ms): 4-4.5 s. */
#define SYNRCVD_EVICT_AGE_TICKS 8

/* The half-open connection that has waited longest, if it has waited long
 * enough to be evicted; NULL when none has. */
static struct tcp_pcb *oldest_synrcvd(void)
{
	struct tcp_pcb *oldest = NULL;
	u32_t oldest_age = SYNRCVD_EVICT_AGE_TICKS - 1;
	for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb; pcb = pcb->next) {
		u32_t age = tcp_ticks - pcb->tmr; /* tmr: when it last heard from the peer */
		if (pcb->state == SYN_RCVD && age > oldest_age) {
			oldest = pcb;
			oldest_age = age;
		}
	}
	return oldest;
}

/* ---- a segment lwIP would assert on --------------------------------------- */

/* lwIP 2.1.3's tcp_receive() trims a segment that starts before rcv_nxt and
 * reaches past it, and asserts that the offset is below 0xffff ("insane
 * offset!"). Its overlap test wraps: a segment of one sequence number (one
 * byte, a bare SYN or FIN) that starts exactly 2^31 before rcv_nxt passes it,
 * and the assertion ends the guest. Any peer can send one. Such a segment,
 * and any other whose overlap is that large, is nonsense: drop it (counted)
 * before lwIP sees it. States before the handshake has set rcv_nxt, LISTEN
 * and TIME_WAIT never trim. */
static bool insane_offset(const struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p)
{
	if (pcb->state < SYN_RCVD || pcb->state == TIME_WAIT)
		return false;
	u32_t len = p->tot_len + ((TCPH_FLAGS(hdr) & (TCP_SYN | TCP_FIN)) ? 1 : 0);
	u32_t seqno = hdr->seqno; /* host order by now */
	return len > 0 && TCP_SEQ_BETWEEN(pcb->rcv_nxt, seqno + 1, seqno + len - 1) &&
	       pcb->rcv_nxt - seqno >= 0xffff;
}

/* lwIP 2.1.3's tcp_receive() queues an out-of-order segment (one that
 * starts inside the window, after rcv_nxt) checking its start against the
 * window but, on an empty queue or when it replaces a queued segment, not
 * its end. When in-order data later reaches it, the whole segment is taken
 * and lwIP asserts that it fits the window ("ooseq tcplen > rcv_wnd"): one
 * peer, one connection, a few hundred segments, and the guest stops. The
 * window's right edge (rcv_nxt + rcv_wnd) never moves left, so a sender that
 * keeps to what we advertised never sends past it; such a segment is
 * dropped here (counted) and the peer sends it again within the window. The
 * test for "queued out of order" is lwIP's own, wrap included: with a zero
 * window it passes one sequence number, rcv_nxt + 2^31 - 1. An in-order
 * segment (seqno == rcv_nxt) lwIP trims itself; one outside the window lwIP
 * drops and acknowledges itself. */
static bool ooseq_beyond_window(const struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p)
{
	if (pcb->state < SYN_RCVD || pcb->state == TIME_WAIT)
		return false;
	u32_t len = p->tot_len + ((TCPH_FLAGS(hdr) & (TCP_SYN | TCP_FIN)) ? 1 : 0);
	u32_t seqno = hdr->seqno; /* host order by now */
	if (len == 0 || seqno == pcb->rcv_nxt ||
	    !TCP_SEQ_BETWEEN(seqno, pcb->rcv_nxt, pcb->rcv_nxt + pcb->rcv_wnd - 1))
		return false;
	return (uint64_t)(seqno - pcb->rcv_nxt) + len > pcb->rcv_wnd;
}

/* When a segment covers one queued out of order that carries the peer's
 * FIN, lwIP moves the FIN onto it (tcp_oos_insert_segment, and the same on
 * the in-order path): the segment grows by one sequence number past its own
 * end. One that ended exactly at the window's edge then reaches past it, and
 * lwIP asserts when it is taken ("tcplen > rcv_wnd", in order or from the
 * queue). Nothing a peer may send lies past its own FIN: a segment with data
 * beyond the queued FIN is dropped. A FIN segment is always the queue's last
 * (lwIP frees what follows one and appends nothing after it). Only states
 * that still take data (below CLOSE_WAIT) queue out of order. */
static bool past_queued_fin(const struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p)
{
	if (pcb->state < SYN_RCVD || pcb->state >= CLOSE_WAIT || !pcb->ooseq || p->tot_len == 0)
		return false;
	const struct tcp_seg *last = pcb->ooseq;
	while (last->next)
		last = last->next;
	if (!(TCPH_FLAGS(last->tcphdr) & TCP_FIN))
		return false;
	u32_t fin = last->tcphdr->seqno + last->len; /* queued headers are in host order */
	return TCP_SEQ_GT(hdr->seqno + p->tot_len, fin);
}

/* Whether a segment's options carry option `kind` with length `len` as
 * lwIP's tcp_parseopt would take it: walked as it walks them (0 ends, 1 is
 * one byte, a length below 2 or past the options stops the walk). The
 * options are opt1len bytes after the fixed header, then the rest in opt2
 * (a second pbuf). */
static bool has_option(const struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len, const u8_t *opt2, u8_t kind,
		       u8_t len)
{
	const u8_t *opt1 = (const u8_t *)hdr + TCP_HLEN;
	u16_t i = 0;
	while (i < optlen) {
		u8_t k = i < opt1len ? opt1[i] : opt2[i - opt1len];
		if (k == LWIP_TCP_OPT_EOL)
			return false;
		if (k == LWIP_TCP_OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= optlen)
			return false;
		u8_t n = i + 1 < opt1len ? opt1[i + 1] : opt2[i + 1 - opt1len];
		if (k == kind)
			return n == len && i + len <= optlen;
		if (n < 2)
			return false;
		i = (u16_t)(i + n);
	}
	return false;
}

/* lwIP takes an MSS option from any segment, not only a SYN (RFC 9293 allows
 * it only there). A peer that lowers our MSS after data is queued breaks the
 * invariants of tcp_write ("mss_local is too small", "inconsistent oversize
 * vs. space") and of the persist timer's split ("split <= mss", "Can't split
 * segment into length 0"): each an assertion. Such a segment is dropped. */
static bool mss_not_on_syn(const struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len, const u8_t *opt2)
{
	return !(TCPH_FLAGS(hdr) & TCP_SYN) && optlen &&
	       has_option(hdr, optlen, opt1len, opt2, LWIP_TCP_OPT_MSS, LWIP_TCP_OPT_LEN_MSS);
}

/* A SYN in SYN_RCVD is either the client's own SYN again, which lwIP answers
 * with the SYN-ACK, or nonsense: lwIP takes a window-scale option from it
 * although the SYN-ACK already sent (built from the first SYN) offered none,
 * and a SYN with ACK passes the handshake with its data misplaced by one
 * byte (tcp_receive trims a data byte for the SYN). Passive opens are the
 * only way into SYN_RCVD here (lwIP has no simultaneous open), so a SYN
 * with ACK, or one whose sequence number is not the first SYN's, or one
 * that asks for window scaling the first did not, is dropped. */
static bool bad_syn_in_synrcvd(const struct tcp_pcb *pcb, const struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len,
			       const u8_t *opt2)
{
	u8_t flags = TCPH_FLAGS(hdr);
	if (pcb->state != SYN_RCVD || !(flags & TCP_SYN))
		return false;
	if ((flags & TCP_ACK) || hdr->seqno != pcb->rcv_nxt - 1)
		return true;
	return !(pcb->flags & TF_WND_SCALE) && optlen &&
	       has_option(hdr, optlen, opt1len, opt2, LWIP_TCP_OPT_WS, LWIP_TCP_OPT_LEN_WS);
}

err_t net_tcp_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, u16_t optlen,
		       u16_t opt1len, u8_t *opt2, struct pbuf *p)
{
	if (insane_offset(pcb, hdr, p)) {
		net_counters.tcp_insane_offset++;
		return ERR_ABRT; /* tcp_input frees it */
	}
	if (ooseq_beyond_window(pcb, hdr, p)) {
		net_counters.tcp_beyond_window++;
		return ERR_ABRT;
	}
	if (past_queued_fin(pcb, hdr, p)) {
		net_counters.tcp_past_fin++;
		return ERR_ABRT;
	}
	if (mss_not_on_syn(hdr, optlen, opt1len, opt2)) {
		net_counters.tcp_mss_not_syn++;
		return ERR_ABRT;
	}
	if (bad_syn_in_synrcvd(pcb, hdr, optlen, opt1len, opt2)) {
		net_counters.tcp_bad_syn++;
		return ERR_ABRT;
	}
	/* A SYN that offered a window of 0 or 1 leaves snd_wnd_max below 2, and
	 * tcp_write then takes our MSS as its segment size; a later window of
	 * 2..2*MSS would shrink that size below segments already queued (an
	 * assertion in tcp_write). A floor of two segments keeps it where it
	 * was; snd_wnd_max sizes nothing else in lwIP. A repair, not a drop:
	 * dropping the window update would stall the peer for good. */
	if (pcb->state >= SYN_RCVD && pcb->state != TIME_WAIT && pcb->snd_wnd_max < 2) {
		pcb->snd_wnd_max = 2 * TCP_MSS;
		net_counters.tcp_wnd_max_floor++;
	}
	u8_t flags = TCPH_FLAGS(hdr) & (TCP_SYN | TCP_ACK | TCP_RST | TCP_FIN);
	if (pcb->state == LISTEN) {
		/* lwIP takes a TIME_WAIT pcb by itself when the pool is full. */
		if (flags != TCP_SYN || !tcp_pcb_pool_full() || tcp_tw_pcbs)
			return ERR_OK;
		struct tcp_pcb *victim = oldest_synrcvd();
		if (!victim)
			return ERR_OK; /* lwIP drops the SYN: the client tries again */
		pcb_to_end = victim;
		pcb_to_end_counter = &net_counters.tcp_synrcvd_evicted;
		return ERR_ABRT;
	}
	if (pcb->state == SYN_RCVD && (flags & TCP_ACK) && !(flags & TCP_RST) && pcb->listener &&
	    sock_listener_full(pcb->listener->callback_arg)) {
		pcb->tmr = tcp_ticks; /* alive: not a half-open one to evict */
		net_counters.tcp_handshake_deferred++;
		return ERR_ABRT; /* dropped: the client sends it again */
	}
	if (pcb->state != TIME_WAIT)
		return ERR_OK;
	/* tcp_input has already turned hdr->seqno into host order. */
	if (flags != TCP_SYN || !TCP_SEQ_GT(hdr->seqno, pcb->rcv_nxt))
		return ERR_OK; /* lwIP's own TIME_WAIT handling */
	pcb_to_end = pcb;
	pcb_to_end_counter = &net_counters.tcp_timewait_recycled;
	return ERR_ABRT; /* drop this copy of the SYN */
}

bool net_tcp_make_room(void)
{
	struct tcp_pcb *victim = pcb_to_end;
	if (!victim)
		return false;
	pcb_to_end = NULL;
	KASSERT(victim->state == TIME_WAIT || victim->state == SYN_RCVD);
	/* TIME_WAIT: unlinked and freed, no RST. SYN_RCVD: a RST to a peer
	 * that may not exist, and the pcb is free. */
	tcp_abort(victim);
	(*pcb_to_end_counter)++;
	return true;
}

/* ---- timers: LAST_ACK with data in flight ---------------------------------- */

/*
 * lwIP's slow timer silently frees a pcb that has sat in LAST_ACK (the peer
 * closed first, then we did) for 2 * TCP_MSL since it last heard from the
 * peer. The limit is meant for a final ACK that never comes, but with the
 * 2 s our TCP_MSL gives (lwipopts.h) it can fall before the first
 * retransmission of a lost segment (an RTO starts at 2.5-3 s): an answer
 * written just before close() and lost on the wire was never sent again,
 * and the peer waited for it for ever. So while such a pcb holds segments
 * not yet acknowledged (its data, or only its FIN), we restart that clock
 * whenever the timer would act on it, each restart counted: the connection
 * ends as TCP ends one, when the peer acknowledges or when the
 * retransmissions give up (TCP_MAXRTX, then lwIP frees it). Under pool
 * pressure lwIP may still take such a pcb for a new connection.
 */
void net_tcp_run_timers(void)
{
	/* The slow timer frees the pcb when, after it advances tcp_ticks,
	 * tcp_ticks - tmr exceeds this: so at an age of `limit` now. */
	const u32_t limit = 2 * TCP_MSL / TCP_SLOW_INTERVAL;
	for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb; pcb = pcb->next) {
		if (pcb->state == LAST_ACK && (pcb->unacked || pcb->unsent) &&
		    (u32_t)(tcp_ticks - pcb->tmr) >= limit) {
			pcb->tmr = tcp_ticks;
			net_counters.tcp_last_ack_renewed++;
		}
		/* lwIP's persist timer runs while unsent data waits for a window,
		 * and only tcp_output stops it. Its zero-window probe sends the
		 * head's first byte; when that was the whole of what was unsent
		 * and the peer acknowledges it, nothing waits, the timer runs on,
		 * and the slow timer asserts ("persist ticking with empty send
		 * buffer"). Stop it, as lwIP's own rule says. */
		if (pcb->persist_backoff && !pcb->unsent) {
			pcb->persist_backoff = 0;
			net_counters.tcp_persist_stopped++;
		}
	}
	sys_check_timeouts();
}

/* Two or more TCP connections are open, handshakes and closes included
 * (TIME_WAIT is not open): another client may send a request while one
 * waits for its reply. O(1): the list's first two entries. */
bool net_tcp_several_open(void)
{
	return tcp_active_pcbs && tcp_active_pcbs->next;
}
