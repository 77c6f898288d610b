/*
 * net_internal.h: what the files of the network layer share among
 * themselves (not for applications; they include net/net.h). The counters,
 * the netif glue between lwIP and the virtio-net driver, and the TIME_WAIT
 * recycling and timer steps of tcp_hooks.c.
 */
#ifndef NET_INTERNAL_H
#define NET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lwip/ip_addr.h"

struct netif;

/* The layer's own counters, printed at exit (stats.c). */
struct net_counters {
	uint64_t rx_frames, rx_bytes;      /* frames the driver delivered to lwIP */
	uint64_t tx_frames, tx_bytes;      /* frames handed to the driver */
	uint64_t rx_drop_no_pbuf;          /* pbuf pool empty: frame dropped */
	uint64_t rx_drop_too_long;         /* longer than an Ethernet frame may be */
	uint64_t rx_drop_input;            /* lwIP's input refused the frame */
	uint64_t tx_drop_ring_full;        /* ring still full after a reclaim (a pure ACK: see netif_ack.c) */
	uint64_t tx_acks_merged;           /* pure ACKs replaced by a later one of their connection before they left */
	uint64_t tx_acks_waited;           /* pure ACKs that found the ring full and waited for room */
	uint64_t tx_drop_no_pbuf;          /* no pbuf to flatten a long chain into */
	uint64_t tx_drop_invalid;          /* driver refused the frame (-EINVAL) */
	uint64_t tx_flattened;             /* chains copied into one pbuf (> VNET_MAX_SEGS) */
	uint64_t tcp_timewait_recycled;    /* TIME_WAIT pcbs ended by a new SYN */
	uint64_t tcp_synrcvd_evicted;      /* half-open pcbs ended for a new SYN (pool full) */
	uint64_t tcp_handshake_deferred;   /* handshake-completing segments dropped: the listener's backlog was full */
	uint64_t tcp_insane_offset;        /* segments dropped before lwIP's "insane offset" assert */
	uint64_t tcp_last_ack_renewed;     /* LAST_ACK pcbs holding unacked segments whose 2*MSL clock was restarted */
	/* Frames and segments dropped (or state repaired) before lwIP could
	 * assert on them (tcp_hooks.c, netif.c; docs/hardening.md lists them). */
	uint64_t tcp_beyond_window;        /* out-of-order segments reaching past the window */
	uint64_t tcp_past_fin;             /* segments with data past a FIN queued out of order */
	uint64_t tcp_mss_not_syn;          /* MSS options on segments without SYN */
	uint64_t tcp_bad_syn;              /* SYNs in SYN_RCVD that are not the first SYN again */
	uint64_t tcp_wnd_max_floor;        /* repair: a SYN's window below 2 raised to two segments */
	uint64_t tcp_persist_stopped;      /* repair: persist timers running with nothing unsent */
	uint64_t rx_drop_empty_fragment;   /* IPv4 fragments that carry nothing */
	uint64_t rx_drop_short_arp;        /* ARP frames shorter than the ARP header */
	uint64_t rx_drop_short_ip;         /* IPv4 frames whose first piece is shorter than an IPv4 header */
	/* What one connection may hold of the receive buffers (sock_rx.c). */
	uint64_t rx_coalesced;             /* small pieces copied onto a socket's queue, their buffers freed */
	uint64_t rx_coalesced_bytes;       /* their bytes */
	uint64_t rx_cap_refused;           /* pieces refused: the socket held SOCK_RX_BUFS_MAX buffers */
	uint64_t rx_pressure_refused;      /* pieces refused: buffers short and the socket held its share */
	uint64_t polls, polls_with_work;   /* net_poll calls, and those that did something */
	uint64_t timer_runs;               /* sys_check_timeouts calls (only when due) */
	uint64_t waits;                    /* net_wait calls that parked the CPU */
	/* Bytes copied on the data path, each copy counted where it is made. */
	uint64_t copied_rx_to_pbufs;       /* received frames, device buffer -> pool pbufs */
	uint64_t copied_rx_to_app;         /* received data, pbufs -> the application (read, recv) */
	uint64_t copied_tx_from_app;       /* sent data, the application -> the send buffer */
	uint64_t copied_tx_to_segments;    /* sent data, the send buffer -> lwIP's segments */
};
extern struct net_counters net_counters;

/* sock_lwip.c: the listener whose callback argument this is (a listening
 * pcb's) has every backlog entry taken (tcp_hooks.c holds its handshakes). */
bool sock_listener_full(const void *listener_arg);

/* netif.c: most receive buffers (the driver's reserve and the pbuf pool
 * together) are held by the stack: sockets should not take more than a
 * share (sock_rx.c). */
bool net_rx_memory_short(void);

/* netif.c: the lwIP interface over the driver. */
int8_t net_netif_init(struct netif *netif);               /* netif_add's init_fn */
struct vnet_frame;
void net_netif_deliver(void *ctx, const struct vnet_frame *frame); /* vnet_rx callback; ctx = netif */
void net_netif_tx_done(void *cookie);                     /* vnet tx-done callback; cookie = pbuf */

