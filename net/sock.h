/*
 * sock.h: what the files of the TCP socket layer share (not for anything
 * outside net/sock_*.c and net/socket.c; applications use the POSIX calls).
 *
 * The layer, by concern:
 *   sock_lwip.c    socket objects and lwIP's callbacks: what lwIP tells us
 *   sock_io.c      the descriptor operations: read, write, writev, close
 *   sock_egress.c  the egress list and the pass that moves bytes into lwIP
 *   sock_wait.c    readiness, waiting, and the network as the executor's source
 *   socket.c       the POSIX socket calls (socket, bind, listen, accept, recv...)
 *   sock_opt.c     names and options (getsockname, setsockopt...)
 *
 * The hot path of one keep-alive request: a frame arrives -> net_poll() ->
 * lwIP -> sock_on_recv() queues the pbuf; poll() sees POLLIN (sock_wait.c);
 * read() copies it out and opens the window; writev() copies head and body
 * into the send buffer and lists the socket (sock_io.c); the next poll turn
 * runs sock_egress_pass() -> tcp_write() + tcp_output(): one segment.
 */
#ifndef NET_SOCK_H
#define NET_SOCK_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "kernel/kernel.h"
#include "kernel/switches.h"
#include "lwip/tcp.h"
#include "net_internal.h"

/* A socket's send buffer, which a bulk sender's grows (sock_io.c); idea-buf4k
 * (mk/variants.mk) fixes it at 4 KiB, and lwIP's window with it
 * (net/lwipopts.h). */
#ifdef SOCK_BUF_BYTES
#define SNDBUF_DEFAULT SOCK_BUF_BYTES
#define SNDBUF_GROWS   0
#else
#define SNDBUF_DEFAULT (16 * 1024)
#define SNDBUF_GROWS   1
#endif
#define SNDBUF_MIN     2048
#define SNDBUF_MAX     (256 * 1024)
/* What one socket's receive queue may hold (sock_rx.c). A piece of up to
 * SOCK_RX_COPY_MAX bytes behind unread data is copied into chunks of
 * SOCK_RX_CHUNK bytes, so a run of small pieces takes a buffer per 2 KiB.
 * Larger pieces are queued as they came, at least 1 KiB a buffer: a window
 * of those alone takes at most TCP_WND / 1024 buffers, and the bound leaves
 * a little room above that. Small and large pieces alternated could take
 * two buffers per 1 KiB; the bound refuses them. Under memory pressure a
 * socket keeps SOCK_RX_BUFS_FAIR. */
#define SOCK_RX_COPY_MAX  1024
#define SOCK_RX_CHUNK     2048
#define SOCK_RX_BUFS_MAX  (TCP_WND / 1024 + 16)
#define SOCK_RX_BUFS_FAIR 16
/* listen()'s backlog is capped here (idea-backlog16 makes it 16). */
#ifndef BACKLOG_MAX
#define BACKLOG_MAX    SOMAXCONN
#endif

enum sock_state {
	SS_NEW,        /* socket() */
	SS_LISTENING,  /* listen() */
	SS_CONNECTING, /* connect() sent a SYN */
	SS_CONNECTED,  /* data may flow */
	SS_CLOSED,     /* lwIP freed the pcb (reset, abort, both sides closed) */
	SS_SLOT,       /* a listener's backlog socket, waiting for a connection */
	SS_SLOT_READY, /* a backlog socket a connection landed on, for accept() */
};

struct sock {
	enum sock_state state;
	int type;                /* SOCK_STREAM */
	bool nonblock;           /* O_NONBLOCK */
	bool connect_restart;    /* a blocking connect's wait ended for a signal: its call comes again */
	struct tcp_pcb *pcb;     /* NULL once lwIP has freed it */
	int error;               /* pending error (errno value) for the next call / SO_ERROR */
	ip_addr_t local_ip;      /* bind() address until the pcb exists */
	uint16_t local_port;
	bool reuseaddr, keepalive, nodelay;
	bool reset_on_close;     /* SO_LINGER on with a zero timeout: close() resets */

	/* Listener: the connections lwIP accepted that accept() has not taken,
	 * a ring, oldest at pending_head; and one socket object per backlog
	 * slot, as a socket set with a listen backlog has them: slot i is
	 * SS_SLOT_READY while pending[i] holds a connection, SS_SLOT when it
	 * waits for one. The naive scans (egress pass, listener walk) read the
	 * slot objects; the design reads the flag. */
	struct sock **pending;   /* ring of backlog entries; NULL = empty */
	struct sock **slots;     /* the backlog's socket objects, one per entry */
	int backlog;             /* entries in each */
	int pending_head;        /* oldest waiting connection */
	int pending_count;       /* connections waiting */
	bool accept_ready;       /* raised by on_accept, lowered when none waits */

	/* Receive. */
	struct pbuf *rx;         /* unread data, a pbuf chain */
	uint16_t rx_off;         /* bytes of the first pbuf already read */
	size_t rx_len;           /* unread bytes */
	uint16_t rx_bufs;        /* pbufs (buffers) in the chain: at most SOCK_RX_BUFS_MAX */
	struct pbuf *rx_tail;    /* the chain's last pbuf when it is a chunk of ours; else NULL */
	uint16_t rx_tail_room;   /* free bytes at the end of rx_tail */
	bool rx_eof;             /* the peer sent FIN */

