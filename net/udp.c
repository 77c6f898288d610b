/*
 * udp.c: UDP datagram sockets over lwIP's raw UDP API.
 *
 * Each socket keeps a bounded queue of received datagrams (the pbuf lwIP
 * handed over and where it came from); a datagram that finds the queue full is
 * dropped and counted, as a kernel drops on a full receive buffer. Sending
 * copies the datagram into a pbuf and hands it to lwIP at once: a datagram has
 * no stream to coalesce, so it gains nothing from the TCP egress list.
 *
 * socket.c's calls (bind, connect, sendto, recvfrom, ...) hand UDP
 * descriptors to the udp_sock_* functions here.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "kernel/kernel.h"
#include "lwip/udp.h"
#include "net_internal.h"
#include "net_entry.h"

#define UDP_QUEUE 64          /* datagrams a socket holds before dropping */
#define UDP_MAX_PAYLOAD 65507 /* what fits one IPv4 datagram */

struct dgram {
	struct pbuf *p;   /* the payload */
	ip_addr_t from;   /* sender */
	uint16_t port;    /* sender's port */
};

struct udp_sock {
	struct udp_pcb *pcb;      /* lwIP's end, created by socket() */
	bool nonblock;            /* O_NONBLOCK */
	bool bound;               /* bind() ran, or a send bound it implicitly */
	bool connected;           /* connect() set a default peer */
	struct dgram queue[UDP_QUEUE]; /* received, oldest at head */
	int head, count;
};

struct udp_counters net_udp_counters;

/* lwIP delivers a datagram: queue it, or drop it when the queue is full. */
static void on_udp_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
	struct udp_sock *u = arg;
	(void)pcb;
	if (u->count == UDP_QUEUE) {
		net_udp_counters.drops_queue_full++;
		pbuf_free(p);
		return;
	}
	u->queue[(u->head + u->count) % UDP_QUEUE] = (struct dgram){ p, *addr, port };
	u->count++;
	net_udp_counters.received++;
}

static int bind_any(struct udp_sock *u)
{
	if (u->bound)
		return 0;
	if (udp_bind(u->pcb, IP4_ADDR_ANY, 0) != ERR_OK) /* an ephemeral port */
		return -EADDRINUSE;
	u->bound = true;
	return 0;
}

/* ---- descriptor operations ---------------------------------------------------- */

static bool has_datagram(void *arg)
{
	return ((struct udp_sock *)arg)->count > 0;
}

long udp_sock_recvfrom(struct udp_sock *u, void *buf, size_t len, int flags, struct sockaddr *from,
		       socklen_t *fromlen)
{
	executor_poll();
	while (!u->count) {
		if (u->nonblock || (flags & MSG_DONTWAIT))
			return -EAGAIN;
		if (net_block_on(has_datagram, u, UINT64_MAX, false) < 0)
			return -EINTR; /* on the network core, for a signal: shipped again */
	}
	struct dgram *d = &u->queue[u->head];
	size_t n = len < d->p->tot_len ? len : d->p->tot_len;
	pbuf_copy_partial(d->p, buf, (u16_t)n, 0);
	if (from && fromlen) {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(d->port),
					   .sin_addr.s_addr = ip_addr_get_ip4_u32(&d->from) };
		socklen_t c = *fromlen < sizeof sin ? *fromlen : sizeof sin;
		memcpy(from, &sin, c);
		*fromlen = sizeof sin;
	}
	if (!(flags & MSG_PEEK)) {
		/* The rest of a datagram longer than the buffer is lost, as on Linux. */
		pbuf_free(d->p);
		u->head = (u->head + 1) % UDP_QUEUE;
		u->count--;
	}
	return (long)n;
}

