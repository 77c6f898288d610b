/*
 * probe.c: read-only views of the socket layer's private state (egress list
 * membership, send-buffer fill, the pcb) that the invariant tests check,
 * through the layer's own private header (net/sock.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "net/sock.h"
#include "tests/unit/socket/harness.h"

static struct sock *probe_sock(int fd)
{
	int err;
	return sock_of(fd, &err);
}

struct tcp_pcb *probe_pcb(int fd)
{
	struct sock *s = probe_sock(fd);
	return s ? s->pcb : NULL;
}

bool probe_on_egress(int fd)
{
	struct sock *s = probe_sock(fd);
	return s && s->on_egress;
}

bool probe_on_egress_list(int fd)
{
	struct sock *s = probe_sock(fd);
	int n = 0;
	bool found = false;
	for (struct sock *e = sk.egress_head; e; e = e->egress_next, n++)
		found |= e == s;
	assert_int_equal(n, sk.egress_len);
	return found;
}

int probe_backlog(int fd)
{
	struct sock *s = probe_sock(fd);
	return s ? s->backlog : -1;
}

size_t probe_tx_len(int fd)
{
	struct sock *s = probe_sock(fd);
	return s ? s->tx_len : 0;
}

/* What egress_one() stops at: lwIP's send buffer full, or holding the peer's
 * window and two segments more (sock_egress_room), or its segment queue full.
 * Only then may a socket with bytes to send be off the list, because on_sent
 * lists it again when the peer acknowledges. */
static bool blocked_on_window(struct sock *s)
{
	return sock_egress_room(s->pcb) == 0 || tcp_sndqueuelen(s->pcb) >= TCP_SND_QUEUELEN - 1;
}

int probe_egress_strays(void)
{
	int strays = 0;
	for (struct sock *s = sk.all; s; s = s->all_next) {
		bool has_work = s->tx_len || (s->fin_wanted && !s->fin_sent);
		if (!has_work || !s->pcb || s->state != SS_CONNECTED || s->on_egress)
			continue;
		if (!blocked_on_window(s))
			strays++;
	}
	return strays;
}

uint64_t probe_sockets_open(void) { return net_socket_counters.sockets_open; }

unsigned probe_rx_bufs(int fd)
{
	struct sock *s = probe_sock(fd);
	assert_non_null(s);
	/* The count the layer keeps must be the chain's. */
	unsigned n = 0;
	for (struct pbuf *p = s->rx; p; p = p->next)
		n++;
	assert_int_equal(n, s->rx_bufs);
	return n;
}
