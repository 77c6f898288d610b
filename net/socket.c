/*
 * socket.c: POSIX TCP sockets over lwIP's raw API, with Linux's semantics and
 * errno values: the calls themselves (socket, bind, listen, accept, connect,
 * recv/send and friends, shutdown). Names and options are sock_opt.c's. UDP
 * descriptors are handed to udp.c; the rest of the TCP layer is in
 * net/sock_*.c (sock.h says which file holds what).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "net_entry.h"
#include "sock.h"

/* The TCP socket behind fd, or NULL with errno set (EBADF or ENOTSOCK). */
struct sock *sock_tcp_or_errno(int fd)
{
	int e = 0;
	struct sock *s = sock_of(fd, &e);
	if (!s)
		errno = e;
	return s;
}

/* A UDP call's result (0/length or -errno) as the POSIX call returns it. */
static ssize_t udp_result(long r)
{
	return r < 0 ? sock_fail((int)-r) : r;
}

/* ---- the socket calls ----------------------------------------------------------- */

static int install(struct sock *s)
{
	int fd = fd_install(&sock_ops, s);
	if (fd < 0) {
		if (s->pcb) {
			struct tcp_pcb *pcb = s->pcb;
			sock_detach_pcb(s);
			tcp_abort(pcb);
		}
		sock_free(s);
		return sock_fail(-fd);
	}
	return fd;
}

static int socket_call(int domain, int type, int protocol)
{
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (domain != AF_INET)
		return sock_fail(EAFNOSUPPORT);
	if (base != SOCK_STREAM && base != SOCK_DGRAM)
		return sock_fail(EINVAL);
	if (protocol != 0 && protocol != (base == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP))
		return sock_fail(EPROTONOSUPPORT);
	int r = sock_net_start();
	if (r < 0)
		return sock_fail(-r);
	if (base == SOCK_DGRAM) {
		int fd = udp_sock_new((type & SOCK_NONBLOCK) != 0);
		return fd < 0 ? sock_fail(-fd) : fd;
	}
	struct sock *s = sock_new(base);
	if (!s)
		return sock_fail(ENOMEM);
	s->nonblock = (type & SOCK_NONBLOCK) != 0;
	return install(s);
}

static long socket_entry(const long *a)
{
	return socket_call((int)a[0], (int)a[1], (int)a[2]);
}