long udp_sock_sendto(struct udp_sock *u, const void *buf, size_t len, const struct sockaddr *to, socklen_t tolen)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)to;
	if (to) {
		if (tolen < sizeof *sin)
			return -EINVAL;
		if (sin->sin_family != AF_INET)
			return -EAFNOSUPPORT;
	} else if (!u->connected) {
		return -EDESTADDRREQ;
	}
	if (len > UDP_MAX_PAYLOAD)
		return -EMSGSIZE;
	int r = bind_any(u);
	if (r < 0)
		return r;
	struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)len, PBUF_RAM);
	if (!p)
		return -ENOBUFS;
	pbuf_take(p, buf, (u16_t)len);
	err_t err;
	if (to) {
		ip_addr_t ip;
		ip_addr_set_ip4_u32(&ip, sin->sin_addr.s_addr);
		err = udp_sendto(u->pcb, p, &ip, ntohs(sin->sin_port));
	} else {
		err = udp_send(u->pcb, p);
	}
	pbuf_free(p);
	if (err == ERR_RTE)
		return -ENETUNREACH;
	if (err != ERR_OK)
		return -ENOBUFS;
	net_udp_counters.sent++;
	return (long)len;
}

static long udp_file_read(void *obj, void *buf, size_t len)
{
	return udp_sock_recvfrom(obj, buf, len, 0, NULL, NULL);
}

static long udp_file_write(void *obj, const void *buf, size_t len)
{
	return udp_sock_sendto(obj, buf, len, NULL, 0);
}

static int udp_file_close(void *obj)
{
	struct udp_sock *u = obj;
	udp_remove(u->pcb);
	for (; u->count; u->count--, u->head = (u->head + 1) % UDP_QUEUE)
		pbuf_free(u->queue[u->head].p);
	free(u);
	net_udp_counters.open--;
	return 0;
}

static int udp_file_fstat(void *obj, struct stat *st)
{
	(void)obj;
	st->st_mode = S_IFSOCK | 0777;
	return 0;
}

static short udp_file_poll(void *obj, short events)
{
	struct udp_sock *u = obj;
	(void)events;
	return (short)(POLLOUT | (u->count ? POLLIN : 0));
}

static int udp_file_get_flags(void *obj) { return ((struct udp_sock *)obj)->nonblock ? O_NONBLOCK : 0; }

static int udp_file_set_flags(void *obj, int flags)
{
	((struct udp_sock *)obj)->nonblock = (flags & O_NONBLOCK) != 0;
	return 0;
}

static int udp_file_ioctl(void *obj, unsigned long req, void *arg)
{
	struct udp_sock *u = obj;
	if (!arg)
		return -EFAULT;
	if (req == FIONBIO) {
		u->nonblock = *(int *)arg != 0;
		return 0;
	}
	if (req == FIONREAD) { /* Linux: the size of the next datagram */
		*(int *)arg = u->count ? u->queue[u->head].p->tot_len : 0;
		return 0;
	}
	return -ENOTTY;
}

#if SMP_DESIGN
/* The same operations, each entered as the SMP design says (net_entry.h):
 * under the global lock, or handed to the network core. */
static long udp_file_read_entry(const long *a)
{
	return udp_file_read((void *)a[0], (void *)a[1], (size_t)a[2]);
}

static long udp_file_read_entered(void *obj, void *buf, size_t len)
{
	const long a[] = { (long)obj, (long)buf, (long)len };
	return net_run(udp_file_read_entry, a);
}

static long udp_file_write_entry(const long *a)
{
	return udp_file_write((void *)a[0], (const void *)a[1], (size_t)a[2]);
}

static long udp_file_write_entered(void *obj, const void *buf, size_t len)
{
	const long a[] = { (long)obj, (long)buf, (long)len };
	return net_run(udp_file_write_entry, a);
}

static long udp_file_close_entry(const long *a)
{
	return udp_file_close((void *)a[0]);
}

static int udp_file_close_entered(void *obj)
{
	const long a[] = { (long)obj };
	return (int)net_run(udp_file_close_entry, a);
}

static long udp_file_fstat_entry(const long *a)
{
	return udp_file_fstat((void *)a[0], (struct stat *)a[1]);
}

static int udp_file_fstat_entered(void *obj, struct stat *st)
{
	const long a[] = { (long)obj, (long)st };
	return (int)net_run(udp_file_fstat_entry, a);
}

static long udp_file_poll_entry(const long *a)
{
	return udp_file_poll((void *)a[0], (short)a[1]);
}

static short udp_file_poll_entered(void *obj, short events)
{
	const long a[] = { (long)obj, (long)events };
	return (short)net_run(udp_file_poll_entry, a);
}