/* netif_ack.c: pure ACKs merged and kept while the ring is full. */
struct pbuf;
/* linkoutput's last step: `p` goes through `send`, or (a pure ACK) waits. */
int8_t net_ack_output(struct pbuf *p, int8_t (*send)(struct pbuf *p));
void net_ack_init(void);        /* reads kernel option ack_merge */
void net_ack_input_begin(void); /* the poll hands received frames to lwIP: pure ACKs wait */
void net_ack_input_end(void);   /* ... and is done: what waits is sent */
void net_ack_flush(void);       /* send what waits while the ring has room */
bool net_ack_due(void);         /* something waits and the ring has room */

/* tcp_hooks.c: after each frame's input, ends the pcb the frame's SYN was
 * dropped to make room for (a TIME_WAIT pcb on its port, or the oldest
 * half-open connection when the pool is full); true when it did: then feed
 * the frame in again. */
bool net_tcp_make_room(void);
/* tcp_hooks.c: runs lwIP's timers that are due (sys_check_timeouts), first
 * keeping each closing connection that still has data in flight from being
 * dropped before its retransmissions have run. */
void net_tcp_run_timers(void);
/* tcp_hooks.c: two or more TCP connections are open (the driver's timed
 * hold asks, vnet_set_tx_hold_worth). */
bool net_tcp_several_open(void);

/* copy.c: the data path's byte copy (lwIP's MEMCPY too), and the choice of
 * its routine at start (kernel option copy=; see copy.c). */
void *net_copy(void *dst, const void *src, size_t n);
void net_copy_init(void);
bool net_copy_choose(const char *routine); /* by name; false if unknown */
const char *net_copy_routine(void); /* "libc", "words" or "movsb" */

/* stats.c: print the counters, the driver's and lwIP's statistics. */
void net_stats_print(void);
void net_pools_print(void); /* the one 'pools:' line */

/* socket.c: the socket layer's counters. */
struct socket_counters {
	uint64_t sockets_open;          /* sockets now allocated */
	uint64_t accepted;              /* connections the accept callback took */
	uint64_t backlog_overflows;     /* refused: the listener's backlog was full */
	uint64_t accept_no_memory;      /* refused: no memory for the socket */
	uint64_t resets;                /* connections lwIP ended under us, of them: */
	uint64_t resets_rst;            /*   the peer's RST */
	uint64_t resets_aborted;        /*   aborted (lwIP's pcb pool, its retransmissions);
	                                 *   any other error is the rest */
	uint64_t resets_after_close;    /*   of them, after the application's close() */
	struct {                        /* the last one, for a report that must explain it */
		int err;                /*   lwIP's err_t */
		int state;              /*   enum sock_state before it */
		bool closed, fin_sent, peer_fin;
		uint32_t tx_len, rx_len; /*   bytes still to send, still unread */
		uint16_t peer_port;     /*   the peer's port (a peer's RST only: the
		                         *   pcb is gone by an abort's callback) */
	} last_reset;
	uint64_t egress_passes;         /* egress passes run */
	uint64_t sockets_visited;       /* sockets (and naive backlog slots) they looked at */
	uint64_t dispatches;            /* sockets they moved bytes or a FIN for */
	uint64_t egress_marks;          /* sockets put on the egress list */
	uint64_t outputs;               /* tcp_output calls */
	uint64_t tcp_write_no_memory;   /* tcp_write refused for lack of memory */
	uint64_t listener_checks;       /* listener readiness questions */
	uint64_t listener_slots_walked; /* backlog slots looked at to answer them (naive) */
	uint64_t nagle_holds;           /* outputs that left data waiting for an ACK (Nagle) */
	uint64_t tx_grown;              /* send buffers doubled for a bulk sender (sock_io.c) */
	uint64_t would_block_here;      /* network core: non-blocking reads and accepts answered
					 * EAGAIN on the app's CPU, no call handed over (sock_wait.c) */
};
extern struct socket_counters net_socket_counters;
void net_socket_stats_print(void);

/* udp.c: UDP sockets; socket.c hands UDP descriptors' calls over. */
struct udp_sock;
struct sockaddr;
struct sockaddr_in;
struct udp_counters {
	uint64_t open;             /* UDP sockets now allocated */
	uint64_t received;         /* datagrams queued for the app */
	uint64_t sent;             /* datagrams handed to lwIP */
	uint64_t drops_queue_full; /* arrived while the socket's queue was full */
};
extern struct udp_counters net_udp_counters;
int udp_sock_new(bool nonblock);              /* a descriptor, or -errno */
struct udp_sock *udp_sock_of(int fd);         /* NULL: not a UDP socket */
int udp_sock_bind(struct udp_sock *u, const struct sockaddr_in *sin);
int udp_sock_connect(struct udp_sock *u, const struct sockaddr_in *sin);
long udp_sock_recvfrom(struct udp_sock *u, void *buf, size_t len, int flags, struct sockaddr *from,
		       unsigned *fromlen);
long udp_sock_sendto(struct udp_sock *u, const void *buf, size_t len, const struct sockaddr *to, unsigned tolen);
/* The local (or, with peer, the remote) address and port, for getsockname/getpeername. */
void udp_sock_name(struct udp_sock *u, bool peer, const ip_addr_t **ip, uint16_t *port);
bool udp_sock_connected(struct udp_sock *u);

#endif
