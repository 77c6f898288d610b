/*
 * socket.c: POSIX TCP sockets over lwIP's raw API, with Linux's semantics and
 * errno values.
 *
 * Each socket owns a receive queue (pbufs lwIP handed over, read in place) and
 * a send buffer. write() only copies into the send buffer and puts the socket
 * on the egress list; the egress pass, run when the network is polled, moves
 * listed sockets' bytes into lwIP and calls tcp_output once per socket. That
 * keeps lwIP's output calls in one place and lets writev() leave as one send.
 *
 * Readiness is computed from the socket's own fields: a listener from its
 * accept flag (raised by the accept callback), a connection from its queues.
 * Looking never marks a socket (SW_READ_NO_MARK). Blocking calls wait with
 * block_on(), which polls the network only when it has work
 * (SW_POLL_WHEN_DUE) and parks the CPU otherwise.
 *
 * The hot path of one keep-alive request: a frame arrives -> net_poll() ->
 * lwIP -> on_recv() queues the pbuf; poll() sees POLLIN; read() copies it out
 * and opens the window; writev() copies head and body into the send buffer and
 * lists the socket; the next poll turn runs egress_pass() -> tcp_write() +
 * tcp_output(): one segment.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "drivers/virtio/virtio.h"
#include "kernel/kernel.h"
#include "kernel/switches.h"
#include "lwip/tcp.h"
#include "net.h"
#include "net_internal.h"

#define SNDBUF_DEFAULT (16 * 1024)
#define SNDBUF_MIN     2048
#define SNDBUF_MAX     (256 * 1024)
#define BACKLOG_MAX    SOMAXCONN

enum sock_state {
	SS_NEW,        /* socket() */
	SS_LISTENING,  /* listen() */
	SS_CONNECTING, /* connect() sent a SYN */
	SS_CONNECTED,  /* data may flow */
	SS_CLOSED,     /* lwIP freed the pcb (reset, abort, both sides closed) */
};

struct sock {
	enum sock_state state;
	int type;                /* SOCK_STREAM */
	bool nonblock;           /* O_NONBLOCK */
	struct tcp_pcb *pcb;     /* NULL once lwIP has freed it */
	int error;               /* pending error (errno value) for the next call / SO_ERROR */
	ip_addr_t local_ip;      /* bind() address until the pcb exists */
	uint16_t local_port;
	bool reuseaddr, keepalive, nodelay;
	bool reset_on_close;     /* SO_LINGER on with a zero timeout: close() resets */

	/* Listener: connections lwIP accepted that accept() has not taken. */
	struct sock **pending;   /* ring of backlog slots; NULL slot = empty */
	int backlog;             /* its size */
	int pending_head;        /* oldest */
	int pending_count;
	bool accept_ready;       /* raised by on_accept, lowered when empty */

	/* Receive. */
	struct pbuf *rx;         /* unread data, a pbuf chain */
	uint16_t rx_off;         /* bytes of the first pbuf already read */
	size_t rx_len;           /* unread bytes */
	bool rx_eof;             /* the peer sent FIN */

	/* Send (deferred egress). */
	uint8_t *tx;             /* ring buffer of tx_cap bytes, allocated at first write */
	size_t tx_cap, tx_head, tx_len;
	bool fin_wanted;         /* shutdown(SHUT_WR) or close(): FIN once tx drains */
	bool fin_sent;
	bool closed_by_app;      /* close() ran: free once lwIP lets go */

	/* Egress list and the list of all sockets (the naive pass walks it). */
	struct sock *egress_next;
	bool on_egress;
	struct sock *all_next, *all_prev;
};

static struct {
	struct sock *egress_head, *egress_tail; /* sockets that may have something to send */
	struct sock *all;                       /* every socket */
	bool started;                           /* wait source registered */
} sk;

struct socket_counters net_socket_counters;
#define CNT net_socket_counters

/* ---- lists ----------------------------------------------------------------- */

/* Put s on the egress list (once). Anything that can give a socket work calls
 * this; a stale entry costs one look in the pass, never a lost send. */
static void mark_egress(struct sock *s)
{
	if (s->on_egress)
		return;
	s->on_egress = true;
	s->egress_next = NULL;
	if (sk.egress_tail)
		sk.egress_tail->egress_next = s;
	else
		sk.egress_head = s;
	sk.egress_tail = s;
	CNT.egress_marks++;
}

/* Naive counterpart of "reading is not marking": every access marks. */
static inline void touched(struct sock *s)
{
	if (!SW_READ_NO_MARK)
		mark_egress(s);
}

static void all_insert(struct sock *s)
{
	s->all_next = sk.all;
	s->all_prev = NULL;
	if (sk.all)
		sk.all->all_prev = s;
	sk.all = s;
}

static void all_remove(struct sock *s)
{
	if (s->all_prev)
		s->all_prev->all_next = s->all_next;
	else
		sk.all = s->all_next;
	if (s->all_next)
		s->all_next->all_prev = s->all_prev;
}

static void egress_remove(struct sock *s)
{
	if (!s->on_egress)
		return;
	struct sock **pp = &sk.egress_head, *prev = NULL;
	while (*pp && *pp != s) {
		prev = *pp;
		pp = &(*pp)->egress_next;
	}
	if (*pp)
		*pp = s->egress_next;
	if (sk.egress_tail == s)
		sk.egress_tail = prev;
	s->on_egress = false;
}

