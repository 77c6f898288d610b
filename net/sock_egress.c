/*
 * sock_egress.c: deferred egress. write() only copies into a socket's send
 * buffer and lists the socket; the egress pass, run when the network is
 * polled, moves listed sockets' bytes into lwIP and calls tcp_output once per
 * socket. That keeps lwIP's output calls in one place and lets writev()
 * leave as one send. Also the list of every socket, which the naive pass
 * walks instead of the egress list.
 */
#include <errno.h>
#include "sock.h"

struct socket_counters net_socket_counters;

/* ---- lists ----------------------------------------------------------------- */

/* Put s on the egress list (once), at its tail. Anything that can give a
 * socket work calls this; a stale entry costs one look in the pass, never a
 * lost send. */
void sock_mark_egress(struct sock *s)
{
	if (s->on_egress)
		return;
	s->on_egress = true;
	s->egress_next = NULL;
	s->egress_prev = sk.egress_tail;
	if (sk.egress_tail)
		sk.egress_tail->egress_next = s;
	else
		sk.egress_head = s;
	sk.egress_tail = s;
	sk.egress_len++;
	KASSERT(sk.egress_head && sk.egress_len > 0);
	net_socket_counters.egress_marks++;
}

void sock_egress_remove(struct sock *s)
{
	if (!s->on_egress)
		return;
	/* on_egress means linked in: both neighbours (or the ends) point at s. */
	KCHECK(s->egress_prev ? s->egress_prev->egress_next == s : sk.egress_head == s);
	KCHECK(s->egress_next ? s->egress_next->egress_prev == s : sk.egress_tail == s);
	if (s->egress_prev)
		s->egress_prev->egress_next = s->egress_next;
	else
		sk.egress_head = s->egress_next;
	if (s->egress_next)
		s->egress_next->egress_prev = s->egress_prev;
	else
		sk.egress_tail = s->egress_prev;
	s->egress_next = s->egress_prev = NULL;
	s->on_egress = false;
	sk.egress_len--;
	KASSERT(sk.egress_len >= 0 && (sk.egress_len == 0) == (sk.egress_head == NULL));
}

void sock_all_insert(struct sock *s)
{
	s->all_next = sk.all;
	s->all_prev = NULL;
	if (sk.all)
		sk.all->all_prev = s;
	sk.all = s;
}

void sock_all_remove(struct sock *s)
{
	if (s->all_prev)
		s->all_prev->all_next = s->all_next;
	else
		sk.all = s->all_next;
	if (s->all_next)
		s->all_next->all_prev = s->all_prev;
}

/* ---- egress ------------------------------------------------------------------ */

/* The most one segment of pcb's carries: what tcp_write cuts pieces into. */
static size_t segment_size(const struct tcp_pcb *pcb)
{
	size_t half_window = pcb->snd_wnd_max / 2;
	size_t mss = pcb->mss < half_window ? pcb->mss : half_window;
	return mss ? mss : 1;
}

/* How much more of s's bytes lwIP should hold now: what its send buffer has
 * room for, but no more than the peer's window lets go plus two segments. A
 * peer that reads slowly (a small window) so holds little of lwIP's heap and
 * segments, which every connection shares, while the rest waits in the
 * socket's own ring. Slow readers each given a whole send buffer would
 * fill the heap with thousands of live blocks, and lwIP's first-fit heap
 * walks them on every allocation while other clients wait
 * (docs/hardening.md, "Memory bounds"). The two segments
 * beyond the window keep data unsent in lwIP, so its persist timer and its
 * output on the next ACK carry on, and on_sent lists the socket again. */
size_t sock_egress_room(const struct tcp_pcb *pcb)
{
	size_t room = pcb->snd_buf; /* tcp_sndbuf() would cut it to 16 bits */
	size_t queued = (u32_t)(pcb->snd_lbb - pcb->lastack); /* unacknowledged + unsent */
	size_t allowed = (size_t)pcb->snd_wnd + 2 * segment_size(pcb);
	size_t by_window = allowed > queued ? allowed - queued : 0;
	return room < by_window ? room : by_window;
}

/* Whether s has bytes or a FIN to move into lwIP now. */
static bool has_work(const struct sock *s)
{
	return s->tx_len || (s->fin_wanted && !s->fin_sent);
}

/* Whether lwIP holds a timer for s's connection: unacknowledged or unsent
 * data (retransmission, window probe), a delayed ACK, keep-alive. The naive
 * deadlines treat such a socket as due at every pass (SW_EGRESS_DEADLINES). */
static bool has_deadline(const struct sock *s)
{
	const struct tcp_pcb *pcb = s->pcb;
	if (!pcb || s->state != SS_CONNECTED)
		return false;
	return pcb->unacked || pcb->unsent || (pcb->flags & TF_ACK_DELAY) || pcb->persist_backoff ||
	       ip_get_option(pcb, SOF_KEEPALIVE);
}

/* Move s's bytes into lwIP and send; with `force`, call tcp_output even when
 * nothing new was queued (a naive dispatch of a socket with a deadline). A
 * socket that cannot go on (window or memory exhausted) leaves the list;
 * on_sent, or the retry below, lists it again. Returns false when s was freed
 * (its close completed). */