	/* Send (deferred egress). */
	uint8_t *tx;             /* ring buffer of tx_cap bytes, allocated at first write */
	size_t tx_cap, tx_head, tx_len;
	bool tx_cap_set;         /* SO_SNDBUF chose tx_cap: it never grows (sock_io.c) */
	bool fin_wanted;         /* shutdown(SHUT_WR) or close(): FIN once tx drains */
	bool fin_sent;
	bool closed_by_app;      /* close() ran: free once lwIP lets go */

	/* Egress list and the list of all sockets (the naive pass walks it). */
	struct sock *egress_next, *egress_prev;
	bool on_egress;
	struct sock *all_next, *all_prev;
};

/* The layer's global state. */
struct sock_table {
	struct sock *egress_head, *egress_tail; /* sockets that may have something to send */
	int egress_len;                         /* how many */
	struct sock *all;                       /* every socket */
	bool started;                           /* wait source registered */
};
extern struct sock_table sk;

/* ---- sock_lwip.c: objects and lwIP callbacks ---------------------------------- */
struct sock *sock_new(int type);           /* NULL when out of memory */
struct sock *sock_new_slot(void);          /* a backlog slot's socket; NULL when out of memory */
void sock_free(struct sock *s);            /* off every list, buffers freed */
void sock_detach_pcb(struct sock *s);      /* our callbacks off the pcb; s->pcb = NULL */
void sock_setup_conn_pcb(struct sock *s, struct tcp_pcb *pcb); /* a connection's callbacks */
void sock_apply_nodelay(struct tcp_pcb *pcb, bool nodelay);   /* TCP_NODELAY as set */
bool sock_read_nodelay(const struct tcp_pcb *pcb);            /* TCP_NODELAY as read */
void sock_on_err(void *arg, err_t err);
err_t sock_on_accept(void *arg, struct tcp_pcb *newpcb, err_t err);
err_t sock_on_connected(void *arg, struct tcp_pcb *pcb, err_t err);

/* ---- sock_egress.c: the lists and the egress pass ------------------------------ */
void sock_mark_egress(struct sock *s);     /* list s (once) */
void sock_all_insert(struct sock *s);
void sock_all_remove(struct sock *s);
void sock_egress_remove(struct sock *s);
bool sock_egress_pass(void);               /* true when it dispatched a socket */
size_t sock_egress_room(const struct tcp_pcb *pcb); /* bytes lwIP should take from us now */

/* Naive counterpart of "reading is not marking": every access marks. */
static inline void sock_touched(struct sock *s)
{
	if (!SW_READ_NO_MARK)
		sock_mark_egress(s);
}

/* The bytes of a pbuf chain. Not its tot_len: that field has 16 bits, and a
 * socket's queue (or what lwIP hands over at once) under a 256 KiB window
 * can be longer. */
static inline size_t sock_chain_bytes(const struct pbuf *p)
{
	size_t n = 0;
	for (; p; p = p->next)
		n += p->len;
	return n;
}

/* The unread count agrees with the chain: what the first pbuf's chain holds,
 * less what was read of it (a debug-build check). */
static inline bool sock_rx_consistent(const struct sock *s)
{
	return s->rx ? s->rx_len == sock_chain_bytes(s->rx) - s->rx_off : s->rx_len == 0;
}

/* ---- sock_wait.c: readiness and waiting ------------------------------------------ */
bool sock_listener_ready(struct sock *s);
/* On the app's CPU under the network core: a non-blocking read or accept
 * would find nothing (sock_wait.c). */
bool sock_read_would_block(const struct sock *s);
bool sock_accept_would_block(const struct sock *s);
short sock_poll(void *obj, short events);
int sock_wait(struct sock *s, short events); /* block until ready for events; -EINTR: see handoff.h */
int sock_net_start(void);                  /* first socket: start the network; 0 or -errno */

/* ---- sock_io.c: the descriptor operations ----------------------------------------- */
extern const struct file_ops sock_ops;
struct sock *sock_of(int fd, int *err);    /* NULL with *err = EBADF or ENOTSOCK */
long sock_read(void *obj, void *buf, size_t len);
long sock_write(void *obj, const void *buf, size_t len);
int sock_take_error(struct sock *s);       /* the pending error, cleared */

/* ---- sock_rx.c: the receive queue ------------------------------------------------- */
/* Queue chain p (lwIP's recv callback): ERR_OK (p is the queue's now), or
 * ERR_MEM when the socket holds its share of buffers (lwIP keeps p). */
err_t sock_rx_queue(struct sock *s, struct pbuf *p);
/* Copy up to len unread bytes out, free what was read, open the window. */
size_t sock_rx_take(struct sock *s, void *buf, size_t len);
void sock_drop_unread(struct sock *s);     /* free unread data, give the window back */
void sock_window_open(struct tcp_pcb *pcb, size_t n); /* tcp_recved() for any n */

/* ---- socket.c's, for the calls in sock_opt.c too ------------------------- */

/* errno set to e, and -1: a call's failure as POSIX returns it. */
static inline int sock_fail(int e)
{
	errno = e;
	return -1;
}
/* The TCP socket behind fd, or NULL with errno set (EBADF or ENOTSOCK). */
struct sock *sock_tcp_or_errno(int fd);
/* An IPv4 address and port into addr, cut to *len, and *len set to the
 * whole address's size (nothing where addr or len is NULL). */
void sock_fill_sockaddr(struct sockaddr *addr, socklen_t *len, const ip_addr_t *ip, uint16_t port);

#endif
