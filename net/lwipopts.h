/*
 * lwipopts.h: how lwIP 2.1.3 is configured for this unikernel. Options left
 * out keep lwIP's defaults (deps/lwip/src/include/lwip/opt.h); every option
 * set here says why.
 *
 * The setting: one CPU, one address space, no threads. lwIP runs only in
 * thread context, called from net_poll() and from the application's raw-API
 * calls and callbacks; interrupt handlers never touch it. Sized for a server
 * with 64 keep-alive connections plus a burst of 1024 connections being
 * opened at once.
 */
#ifndef NET_LWIPOPTS_H
#define NET_LWIPOPTS_H

/* ---- system integration ---------------------------------------------------- */
/* No OS threads: no tcpip thread, mailboxes or semaphores; the caller drives
 * lwIP with sys_check_timeouts() and netif input (net_poll). */
#define NO_SYS 1
/* The sequential and socket APIs need threads; the socket layer above is our
 * own, over the raw API. */
#define LWIP_NETCONN 0
#define LWIP_SOCKET 0
/* Nothing calls lwIP from interrupt context and there is one CPU, so lwIP's
 * critical sections would protect nothing. */
#define SYS_LIGHTWEIGHT_PROT 0

/* ---- memory ---------------------------------------------------------------- */
/* x86-64: 8-byte alignment keeps u64 fields and the copy loops aligned. */
#define MEM_ALIGNMENT 8
/* lwIP's own heap, not newlib's malloc: it holds the PBUF_RAM pbufs (copied
 * TCP data, SYN-ACKs, ARP/ICMP replies). A separate, fixed arena means a flood
 * of connections or a peer that never reads can exhaust only the network's
 * memory, never the application's heap, and exhaustion shows up as counted
 * mem.err in the stats printed at exit. The socket layer hands lwIP no more
 * of a connection's bytes than the peer's window and two segments
 * (sock_egress_room), so a slow reader holds little of it. 8 MiB is then
 * room for a few hundred connections with a whole window in flight at once,
 * and the image still fits a 16 MiB machine (test 09); a smaller heap
 * without the cap let a hundred slow readers take every segment, and no
 * SYN-ACK could leave (docs/hardening.md, "Memory bounds").
 *
 * The arena is not BSS: whatever loads the image zeroes BSS (the loader; QEMU
 * itself under PVH), which touches every page of it, and a host backing
 * guest RAM lazily then holds all 8 MiB for a server that uses a few pages.
 * The kernel sets it aside at boot, untouched (kmem_net_heap_arena()), and
 * lwIP's mem_init() writes only the two headers at its ends. */
#define MEM_LIBC_MALLOC 0
#define MEM_SIZE (8 * 1024 * 1024)
extern unsigned char *lwip_heap_arena; /* MEM_SIZE and lwIP's headers; net/net.c */
#define LWIP_RAM_HEAP_POINTER lwip_heap_arena

/* Receive pbufs: a frame is copied into these when the driver's reserve of
 * buffers to lend is spent (net/netif.c). 1024 full-size buffers (1.6 MiB)
 * beside the reserve's 1.5 MiB; a frame that finds the pool empty too is a
 * counted drop (rx_no_pbuf) and TCP retransmits it. */
#define PBUF_POOL_SIZE 1024
/* PBUF_ROM/REF headers: tcp_write() without TCP_WRITE_FLAG_COPY (static
 * responses) holds one per write until the peer acknowledges it, so every
 * connection the listeners admit (1088) may need one at once; fewer makes a
 * burst's answers wait for headers. A header is 24 bytes. */
#define MEMP_NUM_PBUF 2048
/* Received frames travel up on the driver's own buffers (net/netif.c). */
#define LWIP_SUPPORT_CUSTOM_PBUF 1

/* ---- protocols ------------------------------------------------------------- */
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_IPV4 1
#define LWIP_IPV6 0 /* not needed; the user-mode and tap networks are IPv4 */
#define LWIP_ICMP 1
#define LWIP_RAW 1
#define LWIP_UDP 1
#define LWIP_TCP 1
#define LWIP_DHCP 1
/* In lwIP 2.1.3 this only makes two timer functions public (checked:
 * timeouts.c and timeouts.h are its only users); net.c needs one of them,
 * lwip_cyclic_timer, to take DHCP's timers off when the address is static. */