/* ---- socket objects ----------------------------------------------------------- */

static struct sock *sock_new(int type)
{
	struct sock *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->type = type;
	s->state = SS_NEW;
	s->tx_cap = SNDBUF_DEFAULT;
	s->nodelay = false;
	all_insert(s);
	CNT.sockets_open++;
	return s;
}

static void sock_free(struct sock *s)
{
	egress_remove(s);
	all_remove(s);
	if (s->rx)
		pbuf_free(s->rx);
	free(s->tx);
	free(s->pending);
	free(s);
	CNT.sockets_open--;
}

static void detach_pcb(struct sock *s)
{
	if (!s->pcb)
		return;
	tcp_arg(s->pcb, NULL);
	if (s->state != SS_LISTENING) {
		tcp_recv(s->pcb, NULL);
		tcp_sent(s->pcb, NULL);
		tcp_err(s->pcb, NULL);
	} else {
		tcp_accept(s->pcb, NULL);
	}
	s->pcb = NULL;
}

/* ---- lwIP callbacks: each records what happened, nothing more ------------------ */

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	struct sock *s = arg;
	(void)pcb;
	(void)err;
	if (!s || s->closed_by_app) {
		/* Nobody will read it: take it and open the window, so that when our
		 * own buffered output has drained, tcp_close() sends a FIN rather
		 * than a reset for unread data. */
		if (p) {
			tcp_recved(pcb, p->tot_len);
			pbuf_free(p);
		}
		return ERR_OK;
	}
	if (!p) {
		s->rx_eof = true;
		if (s->fin_sent) {
			/* Both FINs are out: lwIP moves the pcb to CLOSING or TIME_WAIT
			 * and frees it later without a callback, so let go of it now.
			 * What was received stays readable. */
			detach_pcb(s);
			s->state = SS_CLOSED;
		}
		return ERR_OK;
	}
	if (s->rx)
		pbuf_cat(s->rx, p);
	else
		s->rx = p;
	s->rx_len += p->tot_len;
	return ERR_OK;
}

/* The peer acknowledged data: room in lwIP's send buffer again. */
static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	struct sock *s = arg;
	(void)pcb;
	(void)len;
	if (s && (s->tx_len || (s->fin_wanted && !s->fin_sent)))
		mark_egress(s);
	return ERR_OK;
}

/* lwIP freed the pcb (reset, abort, timeout). */
static void on_err(void *arg, err_t err)
{
	struct sock *s = arg;
	if (!s)
		return;
	bool connecting = s->state == SS_CONNECTING;
	s->pcb = NULL;
	s->state = SS_CLOSED;
	if (err == ERR_RST)
		s->error = connecting ? ECONNREFUSED : ECONNRESET; /* a RST answering our SYN */
	else if (err == ERR_ABRT)
		s->error = ECONNABORTED;
	else if (err == ERR_TIMEOUT)
		s->error = ETIMEDOUT;
	else if (err != ERR_CLSD)
		s->error = ECONNRESET;
	CNT.resets++;
	if (s->closed_by_app)
		sock_free(s);
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
	struct sock *s = arg;
	(void)pcb;
	if (s) {
		s->state = err == ERR_OK ? SS_CONNECTED : SS_CLOSED;
		if (err != ERR_OK)
			s->error = ECONNREFUSED;
		mark_egress(s); /* data written before the handshake finished */
	}
	return ERR_OK;
}

static void setup_conn_pcb(struct sock *s, struct tcp_pcb *pcb)
{
	s->pcb = pcb;
	tcp_arg(pcb, s);
	tcp_recv(pcb, on_recv);
	tcp_sent(pcb, on_sent);
	tcp_err(pcb, on_err);
	if (s->nodelay)
		tcp_nagle_disable(pcb);
	if (s->keepalive)
		ip_set_option(pcb, SOF_KEEPALIVE);
}

static err_t on_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
	struct sock *l = arg;
	if (!l || err != ERR_OK || !newpcb)
		return ERR_VAL;
	if (l->pending_count == l->backlog) {
		CNT.backlog_overflows++;
		return ERR_MEM; /* lwIP aborts the connection: the client sees a reset */
	}
	struct sock *s = sock_new(SOCK_STREAM);
	if (!s) {
		CNT.accept_no_memory++;
		return ERR_MEM;
	}
	s->state = SS_CONNECTED;
	s->nodelay = l->nodelay; /* inherited, as on Linux */
	setup_conn_pcb(s, newpcb);
	l->pending[(l->pending_head + l->pending_count) % l->backlog] = s;
	l->pending_count++;
	l->accept_ready = true;
	CNT.accepted++;
	return ERR_OK;
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
 * socket's own ring: 500 slow readers each given a whole send buffer took
 * 14,500 segments and 10 MB of the heap, and lwIP's first-fit heap, walking
 * thousands of live blocks per allocation, spent seconds of egress on them
 * while other clients waited (measured, slowhttptest -X). The two segments
 * beyond the window keep data unsent in lwIP, so its persist timer and its
 * output on the next ACK carry on, and on_sent lists the socket again. */