static long udp_file_get_flags_entry(const long *a)
{
	return udp_file_get_flags((void *)a[0]);
}

static int udp_file_get_flags_entered(void *obj)
{
	const long a[] = { (long)obj };
	return (int)net_run(udp_file_get_flags_entry, a);
}

static long udp_file_set_flags_entry(const long *a)
{
	return udp_file_set_flags((void *)a[0], (int)a[1]);
}

static int udp_file_set_flags_entered(void *obj, int flags)
{
	const long a[] = { (long)obj, (long)flags };
	return (int)net_run(udp_file_set_flags_entry, a);
}

static long udp_file_ioctl_entry(const long *a)
{
	return udp_file_ioctl((void *)a[0], (unsigned long)a[1], (void *)a[2]);
}

static int udp_file_ioctl_entered(void *obj, unsigned long req, void *arg)
{
	const long a[] = { (long)obj, (long)req, (long)arg };
	return (int)net_run(udp_file_ioctl_entry, a);
}

static const struct file_ops udp_ops = {
	.read = udp_file_read_entered,
	.write = udp_file_write_entered,
	.close = udp_file_close_entered,
	.fstat = udp_file_fstat_entered,
	.poll = udp_file_poll_entered,
	.get_flags = udp_file_get_flags_entered,
	.set_flags = udp_file_set_flags_entered,
	.ioctl = udp_file_ioctl_entered,
};
#else
static const struct file_ops udp_ops = {
	.read = udp_file_read,
	.write = udp_file_write,
	.close = udp_file_close,
	.fstat = udp_file_fstat,
	.poll = udp_file_poll,
	.get_flags = udp_file_get_flags,
	.set_flags = udp_file_set_flags,
	.ioctl = udp_file_ioctl,
};
#endif

/* ---- the calls socket.c hands over ---------------------------------------------- */

int udp_sock_new(bool nonblock)
{
	struct udp_sock *u = calloc(1, sizeof *u);
	if (!u)
		return -ENOMEM;
	u->pcb = udp_new();
	if (!u->pcb) {
		free(u);
		return -ENOMEM;
	}
	u->nonblock = nonblock;
	udp_recv(u->pcb, on_udp_recv, u);
	int fd = fd_install(&udp_ops, u);
	if (fd < 0) {
		udp_remove(u->pcb);
		free(u);
	} else {
		net_udp_counters.open++;
	}
	return fd;
}

struct udp_sock *udp_sock_of(int fd)
{
	const struct file_ops *ops;
	void *obj;
	if (fd_lookup(fd, &ops, &obj) < 0 || ops != &udp_ops)
		return NULL;
	return obj;
}

int udp_sock_bind(struct udp_sock *u, const struct sockaddr_in *sin)
{
	if (u->bound)
		return -EINVAL;
	ip_addr_t ip;
	ip_addr_set_ip4_u32(&ip, sin->sin_addr.s_addr);
	err_t err = udp_bind(u->pcb, &ip, ntohs(sin->sin_port));
	if (err != ERR_OK)
		return err == ERR_USE ? -EADDRINUSE : -EINVAL;
	u->bound = true;
	return 0;
}

int udp_sock_connect(struct udp_sock *u, const struct sockaddr_in *sin)
{
	if (sin->sin_family == AF_UNSPEC) { /* dissolve the association */
		udp_disconnect(u->pcb);
		u->connected = false;
		return 0;
	}
	int r = bind_any(u);
	if (r < 0)
		return r;
	ip_addr_t ip;
	ip_addr_set_ip4_u32(&ip, sin->sin_addr.s_addr);
	if (udp_connect(u->pcb, &ip, ntohs(sin->sin_port)) != ERR_OK)
		return -EINVAL;
	u->connected = true;
	return 0;
}

void udp_sock_name(struct udp_sock *u, bool peer, const ip_addr_t **ip, uint16_t *port)
{
	*ip = peer ? &u->pcb->remote_ip : &u->pcb->local_ip;
	*port = peer ? u->pcb->remote_port : u->pcb->local_port;
}

bool udp_sock_connected(struct udp_sock *u) { return u->connected; }