int socket(int domain, int type, int protocol)
{
	const long a[] = { (long)domain, (long)type, (long)protocol };
	return (int)net_run(socket_entry, a);
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

static int bind_call(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_in *sin = NULL;
	int e = sockaddr_in_of(addr, len, &sin);
	struct udp_sock *u = udp_sock_of(fd);
	if (u)
		return e ? sock_fail(e) : udp_result(udp_sock_bind(u, sin));
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	if (e)
		return sock_fail(e);
	if (s->state != SS_NEW || s->local_port)
		return sock_fail(EINVAL);
	ip_addr_set_ip4_u32(&s->local_ip, sin->sin_addr.s_addr);
	s->local_port = ntohs(sin->sin_port);
	/* Find out now whether the port is taken, as Linux does. */
	struct tcp_pcb *pcb = tcp_new();
	if (!pcb)
		return sock_fail(ENOMEM);
	if (s->reuseaddr)
		ip_set_option(pcb, SOF_REUSEADDR);
	err_t err = tcp_bind(pcb, &s->local_ip, s->local_port);
	if (err != ERR_OK) {
		tcp_abort(pcb);
		s->local_port = 0;
		return sock_fail(err == ERR_USE ? EADDRINUSE : EINVAL);
	}
	s->pcb = pcb;
	tcp_arg(pcb, s);
	tcp_err(pcb, sock_on_err);
	return 0;
}

static long bind_entry(const long *a)
{
	return bind_call((int)a[0], (const struct sockaddr *)a[1], (socklen_t)a[2]);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	const long a[] = { (long)fd, (long)addr, (long)len };
	return (int)net_run(bind_entry, a);
}

/* Undo a listen() that failed: its first n slot sockets (none holds a
 * connection yet) and the backlog's arrays. */
static void free_backlog(struct sock *s, int n)
{
	for (int i = 0; i < n; i++)
		sock_free(s->slots[i]);
	free(s->slots);
	free(s->pending);
	s->slots = s->pending = NULL;
}

/* boot_time: the guest's own boot time, first instruction to the first
 * listen, said once (make bench-boot reads the line). */
static void report_first_listen(void)
{
	static bool reported;

	if (reported || !kopt_flag(KOPT_BOOT_TIME))
		return;
	reported = true;
	kprintf("kernel: listening %lu ns after the first instruction\n", (unsigned long)clock_ns());
}

/* Every backlog entry gets its socket object now, as a socket set with a
 * listen backlog has them (sock.h: the naive scans read them). */
static int listen_call(int fd, int backlog)
{
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	if (s->state == SS_LISTENING)
		return 0;
	if (s->state != SS_NEW)
		return sock_fail(EINVAL);
	if (backlog < 1)
		backlog = 1;
	if (backlog > BACKLOG_MAX)
		backlog = BACKLOG_MAX;
	if (!s->pcb && bind(fd, (const struct sockaddr *)&(struct sockaddr_in){ .sin_family = AF_INET },
			    sizeof(struct sockaddr_in)) < 0)
		return -1;
	s->pending = calloc((size_t)backlog, sizeof *s->pending);
	s->slots = calloc((size_t)backlog, sizeof *s->slots);
	if (!s->pending || !s->slots) {
		free_backlog(s, 0);
		return sock_fail(ENOMEM);
	}
	for (int i = 0; i < backlog; i++) {
		if (!(s->slots[i] = sock_new_slot())) {
			free_backlog(s, i);
			return sock_fail(ENOMEM);
		}
	}
	tcp_err(s->pcb, NULL);
	err_t err;
	struct tcp_pcb *lpcb = tcp_listen_with_backlog_and_err(s->pcb, 255, &err);
	if (!lpcb) {
		/* The bound pcb is still ours. ERR_USE: with SO_REUSEADDR, bind let
		 * a second socket have the port, but only one may listen on it. */
		tcp_err(s->pcb, sock_on_err);
		free_backlog(s, backlog);
		return sock_fail(err == ERR_USE ? EADDRINUSE : ENOMEM);
	}
	s->pcb = lpcb;
	s->backlog = backlog;
	s->state = SS_LISTENING;
	tcp_arg(lpcb, s);
	tcp_accept(lpcb, sock_on_accept);
	report_first_listen();
	return 0;
}

static long listen_entry(const long *a)
{
	return listen_call((int)a[0], (int)a[1]);
}

int listen(int fd, int backlog)
{
	const long a[] = { (long)fd, (long)backlog };
	return (int)net_run(listen_entry, a);
}

void sock_fill_sockaddr(struct sockaddr *addr, socklen_t *len, const ip_addr_t *ip, uint16_t port)
{
	if (!addr || !len)
		return;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = ip_addr_get_ip4_u32(ip) };
	socklen_t n = *len < sizeof sin ? *len : sizeof sin;
	memcpy(addr, &sin, n);
	*len = sizeof sin;
}

/* Whether accept() finds a connection. The idea-accept-skip variant counts
 * the waiting connections so that an empty backlog is not walked. */
static bool accept_ready(struct sock *l)
{
	if (IDEA_ACCEPT_SKIP && l->pending_count == 0)
		return false;
	return sock_listener_ready(l);
}

static bool accept_ready_cb(void *arg)
{
	return accept_ready(arg);
}

static int accept4_call(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	if (s->state != SS_LISTENING)
		return sock_fail(EINVAL);
	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return sock_fail(EINVAL);
	executor_poll();
	sock_touched(s);
	while (!accept_ready(s)) {
		if (s->nonblock)
			return sock_fail(EAGAIN);
		if (net_block_on(accept_ready_cb, s, UINT64_MAX, false) < 0)
			return sock_fail(EINTR); /* on the network core, for a signal: shipped again */
	}
	struct sock *c = s->pending[s->pending_head];
	KCHECK(s->pending_count > 0 && c && s->slots[s->pending_head]->state == SS_SLOT_READY);
	s->pending[s->pending_head] = NULL;
	s->slots[s->pending_head]->state = SS_SLOT; /* waiting for the next */
	s->pending_head = (s->pending_head + 1) % s->backlog;
	s->pending_count--;
	s->accept_ready = s->pending_count > 0; /* stays up while connections wait */
	c->nonblock = (flags & SOCK_NONBLOCK) != 0;
	if (c->pcb)
		sock_fill_sockaddr(addr, len, &c->pcb->remote_ip, c->pcb->remote_port);
	else
		sock_fill_sockaddr(addr, len, IP4_ADDR_ANY, 0);
	return install(c);
}