static size_t egress_room(const struct tcp_pcb *pcb)
{
	size_t room = tcp_sndbuf(pcb);
	size_t queued = (u32_t)(pcb->snd_lbb - pcb->lastack); /* unacknowledged + unsent */
	size_t allowed = (size_t)pcb->snd_wnd + 2 * segment_size(pcb);
	size_t by_window = allowed > queued ? allowed - queued : 0;
	return room < by_window ? room : by_window;
}

/* Move s's bytes into lwIP and send. A socket that cannot go on (window or
 * memory exhausted) leaves the list; on_sent, or the retry above, lists it
 * again. */
static void egress_one(struct sock *s)
{
	struct tcp_pcb *pcb = s->pcb;
	bool queued = false;
	if (!pcb || s->state == SS_LISTENING || s->state == SS_CONNECTING)
		return;
	while (s->tx_len) {
		size_t room = egress_room(pcb);
		if (room == 0 || tcp_sndqueuelen(pcb) >= TCP_SND_QUEUELEN - 1) {
			/* Nothing can go before the peer acknowledges: on_sent lists the
			 * socket again then. Naive: stay listed and be looked at on every
			 * pass until then. */
			if (!SW_EGRESS_DEADLINES)
				mark_egress(s);
			break;
		}
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
			CNT.tcp_write_no_memory++;
			if (tcp_sndqueuelen(pcb) == 0)
				mark_egress(s);
			break;
		}
		if (e != ERR_OK) {
			s->error = EPIPE;
			s->tx_len = 0;
			break;
		}
		s->tx_head = (s->tx_head + piece) % s->tx_cap;
		s->tx_len -= piece;
		queued = true;
	}
	if (!s->tx_len && s->fin_wanted && !s->fin_sent && s->closed_by_app) {
		/* tcp_close() puts the FIN on the last data segment and sends both.
		 * It may also free the pcb before it returns (it resets a connection
		 * whose receive window is not whole): the pcb is not ours then. */
		detach_pcb(s);
		if (tcp_close(pcb) == ERR_OK) {
			sock_free(s); /* lwIP ends the pcb after the FIN */
			return;
		}
		setup_conn_pcb(s, pcb); /* no memory for the FIN now: again next poll */
		mark_egress(s);
	} else if (!s->tx_len && s->fin_wanted && !s->fin_sent) {
		if (tcp_shutdown(pcb, 0, 1) != ERR_OK)
			mark_egress(s); /* no memory for the FIN now: again next poll */
		else
			s->fin_sent = true;
	}
	if (queued) {
		tcp_output(pcb);
		CNT.outputs++;
		/* Data left unsent behind unacknowledged data with Nagle on waits for
		 * the peer's (possibly delayed) ACK: the stall writev-as-one-send and
		 * TCP_NODELAY avoid. */
		if (pcb->unsent && pcb->unacked && !tcp_nagle_disabled(pcb))
			CNT.nagle_holds++;
	}
}

/* Visit the listed sockets (or, naively, all of them and every listener's
 * pending slots) and dispatch the ones with something to send. */
static bool egress_pass(void)
{
	bool did = false;
	CNT.egress_passes++;
	if (SW_EGRESS_LIST) {
		struct sock *s = sk.egress_head;
		sk.egress_head = sk.egress_tail = NULL;
		while (s) {
			struct sock *next = s->egress_next;
			s->on_egress = false;
			CNT.sockets_visited++;
			CNT.dispatches++;
			egress_one(s);
			did = true;
			s = next;
		}
		return did;
	}
	for (struct sock *s = sk.all, *next; s; s = next) {
		next = s->all_next;
		CNT.sockets_visited++;
		s->on_egress = false;
		if (s->state == SS_LISTENING) {
			for (int i = 0; i < s->backlog; i++)
				CNT.sockets_visited++; /* the naive pass looks into every slot */
			continue;
		}
		if (s->tx_len || (s->fin_wanted && !s->fin_sent)) {
			CNT.dispatches++;
			egress_one(s);
			did = true;
		}
	}
	sk.egress_head = sk.egress_tail = NULL;
	return did;
}

/* ---- the wait source: the network plus our egress ---------------------------- */

static bool source_due(void)
{
	return sk.egress_head != NULL || net_work_pending();
}

static bool source_poll(void)
{
	bool did = net_poll();
	if (sk.egress_head || !SW_EGRESS_LIST) {
		uint64_t t0 = cpu_cycles();
		did |= egress_pass();
		stats_phase_add(PHASE_EGRESS, cpu_cycles() - t0);
	}
	return did;
}

static bool source_arm(void) { return vnet_rx_irq_enable(true) || sk.egress_head != NULL; }
static void source_disarm(void) { vnet_rx_irq_enable(false); }

static const struct wait_source net_source = {
	.due = source_due,
	.poll = source_poll,
	.next_deadline = net_next_deadline_ns,
	.arm = source_arm,
	.disarm = source_disarm,
	.wake = &vnet_wake,
};

/* The network starts with the first socket: images that never open one never
 * touch the NIC. */
static int net_start(void)
{
	if (sk.started)
		return 0;
	int r = net_init();
	if (r < 0)
		return -ENETDOWN;
	executor_set_source(&net_source);
	stats_register(net_socket_stats_print); /* printed before the layer's own report */
	sk.started = true;
	return 0;
}

