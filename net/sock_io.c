/*
 * sock_io.c: a TCP socket's descriptor operations: read (copied out of the
 * pbufs lwIP handed over, the window opened as the app reads), write and
 * writev (copied into the send buffer, the socket listed: the egress pass of
 * the app's next call into the network sends it), close, and the small ones
 * (fstat, flags, ioctl).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "net_entry.h"
#include "sock.h"

/* ---- descriptor glue ----------------------------------------------------------- */

struct sock *sock_of(int fd, int *err)
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

int sock_take_error(struct sock *s)
{
	int e = s->error;
	s->error = 0;
	return e;
}

/* ---- data --------------------------------------------------------------------- */

long sock_read(void *obj, void *buf, size_t len)
{
	struct sock *s = obj;
	if (s->state == SS_LISTENING || s->state == SS_NEW)
		return -ENOTCONN;
	executor_poll(); /* let what already arrived land */
	while (!s->rx_len && !s->rx_eof && !s->error && s->state != SS_CLOSED) {
		if (s->nonblock)
			return -EAGAIN;
		if (sock_wait(s, POLLIN) < 0)
			return -EINTR; /* on the network core, for a signal: shipped again (handoff.h) */
	}
	sock_touched(s);
	if (!s->rx_len) {
		int e = sock_take_error(s); /* a reset is reported once, then end of file */
		return e ? -e : 0;
	}
	return (long)sock_rx_take(s, buf, len);
}

/* Copy into the send buffer; returns bytes taken. */
static size_t tx_append(struct sock *s, const uint8_t *data, size_t len)
{
	size_t room = s->tx_cap - s->tx_len, n = len < room ? len : room;
	size_t tail = (s->tx_head + s->tx_len) % s->tx_cap;
	size_t first = s->tx_cap - tail < n ? s->tx_cap - tail : n;
	net_copy(s->tx + tail, data, first);
	net_copy(s->tx, data + first, n - first);
	net_counters.copied_tx_from_app += n;
	s->tx_len += n;
	return n;
}

/* ---- a send buffer that grows ------------------------------------------------- */

/* A socket's send buffer starts small (SNDBUF_DEFAULT): thousands of
 * connections each write a short answer. A bulk sender then fills it at
 * once and waits, and each wait moves no more than the buffer into lwIP, so
 * that is what leaves per round trip, in as many small frames. So a full
 * buffer doubles (up to SNDBUF_MAX, as Linux grows a send buffer with the
 * connection's window) when lwIP could take all of it right now: the peer's
 * window and lwIP's send buffer have room for it. A reader that stops
 * reading shuts its window and stops the growth where it stands. A socket
 * whose size the application set (SO_SNDBUF) never grows, nor one on a
 * machine short of memory. */
static bool tx_should_grow(const struct sock *s)
{
	if (!SNDBUF_GROWS || s->tx_cap_set || s->tx_cap >= SNDBUF_MAX || s->tx_len < s->tx_cap || !s->pcb ||
	    s->state != SS_CONNECTED || sock_egress_room(s->pcb) < s->tx_cap)
		return false;
	return 2 * s->tx_cap * 16 <= mem_heap_room(); /* leave most of it to others */
}

/* Double s's full ring, its bytes in order from the start; false (and the
 * ring as it was) when out of memory. */
static bool tx_grow(struct sock *s)
{
	size_t cap = 2 * s->tx_cap;
	uint8_t *tx = malloc(cap);
	if (!tx)
		return false;
	size_t first = s->tx_cap - s->tx_head < s->tx_len ? s->tx_cap - s->tx_head : s->tx_len;
	memcpy(tx, s->tx + s->tx_head, first);
	memcpy(tx + first, s->tx, s->tx_len - first);
	free(s->tx);
	s->tx = tx;
	s->tx_cap = cap;
	s->tx_head = 0;
	net_socket_counters.tx_grown++;
	return true;
}

