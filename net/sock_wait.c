/*
 * sock_wait.c: readiness and waiting. Readiness is computed from the socket's
 * own fields: a listener from its accept flag (raised by the accept callback),
 * a connection from its queues. Looking never marks a socket
 * (SW_READ_NO_MARK). Blocking calls wait with block_on(), which polls the
 * network only when it has work (SW_POLL_WHEN_DUE) and parks the CPU
 * otherwise; the network and our egress pass are its wait source.
 */
#include <errno.h>
#include <poll.h>
#include "drivers/virtio/virtio.h"
#include "net.h"
#include "net_entry.h"
#include "sock.h"

/* ---- readiness ------------------------------------------------------------------ */

/* Naive: walk the listener's backlog sockets and read each one's state, as a
 * socket set without a per-listener flag must; the walk reads through the
 * same accessor as every other look (it marks them when reading marks). */
static bool backlog_walk(struct sock *l)
{
	for (int i = 0; i < l->backlog; i++) {
		struct sock *slot = l->slots[i];
		net_socket_counters.listener_slots_walked++;
		sock_touched(slot);
		if (slot->state == SS_SLOT_READY)
			return true;
	}
	return false;
}

bool sock_listener_ready(struct sock *s)
{
	net_socket_counters.listener_checks++;
	if (SW_LISTENER_FLAG)
		return s->accept_ready;
	return backlog_walk(s);
}

/*
 * The network core (SW_SMP_NET_CORE) hands every socket call to CPU 1, and
 * a non-blocking read or accept that finds nothing is most of what a
 * poll loop makes (the accept loop's last accept, a read after the data).
 * These two answer EAGAIN on the app's CPU from the fields CPU 1 writes,
 * read once each, without a call. A stale "nothing" is the answer the call
 * would have given a moment earlier (the app's next poll(), run on CPU 1,
 * sees the data); a stale "something" hands the call over, which answers
 * properly. The socket cannot go away meanwhile: the app holds its
 * descriptor, and nonblock is written only by the app's own calls.
 */
bool sock_read_would_block(const struct sock *s)
{
	return s->nonblock && __atomic_load_n(&s->state, __ATOMIC_RELAXED) == SS_CONNECTED &&
	       !__atomic_load_n(&s->rx_len, __ATOMIC_RELAXED) && !__atomic_load_n(&s->rx_eof, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&s->error, __ATOMIC_RELAXED);
}

bool sock_accept_would_block(const struct sock *s)
{
	return SW_LISTENER_FLAG && s->nonblock && __atomic_load_n(&s->state, __ATOMIC_RELAXED) == SS_LISTENING &&
	       !__atomic_load_n(&s->accept_ready, __ATOMIC_RELAXED);
}

static bool writable(struct sock *s)
{
	return s->state == SS_CONNECTED && s->tx_len < s->tx_cap && !s->fin_wanted;
}

short sock_poll(void *obj, short events)
{
	struct sock *s = obj;
	short r = 0;
	sock_touched(s);
	if (s->state == SS_LISTENING)
		return sock_listener_ready(s) ? POLLIN : 0;
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

int sock_wait(struct sock *s, short events)
{
	struct wait_for w = { s, events };
	return net_block_on(sock_wait_ready, &w, UINT64_MAX, false);
}

/* ---- the wait source: the network plus our egress ---------------------------- */

static bool source_due(void)
{
	return sk.egress_head != NULL || net_work_pending();
}

/* The network's poll and our egress pass are one bracket of frames for the
 * device (vnet_tx_batch_begin): when two or more sockets are listed, or two
 * or more frames wait (net_poll's inner bracket), what both send is
 * published together, with one notify decision. */
static bool source_poll(void)
{
	vnet_tx_batch_begin(sk.egress_head && sk.egress_head->egress_next);
	bool did = net_poll();
	if (sk.egress_head || !SW_EGRESS_LIST) {
		uint64_t t0 = cpu_cycles();
		did |= sock_egress_pass();
		stats_phase_add(PHASE_EGRESS, cpu_cycles() - t0);
	}
	vnet_tx_batch_end();
	return did;
}

static bool source_device_ready(void) { return vnet_rx_pending(); }
static bool source_arm(void) { return vnet_rx_irq_enable(true) || sk.egress_head != NULL; }
static void source_disarm(void) { vnet_rx_irq_enable(false); }
static bool source_drained(void) { return sk.egress_head == NULL && vnet_tx_idle(); }

static const struct wait_source net_source = {
	.due = source_due,
	.device_ready = source_device_ready,
	.poll = source_poll,
	.next_deadline = net_next_deadline_ns,
	.arm = source_arm,
	.disarm = source_disarm,
	.wake = &vnet_wake,
	.drained = source_drained,
};

/* The network starts with the first socket: images that never open one never
 * touch the NIC. */
int sock_net_start(void)
{
	if (sk.started)
		return 0;
	stats_register(trace_print); /* printed after the network's own reports */
	int r = net_init();
	if (r < 0)
		return -ENETDOWN;
	net_loop_start(&net_source); /* the executor's source, here or on a CPU of its own */
	stats_register(net_socket_stats_print); /* printed before the layer's own report */
	sk.started = true;
	return 0;
}