/* ---- descriptor glue ----------------------------------------------------------- */

static const struct file_ops sock_ops;

static struct sock *sock_of(int fd, int *err)
{
	const struct file_ops *ops;
	void *obj;
	if (fd_lookup(fd, &ops, &obj) < 0) {
		*err = EBADF;
		return NULL;
	}
	if (ops != &sock_ops) {
		*err = ENOTSOCK;
		return NULL;
	}
	return obj;
}

#define GET_SOCK(fd)                          \
	int err_ = 0;                             \
	struct sock *s = sock_of((fd), &err_);    \
	if (!s) {                                 \
		errno = err_;                         \
		return -1;                            \
	}

static int fail(int e)
{
	errno = e;
	return -1;
}

/* A UDP descriptor's calls go to udp.c; r is 0/length or -errno. */
#define UDP_HANDOFF(fd, call)                        \
	do {                                             \
		struct udp_sock *u_ = udp_sock_of(fd);       \
		if (u_) {                                    \
			long r_ = (call);                        \
			return r_ < 0 ? fail((int)-r_) : r_;     \
		}                                            \
	} while (0)

/* Take and clear the pending error. */
static int take_error(struct sock *s)
{
	int e = s->error;
	s->error = 0;
	return e;
}

/* ---- readiness ------------------------------------------------------------------ */

static bool listener_ready(struct sock *s)
{
	if (SW_LISTENER_FLAG) {
		CNT.listener_checks++;
		return s->accept_ready;
	}
	CNT.listener_checks++;
	for (int i = 0; i < s->backlog; i++) {
		CNT.listener_slots_walked++;
		if (s->pending[i])
			return true;
	}
	return false;
}

static bool writable(struct sock *s)
{
	return s->state == SS_CONNECTED && s->tx_len < s->tx_cap && !s->fin_wanted;
}

static short sock_poll(void *obj, short events)
{
	struct sock *s = obj;
	short r = 0;
	touched(s);
	if (s->state == SS_LISTENING)
		return listener_ready(s) ? POLLIN : 0;
	if (s->state == SS_NEW)
		return POLLOUT | POLLHUP; /* never connected: what Linux says of a closed TCP socket */
	if (s->rx_len || s->rx_eof)
		r |= POLLIN;
	if (s->rx_eof)
		r |= POLLRDHUP;
	if (writable(s))
		r |= POLLOUT;
	if (s->error)
		r |= POLLERR;
	if (s->state == SS_CLOSED)
		r |= POLLHUP | POLLIN;
	(void)events;
	return r;
}

struct wait_for {
	struct sock *s;
	short events;
};

static bool sock_wait_ready(void *arg)
{
	struct wait_for *w = arg;
	return sock_poll(w->s, w->events) & (w->events | POLLERR | POLLHUP);
}

/* Wait until s is ready for `events` (blocking sockets). */
static void sock_wait(struct sock *s, short events)
{
	struct wait_for w = { s, events };
	block_on(sock_wait_ready, &w, UINT64_MAX);
}

/* ---- data --------------------------------------------------------------------- */

static long sock_read(void *obj, void *buf, size_t len)
{
	struct sock *s = obj;
	if (s->state == SS_LISTENING || s->state == SS_NEW)
		return -ENOTCONN;
	executor_poll(); /* let what already arrived land */
	while (!s->rx_len && !s->rx_eof && !s->error && s->state != SS_CLOSED) {
		if (s->nonblock)
			return -EAGAIN;
		sock_wait(s, POLLIN);
	}
	touched(s);
	if (!s->rx_len) {
		int e = take_error(s); /* a reset is reported once, then end of file */
		return e ? -e : 0;
	}
	size_t n = len < s->rx_len ? len : s->rx_len;
	size_t got = pbuf_copy_partial(s->rx, buf, (u16_t)(n > 0xffff ? 0xffff : n), s->rx_off);
	/* Drop the pbufs read completely. */
	size_t off = s->rx_off + got;
	while (s->rx && off >= s->rx->len) {
		struct pbuf *p = s->rx;
		off -= p->len;
		s->rx = p->next;
		if (s->rx)
			pbuf_ref(s->rx);
		pbuf_free(p);
	}
	s->rx_off = (uint16_t)off;
	s->rx_len -= got;
	if (s->pcb)
		tcp_recved(s->pcb, (u16_t)got); /* the window opens as the app reads */
	return (long)got;
}

/* Copy into the send buffer; returns bytes taken. */
static size_t tx_append(struct sock *s, const uint8_t *data, size_t len)
{
	size_t room = s->tx_cap - s->tx_len, n = len < room ? len : room;
	size_t tail = (s->tx_head + s->tx_len) % s->tx_cap;
	size_t first = s->tx_cap - tail < n ? s->tx_cap - tail : n;
	memcpy(s->tx + tail, data, first);
	memcpy(s->tx, data + first, n - first);
	s->tx_len += n;
	return n;
}

/* Why a socket cannot take data now, as an errno; 0 if it can. */
static int send_blocker(struct sock *s)
{
	if (s->error)
		return take_error(s) == ECONNRESET ? ECONNRESET : EPIPE;
	if (s->fin_wanted || s->state == SS_CLOSED)
		return EPIPE;
	if (s->state != SS_CONNECTED && s->state != SS_CONNECTING)
		return ENOTCONN;
	return 0;
}