/* Why a socket cannot take data now, as an errno; 0 if it can. */
static int send_blocker(struct sock *s)
{
	if (s->error)
		return sock_take_error(s) == ECONNRESET ? ECONNRESET : EPIPE;
	if (s->fin_wanted || s->state == SS_CLOSED)
		return EPIPE;
	if (s->state != SS_CONNECTED && s->state != SS_CONNECTING)
		return ENOTCONN;
	return 0;
}

/* The common body of write() and writev(): all pieces into the send buffer,
 * the socket listed for egress. Blocks (blocking sockets) until everything is
 * taken. With `flush`, the egress pass runs before the call returns (the
 * naive writev's output per piece); without, it runs at the caller's next
 * call into the network, which every wait, poll(), read(), close() and
 * exit() makes before anything else: a close right after the write then puts
 * its FIN on the write's last segment (egress_one), one frame, not two. */
static long send_pieces(struct sock *s, const struct iovec *iov, int n, bool flush)
{
	trace_mark(TP_WRITEV);
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
				sock_mark_egress(s);
			if (!left)
				break;
			if (tx_should_grow(s) && tx_grow(s))
				continue;
			/* Buffer full: let egress drain it, then wait for room. */
			executor_poll();
			if (s->tx_len < s->tx_cap)
				continue;
			if (s->nonblock)
				return total ? total : -EAGAIN;
			if (sock_wait(s, POLLOUT) < 0)
				return total ? total : -EINTR; /* as for a signal on Linux */
			if ((e = send_blocker(s)))
				return total ? total : -e;
		}
	}
	if (flush)
		executor_poll();
	return total;
}

long sock_write(void *obj, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	return send_pieces(obj, &iov, 1, !SW_WRITEV_ONE_SEND);
}

static long sock_writev(void *obj, const struct iovec *iov, int n)
{
	if (SW_WRITEV_ONE_SEND)
		return send_pieces(obj, iov, n, false);
	/* Naive: one send, and one flush, per piece. */
	long total = 0;
	for (int i = 0; i < n; i++) {
		long w = send_pieces(obj, &iov[i], 1, true);
		if (w < 0)
			return total ? total : w;
		total += w;
		if ((size_t)w < iov[i].iov_len)
			break;
	}
	return total;
}

/* ---- close --------------------------------------------------------------------- */

/* Hand s's pcb, if it still has one, to lwIP's close and free s. */
static int release(struct sock *s)
{
	if (s->pcb) {
		struct tcp_pcb *pcb = s->pcb;
		sock_detach_pcb(s);
		tcp_close(pcb);
	}
	sock_free(s);
	return 0;
}