#define LWIP_TESTMODE 1
/* DHCP normally probes the offered address with ARP before binding, which
 * costs about a second of boot under TCG. On the virtual LANs this runs on
 * the DHCP server is the only source of addresses, so skip the probe. */
#define DHCP_DOES_ARP_CHECK 0
/* One interface (plus loopback unless disabled): lets lwIP skip netif lookups. */
#define LWIP_SINGLE_NETIF 1
#define LWIP_HAVE_LOOPIF 0
#define LWIP_NETIF_LOOPBACK 0
/* The netif's link state comes from the driver, and status changes (DHCP
 * binding) are observed by polling netif_is_up/dhcp_supplied_address. */
#define LWIP_NETIF_STATUS_CALLBACK 0
/* Keep an outgoing packet while ARP resolves its next hop: the first reply
 * to a new peer would otherwise be lost until TCP retransmits it. */
#define ARP_QUEUEING 1

/* ---- TCP ------------------------------------------------------------------- */
/* Ethernet MTU 1500 - 40 bytes of IP and TCP headers. */
#define TCP_MSS 1460
/* 256 KiB each way: a window, and as much sent and not yet acknowledged.
 * A single stream is bound by window / round trip, and the host's TCP sends
 * a merged frame of up to 64 KiB per window it sees open, so a window of one
 * such frame or less leaves the link idle between a frame and its ACK; four
 * of them keep it busy (docs/design/virtio-net.md). Memory is spent only
 * while data is queued: received data on the driver's lent buffers, then
 * pool pbufs (a counted drop when both are spent), sent data in lwIP's heap
 * (tcp_write ENOMEM, counted, when it is full). TCP_WND_BYTES sets another
 * size for an experiment. TCP_SND_QUEUELEN keeps lwIP's formula (4 pbufs
 * per MSS of buffer). */
#ifdef SOCK_BUF_BYTES
/* idea-buf4k (mk/variants.mk): the write-up's small buffers, a window and a
 * send buffer of SOCK_BUF_BYTES (lwIP wants at least two segments). */
#define TCP_WND SOCK_BUF_BYTES
#define TCP_SND_BUF SOCK_BUF_BYTES
#else
#ifndef TCP_WND_BYTES
#define TCP_WND_BYTES (256 * 1024)
#endif
#define TCP_WND TCP_WND_BYTES
#define TCP_SND_BUF TCP_WND_BYTES
#endif
#define TCP_SND_QUEUELEN ((4 * TCP_SND_BUF + (TCP_MSS - 1)) / TCP_MSS)
/* Only netconn reads it, but lwIP's sanity check wants it below 16 bits. */
#define TCP_SNDLOWAT LWIP_MIN(TCP_SND_BUF / 2, 0xffff - 4 * TCP_MSS - 1)
/* Window scaling, offered back to a peer that offers it, with the smallest
 * shift our window needs (3 for 256 KiB); a peer's scaled window is read
 * right. Without the option in our SYN-ACK, RFC 7323 has both sides unscaled, but
 * Debian 12's passt (make run's back-end) scales its window anyway; read as
 * is, it shrinks to a few hundred bytes and every answer longer than the
 * first flight crawls out by window probes. */
#define LWIP_WND_SCALE 1
#if TCP_WND > (0xffff << 2)
#define TCP_RCV_SCALE 3
#elif TCP_WND > (0xffff << 1)
#define TCP_RCV_SCALE 2
#elif TCP_WND > 0xffff
#define TCP_RCV_SCALE 1
#else
#define TCP_RCV_SCALE 0
#endif
/* PCBs: 64 established keep-alive connections + 1024 connections in the
 * handshake (lwIP has no SYN cache: each SYN_RCVD connection is a full pcb,
 * so this, not the listen backlog, bounds pending connections) + 64 for
 * connections closing or in TIME_WAIT (lwIP reuses the oldest TIME_WAIT pcb
 * when the pool runs dry, so these need not cover every one). */
#define MEMP_NUM_TCP_PCB (64 + 1024 + 64)
#define MEMP_NUM_TCP_PCB_LISTEN 8
/* Segments queued for (re)transmission, all connections together: enough
 * for every pcb to hold a full send buffer in segments down to 730 bytes
 * (a half-open one holds its SYN-ACK), so no connection can run the others
 * out. 4096 were all taken by 101 slow readers before the socket layer kept
 * lwIP's share of a connection near its peer's window (net/socket.c,
 * egress_room). A tcp_seg is 32 bytes: 1.2 MB. (lwIP counts a pool in 16
 * bits: TCP_SND_QUEUELEN for every pcb would not fit.) */