/* The common body of write() and writev(): all pieces into the send buffer,
 * then one flush. Blocks (blocking sockets) until everything is taken. */
static long send_pieces(struct sock *s, const struct iovec *iov, int n)
{
	int e = send_blocker(s);
	if (e)
		return -e;
	if (!s->tx && !(s->tx = malloc(s->tx_cap)))
		return -ENOMEM;
	long total = 0;
	for (int i = 0; i < n; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;
		while (left) {
			size_t took = tx_append(s, p, left);
			p += took;
			left -= took;
			total += (long)took;
			if (took)
				mark_egress(s);
			if (!left)
				break;
			/* Buffer full: let egress drain it, then wait for room. */
			executor_poll();
			if (s->tx_len < s->tx_cap)
				continue;
			if (s->nonblock)
				return total ? total : -EAGAIN;
			sock_wait(s, POLLOUT);
			if ((e = send_blocker(s)))
				return total ? total : -e;
		}
	}
	executor_poll(); /* the flush: the egress pass sends what we queued */
	return total;
}

static long sock_write(void *obj, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	return send_pieces(obj, &iov, 1);
}

static long sock_writev(void *obj, const struct iovec *iov, int n)
{
	if (SW_WRITEV_ONE_SEND)
		return send_pieces(obj, iov, n);
	/* Naive: one send, and one flush, per piece. */
	long total = 0;
	for (int i = 0; i < n; i++) {
		long w = send_pieces(obj, &iov[i], 1);
		if (w < 0)
			return total ? total : w;
		total += w;
		if ((size_t)w < iov[i].iov_len)
			break;
	}
	return total;
}

/* Free what the app will never read and give the peer its window back. */
static void drop_unread(struct sock *s)
{
	if (!s->rx)
		return;
	if (s->pcb)
		tcp_recved(s->pcb, (u16_t)(s->rx_len > 0xffff ? 0xffff : s->rx_len));
	pbuf_free(s->rx);
	s->rx = NULL;
	s->rx_off = 0;
	s->rx_len = 0;
}

/* ---- close --------------------------------------------------------------------- */

static int sock_close(void *obj)
{
	struct sock *s = obj;
	if (s->state == SS_LISTENING) {
		/* Connections nobody accepted are reset, as Linux does. */
		for (int i = 0; i < s->pending_count; i++) {
			struct sock *c = s->pending[(s->pending_head + i) % s->backlog];
			if (c->pcb) {
				struct tcp_pcb *pcb = c->pcb;
				detach_pcb(c);
				tcp_abort(pcb);
			}
			sock_free(c);
		}
		if (s->pcb) {
			struct tcp_pcb *pcb = s->pcb;
			detach_pcb(s);
			tcp_close(pcb);
		}
		sock_free(s);
		return 0;
	}
	/* SO_LINGER with a zero timeout, as on Linux: a reset, nothing queued
	 * goes, and the pcb is free now (a server making room under load). */
	if (s->reset_on_close && s->state == SS_CONNECTED && s->pcb) {
		struct tcp_pcb *pcb = s->pcb;
		u32_t edge = pcb->lastack + pcb->snd_wnd;
		detach_pcb(s);
		/* lwIP resets at snd_nxt, which a zero-window probe moves one past
		 * what a peer with a closed window can take: such a peer drops the
		 * RST (RFC 5961) and keeps the connection (seen with slow readers).
		 * Reset at the window's edge, as Linux does (tcp_acceptable_seq). */
		if ((s32_t)(pcb->snd_nxt - edge) > 0)
			pcb->snd_nxt = edge;
		tcp_abort(pcb);
		sock_free(s);
		return 0;
	}
	/* Unread data is dropped (its window given back, so lwIP's close sends a
	 * FIN, not a reset); buffered output still goes, then the FIN. */
	drop_unread(s);
	/* Never connected, or shutdown(SHUT_WR) already sent the FIN: nothing
	 * of ours is left to go, lwIP can have the pcb now. */
	if (!s->pcb || s->state == SS_NEW || s->fin_sent) {
		if (s->pcb) {
			struct tcp_pcb *pcb = s->pcb;
			detach_pcb(s);
			tcp_close(pcb);
		}
		sock_free(s);
		return 0;
	}
	s->closed_by_app = true;
	s->fin_wanted = true;
	mark_egress(s);
	executor_poll();
	return 0;
}

static int sock_fstat(void *obj, struct stat *st)
{
	(void)obj;
	st->st_mode = S_IFSOCK | 0777;
	return 0;
}

static int sock_get_flags(void *obj) { return ((struct sock *)obj)->nonblock ? O_NONBLOCK : 0; }

static int sock_set_flags(void *obj, int flags)
{
	((struct sock *)obj)->nonblock = (flags & O_NONBLOCK) != 0;
	return 0;
}

static int sock_ioctl(void *obj, unsigned long req, void *arg)
{
	struct sock *s = obj;
	if (!arg)
		return -EFAULT;
	if (req == FIONBIO) {
		s->nonblock = *(int *)arg != 0;
		return 0;
	}
	if (req == FIONREAD) {
		*(int *)arg = (int)s->rx_len;
		return 0;
	}
	return -ENOTTY;
}