static int sock_close(void *obj)
{
	struct sock *s = obj;
	if (s->state == SS_LISTENING) {
		/* Connections nobody accepted are reset, as Linux does; the
		 * backlog's slot sockets go with the listener. */
		for (int i = 0; i < s->backlog; i++)
			sock_free(s->slots[i]);
		for (int i = 0; i < s->backlog; i++) {
			struct sock *c = s->pending[i];
			if (!c)
				continue;
			if (c->pcb) {
				struct tcp_pcb *pcb = c->pcb;
				sock_detach_pcb(c);
				tcp_abort(pcb);
			}
			sock_free(c);
		}
		return release(s);
	}
	/* SO_LINGER with a zero timeout, as on Linux: a reset, nothing queued
	 * goes, and the pcb is free now (a server making room under load). */
	if (s->reset_on_close && s->state == SS_CONNECTED && s->pcb) {
		struct tcp_pcb *pcb = s->pcb;
		u32_t edge = pcb->lastack + pcb->snd_wnd;
		sock_detach_pcb(s);
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
	sock_drop_unread(s);
	/* Never connected, or shutdown(SHUT_WR) already sent the FIN: nothing
	 * of ours is left to go, lwIP can have the pcb now. */
	if (!s->pcb || s->state == SS_NEW || s->fin_sent)
		return release(s);
	s->closed_by_app = true;
	s->fin_wanted = true;
	sock_mark_egress(s);
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

#if SMP_DESIGN
/* The same operations, each entered as the SMP design says (net_entry.h):
 * under the global lock, or handed to the network core. */
static long sock_read_entry(const long *a)
{
	return sock_read((void *)a[0], (void *)a[1], (size_t)a[2]);
}

static long sock_read_entered(void *obj, void *buf, size_t len)
{
	if (SW_SMP_NET_CORE && handoff_serving() && sock_read_would_block(obj)) {
		net_socket_counters.would_block_here++;
		return -EAGAIN;
	}
	const long a[] = { (long)obj, (long)buf, (long)len };
	return net_run(sock_read_entry, a);
}

static long sock_write_entry(const long *a)
{
	return sock_write((void *)a[0], (const void *)a[1], (size_t)a[2]);
}

static long sock_write_entered(void *obj, const void *buf, size_t len)
{
	const long a[] = { (long)obj, (long)buf, (long)len };
	return net_run(sock_write_entry, a);
}

static long sock_writev_entry(const long *a)
{
	return sock_writev((void *)a[0], (const struct iovec *)a[1], (int)a[2]);
}

static long sock_writev_entered(void *obj, const struct iovec *iov, int n)
{
	const long a[] = { (long)obj, (long)iov, (long)n };
	return net_run(sock_writev_entry, a);
}

static long sock_close_entry(const long *a)
{
	return sock_close((void *)a[0]);
}

static int sock_close_entered(void *obj)
{
	const long a[] = { (long)obj };
	return (int)net_run(sock_close_entry, a);
}

static long sock_fstat_entry(const long *a)
{
	return sock_fstat((void *)a[0], (struct stat *)a[1]);
}

static int sock_fstat_entered(void *obj, struct stat *st)
{
	const long a[] = { (long)obj, (long)st };
	return (int)net_run(sock_fstat_entry, a);
}

static long sock_poll_entry(const long *a)
{
	return sock_poll((void *)a[0], (short)a[1]);
}

static short sock_poll_entered(void *obj, short events)
{
	const long a[] = { (long)obj, (long)events };
	return (short)net_run(sock_poll_entry, a);
}

#if !SW_SMP_NET_CORE
static long sock_get_flags_entry(const long *a)
{
	return sock_get_flags((void *)a[0]);
}

static int sock_get_flags_entered(void *obj)
{
	const long a[] = { (long)obj };
	return (int)net_run(sock_get_flags_entry, a);
}

static long sock_set_flags_entry(const long *a)
{
	return sock_set_flags((void *)a[0], (int)a[1]);
}

static int sock_set_flags_entered(void *obj, int flags)
{
	const long a[] = { (long)obj, (long)flags };
	return (int)net_run(sock_set_flags_entry, a);
}
#endif

static long sock_ioctl_entry(const long *a)
{
	return sock_ioctl((void *)a[0], (unsigned long)a[1], (void *)a[2]);
}

static int sock_ioctl_entered(void *obj, unsigned long req, void *arg)
{
	const long a[] = { (long)obj, (long)req, (long)arg };
	return (int)net_run(sock_ioctl_entry, a);
}

const struct file_ops sock_ops = {
	.read = sock_read_entered,
	.write = sock_write_entered,
	.writev = sock_writev_entered,
	.close = sock_close_entered,
	.fstat = sock_fstat_entered,
	.poll = sock_poll_entered,
#if SW_SMP_NET_CORE
	/* nonblock is written and read only by the app's own calls: its own. */
	.get_flags = sock_get_flags,
	.set_flags = sock_set_flags,
#else
	.get_flags = sock_get_flags_entered,
	.set_flags = sock_set_flags_entered,
#endif
	.ioctl = sock_ioctl_entered,
};
#else
const struct file_ops sock_ops = {
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
#endif