#define MEMP_NUM_TCP_SEG (MEMP_NUM_TCP_PCB * 32)
/* The listen backlog stays off (TCP_LISTEN_BACKLOG 0): with the raw API the
 * accept callback runs as soon as a handshake completes, so no connection
 * waits between handshake and accept; lwIP's backlog counter is also a u8_t,
 * too small to express 1024. */
#define TCP_LISTEN_BACKLOG 0
/* SO_REUSEADDR does what it does on Linux: a listener can be bound again
 * while connections from the old one are still on its port. */
#define SO_REUSE 1
/* Bound what one peer can park in the out-of-order queue (a hostile or
 * lossy peer could otherwise hold much of the pbuf pool). */
#define TCP_OOSEQ_MAX_PBUFS 16
/* TIME_WAIT lasts 2 * TCP_MSL. lwIP's default (2 * 60 s) with no recycling
 * stalls new-connection benchmarks: clients and slirp reuse ports within
 * seconds, and lwIP answers a SYN that matches a TIME_WAIT pcb with an ACK or
 * RST. Chosen: 2 s of TIME_WAIT (segments do not linger for a second on a
 * virtual link) AND Linux-style recycling: a SYN whose sequence number lies
 * beyond the old connection's ends the TIME_WAIT pcb and goes to the listener
 * (net/tcp_hooks.c, via LWIP_HOOK_TCP_INPACKET_PCB). */
#define TCP_MSL 1000UL
/* Compute the TCP checksum while tcp_write copies data instead of in a second
 * pass (the user network offers no checksum offload)... */
#define LWIP_CHECKSUM_ON_COPY 1
/* lwIP's data copies (pbuf_take_at, pbuf_copy_partial, tcp_write) are the
 * data path's copy routine (net/copy.c), chosen by what runs the guest. */
#include <stddef.h>
void *net_copy(void *dst, const void *src, size_t n);
#define MEMCPY(dst, src, len) net_copy(dst, src, len)
/* ...but not at all where the device completes TCP checksums (netif.c then
 * clears the netif's NETIF_CHECKSUM_GEN_TCP, and lwIP never uses the sum):
 * a plain copy. tcp_out.c and pbuf.c expand this, with netif.h and
 * inet_chksum.h in scope; the sum is the uncomplemented one lwIP expects. */
#define LWIP_CHKSUM_COPY(dst, src, len)                                                        \
	(netif_default && !(netif_default->chksum_flags & NETIF_CHECKSUM_GEN_TCP)                \
		 ? (MEMCPY(dst, src, len), (u16_t)0)                                            \
		 : (MEMCPY(dst, src, len), (u16_t)~inet_chksum(dst, len)))
/* Checksums generated and checked per interface and, on receive, per frame:
 * with the checksum offloads the device completes TCP and UDP
 * checksums we send, and vouches for some it delivers (netif.c). One image
 * serves back-ends with and without them. */
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1

/* ---- hooks (net/lwip_hooks.h) ---------------------------------------------- */
#define LWIP_HOOK_FILENAME "lwip_hooks.h"
/* RFC 6528-style initial sequence numbers instead of lwIP's predictable
 * counter. */
#define LWIP_HOOK_TCP_ISN(local_ip, local_port, remote_ip, remote_port) \
	net_tcp_isn((local_ip), (local_port), (remote_ip), (remote_port))
/* TIME_WAIT recycling, see TCP_MSL above. */
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
	net_tcp_inpacket((pcb), (hdr), (optlen), (opt1len), (opt2), (p))

/* ---- statistics ------------------------------------------------------------ */
/* Counters for every protocol and pool, printed at exit by net/stats.c.
 * LWIP_STATS_DISPLAY gives each pool its name in the stats. */
#define LWIP_STATS 1
/* 32-bit counters: the default 16-bit ones wrap within one benchmark run. */
#define LWIP_STATS_LARGE 1
#define LWIP_STATS_DISPLAY 1
#define LINK_STATS 1
#define ETHARP_STATS 1
#define IP_STATS 1
#define ICMP_STATS 1
#define UDP_STATS 1
#define TCP_STATS 1
#define MEM_STATS 1
#define MEMP_STATS 1
#define SYS_STATS 0 /* no semaphores or mailboxes to count */

#endif