static const struct file_ops sock_ops = {
	.read = sock_read,
	.write = sock_write,
	.writev = sock_writev,
	.close = sock_close,
	.fstat = sock_fstat,
	.poll = sock_poll,
	.get_flags = sock_get_flags,
	.set_flags = sock_set_flags,
	.ioctl = sock_ioctl,
};

/* ---- the socket calls ----------------------------------------------------------- */

static int install(struct sock *s)
{
	int fd = fd_install(&sock_ops, s);
	if (fd < 0) {
		if (s->pcb) {
			struct tcp_pcb *pcb = s->pcb;
			detach_pcb(s);
			tcp_abort(pcb);
		}
		sock_free(s);
		return fail(-fd);
	}
	return fd;
}

int socket(int domain, int type, int protocol)
{
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (domain != AF_INET)
		return fail(EAFNOSUPPORT);
	if (base != SOCK_STREAM && base != SOCK_DGRAM)
		return fail(EINVAL);
	if (protocol != 0 && protocol != (base == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP))
		return fail(EPROTONOSUPPORT);
	int r = net_start();
	if (r < 0)
		return fail(-r);
	if (base == SOCK_DGRAM) {
		int fd = udp_sock_new((type & SOCK_NONBLOCK) != 0);
		return fd < 0 ? fail(-fd) : fd;
	}
	struct sock *s = sock_new(base);
	if (!s)
		return fail(ENOMEM);
	s->nonblock = (type & SOCK_NONBLOCK) != 0;
	return install(s);
}

static int sockaddr_in_of(const struct sockaddr *addr, socklen_t len, const struct sockaddr_in **sin)
{
	if (!addr)
		return EFAULT;
	if (len < sizeof(struct sockaddr_in))
		return EINVAL;
	*sin = (const struct sockaddr_in *)addr;
	if ((*sin)->sin_family != AF_INET)
		return EAFNOSUPPORT;
	return 0;
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_in *sin = NULL;
	int e = sockaddr_in_of(addr, len, &sin);
	if (e && udp_sock_of(fd))
		return fail(e);
	UDP_HANDOFF(fd, udp_sock_bind(u_, sin));
	GET_SOCK(fd);
	if (e)
		return fail(e);
	if (s->state != SS_NEW || s->local_port)
		return fail(EINVAL);
	ip_addr_set_ip4_u32(&s->local_ip, sin->sin_addr.s_addr);
	s->local_port = ntohs(sin->sin_port);
	/* Find out now whether the port is taken, as Linux does. */
	struct tcp_pcb *pcb = tcp_new();
	if (!pcb)
		return fail(ENOMEM);
	if (s->reuseaddr)
		ip_set_option(pcb, SOF_REUSEADDR);
	err_t err = tcp_bind(pcb, &s->local_ip, s->local_port);
	if (err != ERR_OK) {
		tcp_abort(pcb);
		s->local_port = 0;
		return fail(err == ERR_USE ? EADDRINUSE : EINVAL);
	}
	s->pcb = pcb;
	tcp_arg(pcb, s);
	tcp_err(pcb, on_err);
	return 0;
}

int listen(int fd, int backlog)
{
	GET_SOCK(fd);
	if (s->state == SS_LISTENING)
		return 0;
	if (s->state != SS_NEW)
		return fail(EINVAL);
	if (backlog < 1)
		backlog = 1;
	if (backlog > BACKLOG_MAX)
		backlog = BACKLOG_MAX;
	if (!s->pcb && bind(fd, (const struct sockaddr *)&(struct sockaddr_in){ .sin_family = AF_INET },
			    sizeof(struct sockaddr_in)) < 0)
		return -1;
	s->pending = calloc((size_t)backlog, sizeof *s->pending);
	if (!s->pending)
		return fail(ENOMEM);
	tcp_err(s->pcb, NULL);
	err_t err;
	struct tcp_pcb *lpcb = tcp_listen_with_backlog_and_err(s->pcb, 255, &err);
	if (!lpcb) {
		/* The bound pcb is still ours. ERR_USE: with SO_REUSEADDR, bind let
		 * a second socket have the port, but only one may listen on it. */
		tcp_err(s->pcb, on_err);
		free(s->pending);
		s->pending = NULL;
		return fail(err == ERR_USE ? EADDRINUSE : ENOMEM);
	}
	s->pcb = lpcb;
	s->backlog = backlog;
	s->state = SS_LISTENING;
	tcp_arg(lpcb, s);
	tcp_accept(lpcb, on_accept);
	return 0;
}

static void fill_sockaddr(struct sockaddr *addr, socklen_t *len, const ip_addr_t *ip, uint16_t port)
{
	if (!addr || !len)
		return;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = ip_addr_get_ip4_u32(ip) };
	socklen_t n = *len < sizeof sin ? *len : sizeof sin;
	memcpy(addr, &sin, n);
	*len = sizeof sin;
}

