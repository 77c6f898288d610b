/*
 * sock_opt.c: a socket's names and options: getsockname, getpeername,
 * setsockopt, getsockopt, with Linux's semantics and errno values, for TCP
 * sockets and the UDP descriptors udp.c keeps. Each call enters the network
 * as the SMP design says (net_entry.h), as socket.c's do.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "net_entry.h"
#include "sock.h"

static int getsockname_call(int fd, struct sockaddr *addr, socklen_t *len)
{
	if (!addr || !len)
		return sock_fail(EFAULT);
	struct udp_sock *u = udp_sock_of(fd);
	if (u) {
		const ip_addr_t *ip;
		uint16_t port;
		udp_sock_name(u, false, &ip, &port);
		sock_fill_sockaddr(addr, len, ip, port);
		return 0;
	}
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	if (s->pcb)
		sock_fill_sockaddr(addr, len, &s->pcb->local_ip, s->pcb->local_port);
	else
		sock_fill_sockaddr(addr, len, &s->local_ip, s->local_port);
	return 0;
}

static long getsockname_entry(const long *a)
{
	return getsockname_call((int)a[0], (struct sockaddr *)a[1], (socklen_t *)a[2]);
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	const long a[] = { (long)fd, (long)addr, (long)len };
	return (int)net_run(getsockname_entry, a);
}

static int getpeername_call(int fd, struct sockaddr *addr, socklen_t *len)
{
	if (!addr || !len)
		return sock_fail(EFAULT);
	struct udp_sock *u = udp_sock_of(fd);
	if (u) {
		if (!udp_sock_connected(u))
			return sock_fail(ENOTCONN);
		const ip_addr_t *ip;
		uint16_t port;
		udp_sock_name(u, true, &ip, &port);
		sock_fill_sockaddr(addr, len, ip, port);
		return 0;
	}
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	if (!s->pcb || s->state != SS_CONNECTED)
		return sock_fail(ENOTCONN);
	sock_fill_sockaddr(addr, len, &s->pcb->remote_ip, s->pcb->remote_port);
	return 0;
}

static long getpeername_entry(const long *a)
{
	return getpeername_call((int)a[0], (struct sockaddr *)a[1], (socklen_t *)a[2]);
}

int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	const long a[] = { (long)fd, (long)addr, (long)len };
	return (int)net_run(getpeername_entry, a);
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

static int setsockopt_call(int fd, int level, int name, const void *val, socklen_t len)
{
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	int v, e;
	if (level == SOL_SOCKET && name == SO_LINGER) {
		struct linger lg;
		if (!val)
			return sock_fail(EFAULT);
		if (len < sizeof lg)
			return sock_fail(EINVAL);
		memcpy(&lg, val, sizeof lg);
		/* Only the reset: a close that waits for its data would block. */
		if (lg.l_onoff && lg.l_linger != 0)
			return sock_fail(EINVAL);
		s->reset_on_close = lg.l_onoff != 0;
		return 0;
	}
	if ((e = int_opt(val, len, &v)))
		return sock_fail(e);
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
			s->tx_cap_set = true;
			return 0;
		case SO_RCVBUF:
			return 0; /* the receive window is lwIP's TCP_WND */
		}
		return sock_fail(ENOPROTOOPT);
	}
	if (level == IPPROTO_TCP && name == TCP_NODELAY) {
		/* TCP_NODELAY on means Nagle off. */
		s->nodelay = v != 0;
		if (s->pcb && s->state != SS_LISTENING)
			sock_apply_nodelay(s->pcb, s->nodelay);
		return 0;
	}
	return sock_fail(ENOPROTOOPT);
}

static long setsockopt_entry(const long *a)
{
	return setsockopt_call((int)a[0], (int)a[1], (int)a[2], (const void *)a[3], (socklen_t)a[4]);
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	const long a[] = { (long)fd, (long)level, (long)name, (long)val, (long)len };
	return (int)net_run(setsockopt_entry, a);
}

static int getsockopt_call(int fd, int level, int name, void *val, socklen_t *len)
{
	struct sock *s = sock_tcp_or_errno(fd);
	if (!s)
		return -1;
	int v;
	if (!val || !len)
		return sock_fail(EFAULT);
	if (level == SOL_SOCKET && name == SO_LINGER) {
		struct linger lg = { s->reset_on_close, 0 };
		if (*len < sizeof lg)
			return sock_fail(EINVAL);
		memcpy(val, &lg, sizeof lg);
		*len = sizeof lg;
		return 0;
	}
	if (*len < sizeof(int))
		return sock_fail(EINVAL);
	if (level == SOL_SOCKET && name == SO_ERROR)
		v = sock_take_error(s);
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
		v = s->pcb && s->state != SS_LISTENING ? sock_read_nodelay(s->pcb) : s->nodelay;
	else
		return sock_fail(ENOPROTOOPT);
	memcpy(val, &v, sizeof v);
	*len = sizeof v;
	return 0;
}

static long getsockopt_entry(const long *a)
{
	return getsockopt_call((int)a[0], (int)a[1], (int)a[2], (void *)a[3], (socklen_t *)a[4]);
}

int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	const long a[] = { (long)fd, (long)level, (long)name, (long)val, (long)len };
	return (int)net_run(getsockopt_entry, a);
}
