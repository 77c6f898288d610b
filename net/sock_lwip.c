/*
 * sock_lwip.c: socket objects and the callbacks lwIP calls on them. Each
 * callback records what happened (data queued, room to send, the pcb gone, a
 * connection accepted) and lists the socket when that gives it work; nothing
 * here sends.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "sock.h"

/* ---- socket objects ----------------------------------------------------------- */

/* The layer's global state (sock.h): the egress list, every socket. */
struct sock_table sk;

struct sock *sock_new(int type)
{
	struct sock *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->type = type;
	s->state = SS_NEW;
	s->tx_cap = SNDBUF_DEFAULT;
	s->nodelay = false;
	sock_all_insert(s);
	net_socket_counters.sockets_open++;
	return s;
}

struct sock *sock_new_slot(void)
{
	struct sock *s = sock_new(SOCK_STREAM);
	if (s)
		s->state = SS_SLOT;
	return s;
}

void sock_free(struct sock *s)
{
	sock_egress_remove(s);
	sock_all_remove(s);
	if (s->rx)
		pbuf_free(s->rx);
	free(s->tx);
	free(s->pending);
	free(s->slots);
	free(s);
	net_socket_counters.sockets_open--;
}

void sock_detach_pcb(struct sock *s)
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
	(void)err;
	if (!s || s->closed_by_app) {
		/* Nobody will read it: take it and open the window, so that when our
		 * own buffered output has drained, tcp_close() sends a FIN rather
		 * than a reset for unread data. */
		if (p) {
			sock_window_open(pcb, sock_chain_bytes(p));
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
			sock_detach_pcb(s);
			s->state = SS_CLOSED;
		}
		return ERR_OK;
	}
	trace_mark(TP_QUEUE);
	return sock_rx_queue(s, p);
}

/* The peer acknowledged data: room in lwIP's send buffer again. */
static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	struct sock *s = arg;
	(void)pcb;
	(void)len;
	if (s && (s->tx_len || (s->fin_wanted && !s->fin_sent)))
		sock_mark_egress(s);
	return ERR_OK;
}

/* lwIP freed the pcb (reset, abort, timeout). */
void sock_on_err(void *arg, err_t err)
{
	struct sock *s = arg;
	if (!s)
		return;
	bool connecting = s->state == SS_CONNECTING;
	struct socket_counters *c = &net_socket_counters;
	c->last_reset.err = err;
	c->last_reset.state = s->state;
	c->last_reset.closed = s->closed_by_app;
	c->last_reset.fin_sent = s->fin_sent;
	c->last_reset.peer_fin = s->rx_eof;
	c->last_reset.tx_len = (uint32_t)s->tx_len;
	c->last_reset.rx_len = (uint32_t)s->rx_len;
	/* lwIP calls back on a peer's RST before freeing the pcb, on an
	 * abort after: only the former may be read. */
	c->last_reset.peer_port = err == ERR_RST && s->pcb ? s->pcb->remote_port : 0;
	c->resets_rst += err == ERR_RST;
	c->resets_aborted += err == ERR_ABRT;
	c->resets_after_close += s->closed_by_app;
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
	net_socket_counters.resets++;
	if (s->closed_by_app)
		sock_free(s);
}

err_t sock_on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
	struct sock *s = arg;
	(void)pcb;
	if (s) {
		s->state = err == ERR_OK ? SS_CONNECTED : SS_CLOSED;
		if (err != ERR_OK)
			s->error = ECONNREFUSED;
		sock_mark_egress(s); /* data written before the handshake finished */
	}
	return ERR_OK;
}

/* TCP_NODELAY on means Nagle off. Naive (SW_NODELAY 0): the option value is
 * taken for "Nagle enabled", the write-up's inversion. */
void sock_apply_nodelay(struct tcp_pcb *pcb, bool nodelay)
{
	bool nagle = SW_NODELAY ? !nodelay : nodelay;
	if (nagle)
		tcp_nagle_enable(pcb);
	else
		tcp_nagle_disable(pcb);
}

bool sock_read_nodelay(const struct tcp_pcb *pcb)
{
	bool nagle = !tcp_nagle_disabled(pcb);
	return SW_NODELAY ? !nagle : nagle;
}

void sock_setup_conn_pcb(struct sock *s, struct tcp_pcb *pcb)
{
	s->pcb = pcb;
	tcp_arg(pcb, s);
	tcp_recv(pcb, on_recv);
	tcp_sent(pcb, on_sent);
	tcp_err(pcb, sock_on_err);
	if (s->nodelay)
		sock_apply_nodelay(pcb, true);
	if (s->keepalive)
		ip_set_option(pcb, SOF_KEEPALIVE);
}

bool sock_listener_full(const void *listener_arg)
{
	const struct sock *l = listener_arg;
	return l && l->state == SS_LISTENING && l->pending_count == l->backlog;
}

/* A connection takes the next backlog entry; its slot's socket says so. With
 * every entry taken the handshake does not complete (tcp_hooks.c drops the
 * segment that would complete it), so the reset below is a backstop. */
err_t sock_on_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
	struct sock *l = arg;
	if (!l || err != ERR_OK || !newpcb)
		return ERR_VAL;
	if (l->pending_count == l->backlog) {
		net_socket_counters.backlog_overflows++;
		return ERR_MEM; /* lwIP aborts the connection: the client sees a reset */
	}
	struct sock *s = sock_new(SOCK_STREAM);
	if (!s) {
		net_socket_counters.accept_no_memory++;
		return ERR_MEM;
	}
	s->state = SS_CONNECTED;
	s->nodelay = l->nodelay; /* inherited, as on Linux */
	sock_setup_conn_pcb(s, newpcb);
	int entry = (l->pending_head + l->pending_count) % l->backlog;
	KCHECK(!l->pending[entry] && l->slots[entry]->state == SS_SLOT);
	l->pending[entry] = s;
	l->slots[entry]->state = SS_SLOT_READY;
	l->pending_count++;
	l->accept_ready = true;
	net_socket_counters.accepted++;
	return ERR_OK;
}