static bool accept_ready_cb(void *arg)
{
	return listener_ready(arg);
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	GET_SOCK(fd);
	if (s->state != SS_LISTENING)
		return fail(EINVAL);
	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return fail(EINVAL);
	executor_poll();
	touched(s);
	while (!listener_ready(s)) {
		if (s->nonblock)
			return fail(EAGAIN);
		block_on(accept_ready_cb, s, UINT64_MAX);
	}
	struct sock *c = s->pending[s->pending_head];
	s->pending[s->pending_head] = NULL;
	s->pending_head = (s->pending_head + 1) % s->backlog;
	s->pending_count--;
	s->accept_ready = s->pending_count > 0; /* stays up while connections wait */
	c->nonblock = (flags & SOCK_NONBLOCK) != 0;
	if (c->pcb)
		fill_sockaddr(addr, len, &c->pcb->remote_ip, c->pcb->remote_port);
	else
		fill_sockaddr(addr, len, IP4_ADDR_ANY, 0);
	return install(c);
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return accept4(fd, addr, len, 0);
}

static bool connect_done(void *arg)
{
	struct sock *s = arg;
	return s->state != SS_CONNECTING;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_in *sin = NULL;
	int e = sockaddr_in_of(addr, len, &sin);
	if (udp_sock_of(fd) && addr && len >= sizeof(sa_family_t) && addr->sa_family == AF_UNSPEC)
		e = 0, sin = (const struct sockaddr_in *)addr; /* dissolve the association */
	if (e && udp_sock_of(fd))
		return fail(e);
	UDP_HANDOFF(fd, udp_sock_connect(u_, sin));
	GET_SOCK(fd);
	if (e)
		return fail(e);
	if (s->state == SS_CONNECTING)
		return fail(EALREADY);
	if (s->state == SS_CONNECTED)
		return fail(EISCONN);
	if (s->state != SS_NEW)
		return fail(EINVAL);
	if (!s->pcb) {
		s->pcb = tcp_new();
		if (!s->pcb)
			return fail(ENOMEM);
	}
	setup_conn_pcb(s, s->pcb);
	ip_addr_t ip;
	ip_addr_set_ip4_u32(&ip, sin->sin_addr.s_addr);
	err_t err = tcp_connect(s->pcb, &ip, ntohs(sin->sin_port), on_connected);
	if (err != ERR_OK)
		return fail(err == ERR_RTE ? ENETUNREACH : err == ERR_USE ? EADDRINUSE : ENOMEM);
	s->state = SS_CONNECTING;
	executor_poll();
	if (s->nonblock && s->state == SS_CONNECTING)
		return fail(EINPROGRESS);
	block_on(connect_done, s, UINT64_MAX);
	if (s->state != SS_CONNECTED)
		return fail(take_error(s) ? : ECONNREFUSED);
	return 0;
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	UDP_HANDOFF(fd, udp_sock_recvfrom(u_, buf, len, flags, NULL, NULL));
	GET_SOCK(fd);
	if (flags & MSG_PEEK) {
		executor_poll();
		if (!s->rx_len)
			return s->rx_eof ? 0 : fail(EAGAIN);
		size_t n = len < s->rx_len ? len : s->rx_len;
		return (ssize_t)pbuf_copy_partial(s->rx, buf, (u16_t)(n > 0xffff ? 0xffff : n), s->rx_off);
	}
	bool nb = s->nonblock;
	if (flags & MSG_DONTWAIT)
		s->nonblock = true;
	long r = sock_read(s, buf, len);
	s->nonblock = nb;
	return r < 0 ? fail((int)-r) : r;
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen)
{
	UDP_HANDOFF(fd, udp_sock_recvfrom(u_, buf, len, flags, from, fromlen));
	ssize_t r = recv(fd, buf, len, flags);
	if (r >= 0 && from && fromlen)
		getpeername(fd, from, fromlen);
	return r;
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	UDP_HANDOFF(fd, udp_sock_sendto(u_, buf, len, NULL, 0));
	GET_SOCK(fd);
	bool nb = s->nonblock;
	if (flags & MSG_DONTWAIT)
		s->nonblock = true;
	long r = sock_write(s, buf, len);
	s->nonblock = nb;
	return r < 0 ? fail((int)-r) : r;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen)
{
	UDP_HANDOFF(fd, udp_sock_sendto(u_, buf, len, to, tolen));
	if (to) {
		(void)tolen;
		return fail(EISCONN);
	}
	return send(fd, buf, len, flags);
}

int shutdown(int fd, int how)
{
	GET_SOCK(fd);
	if (how < SHUT_RD || how > SHUT_RDWR)
		return fail(EINVAL);
	if (s->state != SS_CONNECTED)
		return fail(ENOTCONN);
	if (how != SHUT_WR) {
		/* Nothing more is delivered; what is queued is dropped. */
		s->rx_eof = true;
		drop_unread(s);
	}
	if (how != SHUT_RD && !s->fin_wanted) {
		s->fin_wanted = true;
		mark_egress(s);
		executor_poll();
	}
	return 0;
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	if (!addr || !len)
		return fail(EFAULT);
	struct udp_sock *u = udp_sock_of(fd);
	if (u) {
		const ip_addr_t *ip;
		uint16_t port;
		udp_sock_name(u, false, &ip, &port);
		fill_sockaddr(addr, len, ip, port);
		return 0;
	}
	GET_SOCK(fd);
	if (s->pcb)
		fill_sockaddr(addr, len, &s->pcb->local_ip, s->pcb->local_port);
	else
		fill_sockaddr(addr, len, &s->local_ip, s->local_port);
	return 0;
}