static long accept4_entry(const long *a)
{
	return accept4_call((int)a[0], (struct sockaddr *)a[1], (socklen_t *)a[2], (int)a[3]);
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct sock *l;
	int e;
	if (SW_SMP_NET_CORE && handoff_serving() && !(flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) &&
	    (l = sock_of(fd, &e)) && sock_accept_would_block(l)) {
		net_socket_counters.would_block_here++; /* see sock_wait.c */
		return sock_fail(EAGAIN);
	}
	const long a[] = { (long)fd, (long)addr, (long)len, (long)flags };
	return (int)net_run(accept4_entry, a);
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

static int connect_call(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_in *sin = NULL;
	int e = sockaddr_in_of(addr, len, &sin);
	struct udp_sock *u = udp_sock_of(fd);
	if (u) {
		if (addr && len >= sizeof(sa_family_t) && addr->sa_family == AF_UNSPEC)
			e = 0, sin = (const struct sockaddr_in *)addr; /* dissolve the association */
		return e ? sock_fail(e) : udp_result(udp_sock_connect(u, sin));
	}
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	if (e)
		return sock_fail(e);
	if (s->state == SS_CONNECTING && s->connect_restart) {
		s->connect_restart = false; /* the same call, shipped again after a signal */
		goto wait;
	}
	if (s->state == SS_CONNECTING)
		return sock_fail(EALREADY);
	if (s->state == SS_CONNECTED)
		return sock_fail(EISCONN);
	if (s->state != SS_NEW)
		return sock_fail(EINVAL);
	if (!s->pcb) {
		s->pcb = tcp_new();
		if (!s->pcb)
			return sock_fail(ENOMEM);
	}
	sock_setup_conn_pcb(s, s->pcb);
	ip_addr_t ip;
	ip_addr_set_ip4_u32(&ip, sin->sin_addr.s_addr);
	err_t err = tcp_connect(s->pcb, &ip, ntohs(sin->sin_port), sock_on_connected);
	if (err != ERR_OK)
		return sock_fail(err == ERR_RTE ? ENETUNREACH : err == ERR_USE ? EADDRINUSE : ENOMEM);
	s->state = SS_CONNECTING;
	executor_poll();
	if (s->nonblock && s->state == SS_CONNECTING)
		return sock_fail(EINPROGRESS);
wait:
	if (net_block_on(connect_done, s, UINT64_MAX, false) < 0) {
		s->connect_restart = true; /* on the network core, for a signal: shipped again */
		return sock_fail(EINTR);
	}
	if (s->state != SS_CONNECTED)
		return sock_fail(sock_take_error(s) ? : ECONNREFUSED);
	return 0;
}

static long connect_entry(const long *a)
{
	return connect_call((int)a[0], (const struct sockaddr *)a[1], (socklen_t)a[2]);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	const long a[] = { (long)fd, (long)addr, (long)len };
	return (int)net_run(connect_entry, a);
}

static ssize_t recv_call(int fd, void *buf, size_t len, int flags)
{
	struct udp_sock *u = udp_sock_of(fd);
	if (u)
		return udp_result(udp_sock_recvfrom(u, buf, len, flags, NULL, NULL));
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	if (flags & MSG_PEEK) {
		executor_poll();
		if (!s->rx_len)
			return s->rx_eof ? 0 : sock_fail(EAGAIN);
		size_t n = len < s->rx_len ? len : s->rx_len;
		size_t got = pbuf_copy_partial(s->rx, buf, (u16_t)(n > 0xffff ? 0xffff : n), s->rx_off);
		net_counters.copied_rx_to_app += got;
		return (ssize_t)got;
	}
	bool nb = s->nonblock;
	if (flags & MSG_DONTWAIT)
		s->nonblock = true;
	long r = sock_read(s, buf, len);
	s->nonblock = nb;
	return r < 0 ? sock_fail((int)-r) : r;
}

static long recv_entry(const long *a)
{
	return recv_call((int)a[0], (void *)a[1], (size_t)a[2], (int)a[3]);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	const long a[] = { (long)fd, (long)buf, (long)len, (long)flags };
	return (ssize_t)net_run(recv_entry, a);
}

static ssize_t recvfrom_call(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen)
{
	struct udp_sock *u = udp_sock_of(fd);
	if (u)
		return udp_result(udp_sock_recvfrom(u, buf, len, flags, from, fromlen));
	ssize_t r = recv(fd, buf, len, flags);
	if (r >= 0 && from && fromlen)
		getpeername(fd, from, fromlen);
	return r;
}

static long recvfrom_entry(const long *a)
{
	return recvfrom_call((int)a[0], (void *)a[1], (size_t)a[2], (int)a[3], (struct sockaddr *)a[4], (socklen_t *)a[5]);
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen)
{
	const long a[] = { (long)fd, (long)buf, (long)len, (long)flags, (long)from, (long)fromlen };
	return (ssize_t)net_run(recvfrom_entry, a);
}

static ssize_t send_call(int fd, const void *buf, size_t len, int flags)
{
	struct udp_sock *u = udp_sock_of(fd);
	if (u)
		return udp_result(udp_sock_sendto(u, buf, len, NULL, 0));
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	bool nb = s->nonblock;
	if (flags & MSG_DONTWAIT)
		s->nonblock = true;
	long r = sock_write(s, buf, len);
	s->nonblock = nb;
	return r < 0 ? sock_fail((int)-r) : r;
}

static long send_entry(const long *a)
{
	return send_call((int)a[0], (const void *)a[1], (size_t)a[2], (int)a[3]);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	const long a[] = { (long)fd, (long)buf, (long)len, (long)flags };
	return (ssize_t)net_run(send_entry, a);
}

static ssize_t sendto_call(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen)
{
	struct udp_sock *u = udp_sock_of(fd);
	if (u)
		return udp_result(udp_sock_sendto(u, buf, len, to, tolen));
	if (to) {
		(void)tolen;
		return sock_fail(EISCONN);
	}
	return send(fd, buf, len, flags);
}

static long sendto_entry(const long *a)
{
	return sendto_call((int)a[0], (const void *)a[1], (size_t)a[2], (int)a[3], (const struct sockaddr *)a[4], (socklen_t)a[5]);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen)
{
	const long a[] = { (long)fd, (long)buf, (long)len, (long)flags, (long)to, (long)tolen };
	return (ssize_t)net_run(sendto_entry, a);
}

static int shutdown_call(int fd, int how)
{
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	if (how < SHUT_RD || how > SHUT_RDWR)
		return sock_fail(EINVAL);
	if (s->state != SS_CONNECTED)
		return sock_fail(ENOTCONN);
	if (how != SHUT_WR) {
		/* Nothing more is delivered; what is queued is dropped. */
		s->rx_eof = true;
		sock_drop_unread(s);
	}
	if (how != SHUT_RD && !s->fin_wanted) {
		s->fin_wanted = true;
		sock_mark_egress(s);
		executor_poll();
	}
	return 0;
}

static long shutdown_entry(const long *a)
{
	return shutdown_call((int)a[0], (int)a[1]);
}

int shutdown(int fd, int how)
{
	const long a[] = { (long)fd, (long)how };
	return (int)net_run(shutdown_entry, a);
}

/* ---- counters ----------------------------------------------------------------- */

/* The sockets still allocated once no listener is (at exit, normally none):
 * one line each, the first few, so that a leak names its state. */
static void print_leftovers(void)
{
	int shown = 0;
	for (struct sock *s = sk.all; s; s = s->all_next)
		if (s->state == SS_LISTENING)
			return;
	for (struct sock *s = sk.all; s && shown < 8; s = s->all_next, shown++)
		kprintf("socket left: state %d, pcb state %d, tx %lu, rx %lu%s%s%s%s\n", s->state,
			s->pcb ? (int)s->pcb->state : -1, (unsigned long)s->tx_len,
			(unsigned long)s->rx_len, s->closed_by_app ? ", closed" : "",
			s->fin_wanted ? ", fin wanted" : "", s->fin_sent ? ", fin sent" : "",
			s->rx_eof ? ", peer fin" : "");
}

void net_socket_stats_print(void)
{
	const struct socket_counters *c = &net_socket_counters;
	kprintf("sockets: open %lu, accepted %lu, backlog overflows %lu, resets %lu; egress passes %lu, "
		"sockets visited %lu, dispatches %lu, marks %lu, outputs %lu, tcp_write ENOMEM %lu; "
		"listener checks %lu, slots walked %lu; nagle holds %lu; send buffers grown %lu; "
		"would-block answered on the app's cpu %lu\n",
		c->sockets_open, c->accepted, c->backlog_overflows, c->resets, c->egress_passes,
		c->sockets_visited, c->dispatches, c->egress_marks, c->outputs, c->tcp_write_no_memory,
		c->listener_checks, c->listener_slots_walked, c->nagle_holds, c->tx_grown, c->would_block_here);
	if (c->resets)
		kprintf("sockets: resets by cause: peer's RST %lu, aborted %lu, other %lu; after close %lu; "
			"last: err %d, socket state %d%s%s%s, tx %lu, rx %lu, peer port %u\n",
			c->resets_rst, c->resets_aborted, c->resets - c->resets_rst - c->resets_aborted,
			c->resets_after_close, c->last_reset.err,
			c->last_reset.state, c->last_reset.closed ? ", closed" : "",
			c->last_reset.fin_sent ? ", fin sent" : "", c->last_reset.peer_fin ? ", peer fin" : "",
			(unsigned long)c->last_reset.tx_len, (unsigned long)c->last_reset.rx_len,
			(unsigned)c->last_reset.peer_port);
	print_leftovers();
}