static bool egress_one(struct sock *s, bool force)
{
	struct tcp_pcb *pcb = s->pcb;
	bool queued = false;
	if (!pcb || s->state == SS_LISTENING || s->state == SS_CONNECTING)
		return true;
	trace_mark(TP_EGRESS);
	while (s->tx_len) {
		size_t room = sock_egress_room(pcb);
		if (room == 0 || tcp_sndqueuelen(pcb) >= TCP_SND_QUEUELEN - 1)
			break; /* nothing can go before the peer acknowledges: on_sent lists s again */
		size_t piece = s->tx_cap - s->tx_head;
		if (piece > s->tx_len)
			piece = s->tx_len;
		if (piece > room)
			piece = room;
		if (piece > 0xffff)
			piece = 0xffff;
		u8_t more = piece < s->tx_len ? TCP_WRITE_FLAG_MORE : 0;
		err_t e = tcp_write(pcb, s->tx + s->tx_head, (u16_t)piece, TCP_WRITE_FLAG_COPY | more);
		/* A peer with a small MSS or window makes lwIP cut small segments,
		 * and a large piece may need more of them than its queue holds
		 * (TCP_SND_QUEUELEN): then all of it is refused. Smaller pieces. */
		while (e == ERR_MEM && piece > segment_size(pcb)) {
			piece /= 2;
			more = TCP_WRITE_FLAG_MORE;
			e = tcp_write(pcb, s->tx + s->tx_head, (u16_t)piece, TCP_WRITE_FLAG_COPY | more);
		}
		if (e == ERR_MEM) {
			/* Out of segments or pbufs. With nothing in flight no on_sent
			 * will come: stay listed and try again at the next poll. */
			net_socket_counters.tcp_write_no_memory++;
			if (tcp_sndqueuelen(pcb) == 0)
				sock_mark_egress(s);
			break;
		}
		if (e != ERR_OK) {
			s->error = EPIPE;
			s->tx_len = 0;
			break;
		}
		net_counters.copied_tx_to_segments += piece; /* TCP_WRITE_FLAG_COPY */
		s->tx_head = (s->tx_head + piece) % s->tx_cap;
		s->tx_len -= piece;
		queued = true;
	}
	if (!s->tx_len && s->fin_wanted && !s->fin_sent && s->closed_by_app) {
		/* tcp_close() puts the FIN on the last data segment and sends both.
		 * It may also free the pcb before it returns (it resets a connection
		 * whose receive window is not whole): the pcb is not ours then. */
		sock_detach_pcb(s);
		if (tcp_close(pcb) == ERR_OK) {
			sock_free(s); /* lwIP ends the pcb after the FIN */
			return false;
		}
		sock_setup_conn_pcb(s, pcb); /* no memory for the FIN now: again next poll */
		sock_mark_egress(s);
	} else if (!s->tx_len && s->fin_wanted && !s->fin_sent) {
		if (tcp_shutdown(pcb, 0, 1) != ERR_OK)
			sock_mark_egress(s); /* no memory for the FIN now: again next poll */
		else
			s->fin_sent = true;
	}
	if ((queued || force) && s->pcb) {
		trace_mark(TP_OUTPUT);
		tcp_output(pcb);
		net_socket_counters.outputs++;
		/* Data left unsent behind unacknowledged data with Nagle on waits for
		 * the peer's (possibly delayed) ACK: the stall writev-as-one-send and
		 * TCP_NODELAY avoid. */
		if (pcb->unsent && pcb->unacked && !tcp_nagle_disabled(pcb))
			net_socket_counters.nagle_holds++;
	}
	return true;
}

/* One socket the pass looks at: a visit reads its state; a dispatch moves its
 * bytes (egress_one). With naive deadlines a connection lwIP holds a timer
 * for is dispatched too (tcp_output) and stays listed. True when bytes or a
 * FIN moved: a dispatch for a deadline alone is work, not progress. */
static bool visit(struct sock *s)
{
	net_socket_counters.sockets_visited++;
	bool work = has_work(s);
	bool deadline = !SW_EGRESS_DEADLINES && has_deadline(s);
	if (!work && !deadline)
		return false;
	net_socket_counters.dispatches++;
	if (egress_one(s, deadline) && !SW_EGRESS_DEADLINES && has_deadline(s))
		sock_mark_egress(s);
	return work;
}

/* Visit the listed sockets, or, naively, every socket (a listener's backlog
 * sockets included: they are sockets too). Sockets listed during the pass
 * wait for the next one: the pass takes only those listed when it began. */
bool sock_egress_pass(void)
{
	bool did = false;
	net_socket_counters.egress_passes++;
	if (SW_EGRESS_LIST) {
		for (int n = sk.egress_len; n > 0 && sk.egress_head; n--) {
			struct sock *s = sk.egress_head;
			sock_egress_remove(s);
			did |= visit(s);
		}
		return did;
	}
	while (sk.egress_head) /* the list only says the network is due */
		sock_egress_remove(sk.egress_head);
	for (struct sock *s = sk.all, *next; s; s = next) {
		next = s->all_next;
		did |= visit(s);
	}
	return did;
}