int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	if (!addr || !len)
		return fail(EFAULT);
	struct udp_sock *u = udp_sock_of(fd);
	if (u) {
		if (!udp_sock_connected(u))
			return fail(ENOTCONN);
		const ip_addr_t *ip;
		uint16_t port;
		udp_sock_name(u, true, &ip, &port);
		fill_sockaddr(addr, len, ip, port);
		return 0;
	}
	GET_SOCK(fd);
	if (!s->pcb || s->state != SS_CONNECTED)
		return fail(ENOTCONN);
	fill_sockaddr(addr, len, &s->pcb->remote_ip, s->pcb->remote_port);
	return 0;
}

static int int_opt(const void *val, socklen_t len, int *out)
{
	if (!val)
		return EFAULT;
	if (len < sizeof(int))
		return EINVAL;
	memcpy(out, val, sizeof *out);
	return 0;
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	GET_SOCK(fd);
	int v, e;
	if (level == SOL_SOCKET && name == SO_LINGER) {
		struct linger lg;
		if (!val)
			return fail(EFAULT);
		if (len < sizeof lg)
			return fail(EINVAL);
		memcpy(&lg, val, sizeof lg);
		/* Only the reset: a close that waits for its data would block. */
		if (lg.l_onoff && lg.l_linger != 0)
			return fail(EINVAL);
		s->reset_on_close = lg.l_onoff != 0;
		return 0;
	}
	if ((e = int_opt(val, len, &v)))
		return fail(e);
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_REUSEADDR:
			s->reuseaddr = v != 0;
			if (s->pcb) {
				if (v)
					ip_set_option(s->pcb, SOF_REUSEADDR);
				else
					ip_reset_option(s->pcb, SOF_REUSEADDR);
			}
			return 0;
		case SO_KEEPALIVE:
			s->keepalive = v != 0;
			if (s->pcb && s->state != SS_LISTENING) {
				if (v)
					ip_set_option(s->pcb, SOF_KEEPALIVE);
				else
					ip_reset_option(s->pcb, SOF_KEEPALIVE);
			}
			return 0;
		case SO_SNDBUF:
			if (s->tx_len)
				return 0; /* resizing a non-empty ring is not worth it */
			v = v < SNDBUF_MIN ? SNDBUF_MIN : v > SNDBUF_MAX ? SNDBUF_MAX : v;
			free(s->tx);
			s->tx = NULL;
			s->tx_head = 0;
			s->tx_cap = (size_t)v;
			return 0;
		case SO_RCVBUF:
			return 0; /* the receive window is lwIP's TCP_WND */
		}
		return fail(ENOPROTOOPT);
	}
	if (level == IPPROTO_TCP && name == TCP_NODELAY) {
		/* TCP_NODELAY on means Nagle off. */
		s->nodelay = v != 0;
		if (s->pcb && s->state != SS_LISTENING) {
			if (v)
				tcp_nagle_disable(s->pcb);
			else
				tcp_nagle_enable(s->pcb);
		}
		return 0;
	}
	return fail(ENOPROTOOPT);
}

int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	GET_SOCK(fd);
	int v;
	if (!val || !len)
		return fail(EFAULT);
	if (level == SOL_SOCKET && name == SO_LINGER) {
		struct linger lg = { s->reset_on_close, 0 };
		if (*len < sizeof lg)
			return fail(EINVAL);
		memcpy(val, &lg, sizeof lg);
		*len = sizeof lg;
		return 0;
	}
	if (*len < sizeof(int))
		return fail(EINVAL);
	if (level == SOL_SOCKET && name == SO_ERROR)
		v = take_error(s);
	else if (level == SOL_SOCKET && name == SO_REUSEADDR)
		v = s->reuseaddr;
	else if (level == SOL_SOCKET && name == SO_KEEPALIVE)
		v = s->keepalive;
	else if (level == SOL_SOCKET && name == SO_TYPE)
		v = s->type;
	else if (level == SOL_SOCKET && name == SO_SNDBUF)
		v = (int)s->tx_cap;
	else if (level == SOL_SOCKET && name == SO_RCVBUF)
		v = TCP_WND;
	else if (level == IPPROTO_TCP && name == TCP_NODELAY)
		v = s->pcb && s->state != SS_LISTENING ? tcp_nagle_disabled(s->pcb) != 0 : s->nodelay;
	else
		return fail(ENOPROTOOPT);
	memcpy(val, &v, sizeof v);
	*len = sizeof v;
	return 0;
}

/* ---- counters ----------------------------------------------------------------- */

void net_socket_stats_print(void)
{
	kprintf("sockets: open %lu, accepted %lu, backlog overflows %lu, resets %lu; egress passes %lu, "
		"sockets visited %lu, dispatches %lu, marks %lu, outputs %lu, tcp_write ENOMEM %lu; "
		"listener checks %lu, slots walked %lu; nagle holds %lu\n",
		CNT.sockets_open, CNT.accepted, CNT.backlog_overflows, CNT.resets, CNT.egress_passes,
		CNT.sockets_visited, CNT.dispatches, CNT.egress_marks, CNT.outputs, CNT.tcp_write_no_memory,
		CNT.listener_checks, CNT.listener_slots_walked, CNT.nagle_holds);
}
