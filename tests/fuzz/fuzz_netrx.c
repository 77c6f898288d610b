/*
 * fuzz_netrx: the guest's receive path from a raw virtio-net buffer up to the
 * application: the driver's vnet_rx (header checks, ring), net/netif.c,
 * lwIP's Ethernet, ARP, IPv4 (fragments too), ICMP, UDP and TCP input, and
 * the socket layer (net/socket.c, net/udp.c), with an application that
 * listens on TCP port 80 and UDP port 7, accepts, reads, echoes, writes,
 * shuts down and closes what arrives, and connects out when told to. The
 * driver is the guest's own, unchanged, over a simulated device
 * (netrx/device.c); the kernel is host stand-ins (netrx/host.c). The
 * interface is 10.0.0.2/24 with MAC 52:54:00:12:34:56.
 *
 * Input: one configuration byte, one device byte (bits 0x0f: how the
 * simulated device handles notifications: DEV_MISS_* in netrx/netrx.h; 0 is
 * QEMU's way, the other modes lose notifications as issue 12's race does,
 * which the driver must repair; bit 0x80: the records are extended, below;
 * the other bits are ignored), then records of
 *     ctl (1 byte) | len (2 bytes, little-endian) | bytes
 * or, extended,
 *     ctl (1 byte) | xctl (1 byte) | repeat (1 byte) | len (2 bytes) | bytes
 * where bytes are what the device writes into the next receive buffer (the
 * 12-byte virtio_net_hdr, then an Ethernet frame; more than a buffer holds
 * goes on into the next ones, as a merged TCP segment does) and len is the
 * length it reports in the used ring (it may claim more than it wrote). The
 * device offers the offloads QEMU offers on tap, and the driver takes them:
 * the header's flags, gso_type, hdr_len, gso_size, csum_start, csum_offset
 * and num_buffers are the fuzzer's. The ctl bits:
 *     0x01  fix the frame's IPv4 header checksum and its TCP/UDP/ICMP checksum,
 *           and the header's num_buffers (the buffers the record fills)
 *     0x02  TCP sequence and acknowledgment numbers are relative to the
 *           connection the segment belongs to (by default its rcv_nxt and
 *           snd_nxt; xctl picks other edges), so a fuzzer can stay in (or
 *           just outside) the window whatever our ISN was; a segment of no
 *           connection (a SYN to the listener) keeps its numbers
 *     0x04  the device queues the next frame before the stack polls (a batch:
 *           the action runs, but neither a poll nor time comes between this
 *           record and the next; 32 such use every receive buffer)
 *     0x38  what the application does next (enum action)
 *     0xc0  how much time passes after it: 0, 10 ms, 300 ms, 4 s
 * The xctl bits (0 keeps a record as the plain one is):
 *     0x03  with ctl 0x02, what the sequence number counts from (enum
 *           seq_base): rcv_nxt; rcv_nxt + rcv_wnd, the right edge of the
 *           window lwIP holds; rcv_nxt + rcv_ann_wnd; rcv_ann_right_edge, the
 *           right edge last announced. "At the right edge minus 10" is base
 *           1 and 0xfffffff6 in the segment's sequence field.
 *     0x0c  with ctl 0x02, what the acknowledgment counts from (enum
 *           ack_base): snd_nxt; lastack (snd_una: a duplicate ACK); snd_nxt +
 *           snd_wnd; snd_lbb (every byte the socket handed lwIP, sent or not)
 *     0x30  the application's reading, changed with the action (enum
 *           reading): unchanged; stops reading (the window closes as data
 *           arrives); reads again (the window reopens); reads one byte from
 *           each connection (the window opens by one)
 *     0x40  with ctl 0x02, spread the repetitions: repetition i's sequence
 *           number is i * (its payload + 1) further on, so they land out of
 *           order with a one-byte hole between each
 *     0x80  time passes once, after the last repetition (else after each)
 * and repeat says how many times the record's frame is delivered: repeat + 1
 * for repeat < 128, else (repeat - 127) * 128 (128 to 16,384), each time
 * with its numbers made relative afresh (1-byte segments at rcv_nxt repeated
 * make an in-order stream). The action and the reading change run once,
 * after the last repetition. An input's repetitions beyond its first
 * (records, and the 50 ms steps of time they let pass, counted together)
 * stop at REPEAT_BUDGET.
 *
 * Every input starts from the same state: no connections, empty ARP table,
 * the same "random" numbers, and the clock at the same phase of the ISN
 * clock. After the records, a second of fake time passes (lwIP's timers:
 * delayed ACKs, retransmissions, TIME_WAIT), then the application closes
 * everything, whatever lwIP still holds is aborted, and every pool, the
 * heap, the socket layer and the descriptor table must be back where they
 * were: a leak inside lwIP's pools is a crash here.
 *
 * Checked besides ASan/UBSan/LSan and every KASSERT and lwIP assertion: no
 * call on a non-blocking socket parks, no poll loop spins without end, every
 * frame transmitted is well-formed with valid checksums, the device is given
 * back every receive buffer, no side of the device is left waiting for a
 * notification of entries the driver published, and, after every record and
 * at the end, no connection's socket holds more than RX_PBUFS_PER_SOCKET_MAX
 * pbufs of received data (a peer's tiny segments to an app that does not
 * read must not pin a receive buffer each), and no connection in its
 * handshake scales windows unless our SYN-ACK offered scaling. The bytes of
 * a receive buffer past the frame the device reported are poisoned for ASan
 * (netrx/device.c): reading them is a crash too.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "lwip/etharp.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"
#include "netif/ppp/ppp_opts.h" /* PPP_NUM_TIMEOUTS, for the pool sizes */
#include "drivers/virtio/virtio.h"
#include "kernel/kernel.h"
#include "net/lwip_hooks.h"
#include "net/net.h"
#include "net/net_internal.h"
#include "net/sock.h" /* read-only: what a socket holds of received data */
#include "tests/fuzz/netrx/netrx.h"

#define MAX_RECORDS 64
#define MAX_CONNS   16
#define RECORD_MAX  65535 /* a record's bytes: a merged TCP segment spans several buffers */
#define HTTP_PORT   80
#define ECHO_PORT   7
#define PEER_PORT   8080 /* where the app's own connections go (on 10.0.0.1) */
#define MS          1000000ULL
/* Repetitions past the first of each record, and the 50 ms steps of time
 * they let pass, that one input may spend: enough for a 256 KiB window of
 * full segments many times over, or thousands of tiny segments, and few
 * enough that no input runs long. */
#define REPEAT_BUDGET 8192
/* The most pbufs of received data one connection may hold: its socket's
 * unread chain, lwIP's refused data and out-of-order queue together. The
 * socket layer's bound (net/sock.h), lwIP's out-of-order bound, and one
 * refused piece: a merged segment of up to 64 KiB, in 2 KiB buffers. A
 * peer that sends the window in 1-byte segments, each pinning a whole
 * buffer, would pass it without the socket layer's copying and bound. */
#define RX_REFUSED_PBUFS_MAX (65536 / 2048 + 2)
#define RX_PBUFS_PER_SOCKET_MAX (SOCK_RX_BUFS_MAX + TCP_OOSEQ_MAX_PBUFS + RX_REFUSED_PBUFS_MAX)

/* The configuration byte. */
#define CFG_LAZY_TX   0x01 /* the device completes transmissions only as time passes */
#define CFG_NODELAY   0x02 /* TCP_NODELAY on the listener (accepted sockets inherit it) */
#define CFG_SMALL_BUF 0x04 /* 2 KiB send buffers: the ring wraps, writes come back short */
#define CFG_KEEPALIVE 0x08 /* SO_KEEPALIVE on accepted sockets */
#define CFG_SMALL_RD  0x10 /* read 7 bytes at a time */
#define CFG_NO_READ   0x20 /* accept but never read: windows close, queues fill */
#define CFG_ECHO3     0x40 /* answer every read three times over */
#define CFG_BACKLOG1  0x80 /* a listen backlog of 1 */

/* The device byte: the simulated device's mode (DEV_MISS_*), and the record
 * format. */
#define HEAD_DEV_MODE    0x7f
#define HEAD_EXT_RECORDS 0x80

/* ctl bits. */
#define CTL_FIX_CSUM 0x01
#define CTL_REL_SEQ  0x02
#define CTL_BATCH    0x04
#define CTL_ACTION(c) (((c) >> 3) & 7)
#define CTL_TIME(c)   ((c) >> 6)

/* xctl bits (extended records). */
#define XCTL_SEQ_BASE(x) ((x) & 3)
#define XCTL_ACK_BASE(x) (((x) >> 2) & 3)
#define XCTL_READING(x)  (((x) >> 4) & 3)
#define XCTL_SPREAD      0x40
#define XCTL_TIME_ONCE   0x80

enum seq_base { SEQ_RCV_NXT, SEQ_RCV_WND_EDGE, SEQ_ANN_WND_EDGE, SEQ_ANN_RIGHT_EDGE };
enum ack_base { ACK_SND_NXT, ACK_LASTACK, ACK_SND_WND_EDGE, ACK_SND_LBB };
enum reading {
	READING_UNCHANGED,
	READING_STOP,     /* the app stops reading: what arrives stays queued */
	READING_RESUME,   /* it reads again (as CFG_SMALL_RD says), at once */
	READING_ONE_BYTE, /* it reads one byte from each connection, once */
};

enum action {
	ACT_NONE,
	ACT_CLOSE,        /* close the oldest connection */
	ACT_SHUT_WR,      /* shutdown(SHUT_WR) on the oldest */
	ACT_SHUT_RD,      /* shutdown(SHUT_RD) on the oldest */
	ACT_WRITE_BIG,    /* writev 64 KiB to the newest */
	ACT_CONNECT,      /* connect to 10.0.0.1:PEER_PORT from a fixed local port */
	ACT_QUERY,        /* names, FIONREAD, SO_ERROR, MSG_PEEK, options on each */
	ACT_RELISTEN,     /* close the listener (resetting what waits) and listen again */
};

static const unsigned time_step_ms[4] = { 0, 10, 300, 4000 };

static struct {
	uint8_t cfg;
	int listener, udp;
	int conn[MAX_CONNS];
	int nconn;
	int nconnects;        /* outgoing connections made by this input */
	bool reading;         /* the app reads what arrives (CFG_NO_READ, READING_*) */
} app;

/* ---- the baseline every input must return to ----------------------------------- */

struct snapshot {
	uint32_t memp_used[MEMP_MAX];
	uint32_t mem_used;
};

static struct snapshot baseline;

static void snapshot_take(struct snapshot *s)
{
	for (int i = 0; i < MEMP_MAX; i++)
		s->memp_used[i] = lwip_stats.memp[i] ? lwip_stats.memp[i]->used : 0;
	s->mem_used = (uint32_t)lwip_stats.mem.used;
}

/* NULL when the stack is back at the baseline; else what is not. */
static const char *off_baseline(void)
{
	static char why[128];
	struct snapshot now;
	snapshot_take(&now);
	for (int i = 0; i < MEMP_MAX; i++)
		if (now.memp_used[i] != baseline.memp_used[i]) {
			ksnprintf(why, sizeof why, "pool %s: %u in use, %u at the start", lwip_stats.memp[i]->name,
				  (unsigned)now.memp_used[i], (unsigned)baseline.memp_used[i]);
			return why;
		}
	if (now.mem_used != baseline.mem_used) {
		ksnprintf(why, sizeof why, "lwIP heap: %u bytes in use, %u at the start", (unsigned)now.mem_used,
			  (unsigned)baseline.mem_used);
		return why;
	}
	if (net_socket_counters.sockets_open || net_udp_counters.open || fd_count_open())
		return "a socket or descriptor is still open";
	return NULL;
}

/* ---- driving the stack ------------------------------------------------------------ */

/* What the guest's main loop does between the app's calls: poll the network
 * and the egress pass until nothing more happens at this instant. */
static void pump(void)
{
	for (int turns = 0;; turns++) {
		if (!(app.cfg & CFG_LAZY_TX))
			dev_tx_complete();
		if (!executor_poll())
			break;
		if (turns == 10000) {
			host_verbose = true;
			net_socket_stats_print();
			harness_fail("the network had work 10000 times in a row without time passing (livelock)");
		}
	}
}

static void app_service(void);

/* Complete every transmission and have the driver reclaim it now (the guest
 * reclaims at its next poll, which may be much later): a frame's pbufs are
 * freed, so the pools can be compared. */
static void reclaim_all(void)
{
	dev_tx_complete();
	net_poll();
	pump();
}

/* Let `ms` of fake time pass in 50 ms steps (lwIP's TCP timer ticks every
 * 250 ms), the app serving at each. */
static void advance(unsigned ms)
{
	while (ms) {
		unsigned step = ms < 50 ? ms : 50;
		fake_now_ns += step * MS;
		ms -= step;
		dev_tx_complete();
		pump();
		app_service();
	}
}

/* ---- rewriting frames as the ctl byte asks ---------------------------------------- */

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)), put16(p + 2, (uint16_t)v); }

/* The pcb a segment from ip:sport to our dport belongs to, in any state but
 * LISTEN; NULL when none. */
static struct tcp_pcb *pcb_of(uint32_t remote_ip_be, uint16_t sport, uint16_t dport)
{
	struct tcp_pcb *lists[2] = { tcp_active_pcbs, tcp_tw_pcbs };
	for (int l = 0; l < 2; l++)
		for (struct tcp_pcb *pcb = lists[l]; pcb; pcb = pcb->next)
			if (pcb->local_port == dport && pcb->remote_port == sport &&
			    ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)) == remote_ip_be)
				return pcb;
	return NULL;
}

/* Where xctl says a peer's sequence number counts from on `pcb`: an edge of
 * our receive window. */
static uint32_t seq_base(const struct tcp_pcb *pcb, enum seq_base base)
{
	switch (base) {
	case SEQ_RCV_NXT:
		return pcb->rcv_nxt;
	case SEQ_RCV_WND_EDGE:
		return pcb->rcv_nxt + pcb->rcv_wnd;
	case SEQ_ANN_WND_EDGE:
		return pcb->rcv_nxt + pcb->rcv_ann_wnd;
	case SEQ_ANN_RIGHT_EDGE:
		return pcb->rcv_ann_right_edge;
	}
	return pcb->rcv_nxt;
}

/* Where xctl says a peer's acknowledgment counts from: an edge of what we
 * sent. */
static uint32_t ack_base(const struct tcp_pcb *pcb, enum ack_base base)
{
	switch (base) {
	case ACK_SND_NXT:
		return pcb->snd_nxt;
	case ACK_LASTACK:
		return pcb->lastack;
	case ACK_SND_WND_EDGE:
		return pcb->snd_nxt + pcb->snd_wnd;
	case ACK_SND_LBB:
		return pcb->snd_lbb;
	}
	return pcb->snd_nxt;
}

/* b: virtio-net header + Ethernet frame, n bytes, delivered for the
 * `repetition`th time (from 0) of its record. */
static void fix_frame(uint8_t *b, size_t n, uint8_t ctl, uint8_t xctl, unsigned repetition)
{
	if (!(ctl & (CTL_FIX_CSUM | CTL_REL_SEQ)) || n < 12 + 14 + 20)
		return;
	uint8_t *eth = b + 12, *ip = eth + 14;
	size_t room = n - 26, ihl = (size_t)(ip[0] & 15) * 4, total = get16(ip + 2);
	if (get16(eth + 12) != 0x0800 || ihl < 20 || ihl > room)
		return;
	bool whole = !(get16(ip + 6) & 0x3fff) && total >= ihl && total <= room; /* not a fragment, all here */
	uint8_t *l4 = ip + ihl;
	uint16_t l4len = (uint16_t)(whole ? total - ihl : 0);
	if ((ctl & CTL_REL_SEQ) && ip[9] == 6 && l4len >= 20) {
		uint32_t src, seq = get32(l4 + 4), ack = get32(l4 + 8);
		memcpy(&src, ip + 12, 4);
		struct tcp_pcb *pcb = pcb_of(src, get16(l4), get16(l4 + 2));
		if (pcb) {
			seq += seq_base(pcb, (enum seq_base)XCTL_SEQ_BASE(xctl));
			ack += ack_base(pcb, (enum ack_base)XCTL_ACK_BASE(xctl));
		}
		if (xctl & XCTL_SPREAD) {
			size_t hdr = (size_t)(l4[12] >> 4) * 4;
			uint32_t payload = (uint32_t)(hdr < l4len ? l4len - hdr : 0);
			seq += repetition * (payload + 1);
		}
		put32(l4 + 4, seq);
		put32(l4 + 8, ack);
	}
	if (!(ctl & CTL_FIX_CSUM))
		return;
	put16(ip + 10, 0);
	put16(ip + 10, csum_fold(csum_add(0, ip, ihl)));
	int at;
	uint32_t sum;
	if (ip[9] == 6 && l4len >= 20)
		at = 16, sum = csum_pseudo(ip, 6, l4len);
	else if (ip[9] == 17 && l4len >= 8)
		at = 6, sum = csum_pseudo(ip, 17, l4len);
	else if (ip[9] == 1 && l4len >= 4)
		at = 2, sum = 0;
	else
		return;
	put16(l4 + at, 0);
	uint16_t c = csum_fold(csum_add(sum, l4, l4len));
	put16(l4 + at, ip[9] == 17 && c == 0 ? 0xffff : c); /* UDP: 0 means "none" */
}

/* ---- the application ---------------------------------------------------------------- */

static struct sockaddr_in addr(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	if (ip)
		inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

static void must(bool ok, const char *what)
{
	if (!ok)
		harness_fail("%s failed: errno %d", what, errno);
}

/* Listen on port 80; false when the port is taken. */
static bool open_listener(void)
{
	int one = 1;
	app.listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	must(app.listener >= 0, "socket");
	must(setsockopt(app.listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0, "SO_REUSEADDR");
	if (app.cfg & CFG_NODELAY)
		must(setsockopt(app.listener, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0, "TCP_NODELAY");
	struct sockaddr_in sin = addr(NULL, HTTP_PORT);
	if (bind(app.listener, (struct sockaddr *)&sin, sizeof sin) < 0) {
		must(errno == EADDRINUSE, "bind :80");
		close(app.listener);
		app.listener = -1;
		return false;
	}
	must(listen(app.listener, app.cfg & CFG_BACKLOG1 ? 1 : 8) == 0, "listen");
	return true;
}

static void app_open(void)
{
	app.nconn = app.nconnects = 0;
	app.reading = !(app.cfg & CFG_NO_READ);
	must(open_listener(), "bind :80 at the start of an input");
	app.udp = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	must(app.udp >= 0, "socket (udp)");
	struct sockaddr_in sin = addr(NULL, ECHO_PORT);
	must(bind(app.udp, (struct sockaddr *)&sin, sizeof sin) == 0, "bind :7");
}

static void add_conn(int fd)
{
	if (app.nconn == MAX_CONNS) {
		close(fd);
		return;
	}
	app.conn[app.nconn++] = fd;
}

static void drop_conn(int i)
{
	close(app.conn[i]);
	memmove(&app.conn[i], &app.conn[i + 1], (size_t)(app.nconn - i - 1) * sizeof app.conn[0]);
	app.nconn--;
}

static void accept_all(void)
{
	while (app.listener >= 0) {
		struct sockaddr_in peer;
		socklen_t len = sizeof peer;
		int fd = accept4(app.listener, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK);
		if (fd < 0)
			return; /* EAGAIN, or a connection reset before we took it */
		trace("  app: accepted fd %d from port %u\n", fd, ntohs(peer.sin_port));
		int one = 1;
		if (app.cfg & CFG_SMALL_BUF) {
			int size = 2048;
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
		}
		if (app.cfg & CFG_KEEPALIVE)
			setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
		add_conn(fd);
	}
}

/* Read what connection i has and echo it; false when it was closed. Reads
 * whether or not poll said so (EAGAIN is a path too). */
static bool serve_conn(int i)
{
	static uint8_t buf[4096];
	int fd = app.conn[i];
	if (!app.reading)
		return true;
	size_t chunk = app.cfg & CFG_SMALL_RD ? 7 : sizeof buf;
	for (int reads = 0; reads < 8; reads++) {
		ssize_t n = read(fd, buf, chunk);
		if (n >= 0 || errno != EAGAIN)
			trace("  app: read fd %d: %zd (errno %d)\n", fd, n, n < 0 ? errno : 0);
		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			drop_conn(i); /* end of stream, or reset */
			return false;
		}
		if (n < 0)
			break;
		for (int k = 0; k < (app.cfg & CFG_ECHO3 ? 3 : 1); k++)
			if (write(fd, buf, (size_t)n) < 0)
				break; /* EAGAIN, EPIPE, ECONNRESET: the read side tells */
	}
	return true;
}

static void serve_udp(void)
{
	static uint8_t buf[2048];
	for (int k = 0; k < 16; k++) {
		struct sockaddr_in from;
		socklen_t len = sizeof from;
		ssize_t n = recvfrom(app.udp, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
		if (n < 0)
			return;
		trace("  app: udp datagram of %zd bytes from port %u\n", n, ntohs(from.sin_port));
		sendto(app.udp, buf, (size_t)n, 0, (struct sockaddr *)&from, len);
	}
}

/* One look at every descriptor, as a server's poll loop takes. */
static void poll_all(void)
{
	struct pollfd p[MAX_CONNS + 2];
	int n = 0;
	p[n++] = (struct pollfd){ app.listener, POLLIN, 0 }; /* -1: ignored */
	p[n++] = (struct pollfd){ app.udp, POLLIN | POLLOUT, 0 };
	for (int i = 0; i < app.nconn; i++)
		p[n++] = (struct pollfd){ app.conn[i], POLLIN | POLLOUT | POLLRDHUP, 0 };
	poll(p, (nfds_t)n, 0);
}

static void app_service(void)
{
	poll_all();
	accept_all();
	for (int i = 0; i < app.nconn;)
		i += serve_conn(i);
	serve_udp();
}

static void query(int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	int v, one = 1;
	socklen_t vlen = sizeof v;
	char c;
	getsockname(fd, (struct sockaddr *)&sin, &len);
	len = sizeof sin;
	getpeername(fd, (struct sockaddr *)&sin, &len);
	ioctl(fd, FIONREAD, &v);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &vlen);
	recv(fd, &c, 1, MSG_PEEK);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void act(enum action a)
{
	static uint8_t big[65536];
	int oldest = app.nconn ? app.conn[0] : -1, newest = app.nconn ? app.conn[app.nconn - 1] : -1;
	switch (a) {
	case ACT_NONE:
		break;
	case ACT_CLOSE:
		if (app.nconn)
			drop_conn(0);
		break;
	case ACT_SHUT_WR:
		shutdown(oldest, SHUT_WR);
		break;
	case ACT_SHUT_RD:
		shutdown(oldest, SHUT_RD);
		break;
	case ACT_WRITE_BIG: {
		if (!big[1])
			for (size_t i = 0; i < sizeof big; i++)
				big[i] = (uint8_t)(i % 251);
		struct iovec iov[3] = { { big, 100 }, { big + 100, 30000 }, { big + 30100, sizeof big - 30100 } };
		writev(newest, iov, 3);
		break;
	}
	case ACT_CONNECT: {
		if (app.nconn == MAX_CONNS)
			break;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		must(fd >= 0, "socket");
		/* A fixed local port: an ephemeral one would differ from input to
		 * input (lwIP's port counter is not reset), and so would replays. */
		struct sockaddr_in local = addr("10.0.0.2", (uint16_t)(40000 + app.nconnects++));
		struct sockaddr_in peer = addr("10.0.0.1", PEER_PORT);
		if (bind(fd, (struct sockaddr *)&local, sizeof local) == 0)
			connect(fd, (struct sockaddr *)&peer, sizeof peer);
		add_conn(fd);
		break;
	}
	case ACT_QUERY:
		for (int i = 0; i < app.nconn; i++)
			query(app.conn[i]);
		query(app.udp);
		break;
	case ACT_RELISTEN:
		/* lwIP is built without SO_REUSE, so SO_REUSEADDR does not let the
		 * new listener bind while connections on port 80 remain (Linux
		 * would): then the app goes on without one, until the next
		 * ACT_RELISTEN finds the port free. */
		if (app.listener >= 0)
			close(app.listener);
		open_listener();
		break;
	}
}

static void change_reading(enum reading r)
{
	switch (r) {
	case READING_UNCHANGED:
		break;
	case READING_STOP:
		app.reading = false;
		break;
	case READING_RESUME:
		app.reading = true;
		app_service();
		break;
	case READING_ONE_BYTE:
		for (int i = 0; i < app.nconn;) {
			uint8_t c;
			ssize_t n = read(app.conn[i], &c, 1);
			if (n == 0 || (n < 0 && errno != EAGAIN)) {
				drop_conn(i); /* end of stream, or reset */
				continue;
			}
			i++;
		}
		break;
	}
}

/* ---- what a connection may hold ------------------------------------------------------- */

static unsigned chain_pbufs(const struct pbuf *p)
{
	unsigned n = 0;
	for (; p; p = p->next)
		n++;
	return n;
}

/* Every connection of the app holds at most RX_PBUFS_PER_SOCKET_MAX pbufs
 * of received data: its socket's unread chain and, while it has a pcb,
 * what lwIP keeps for it (refused data, the out-of-order queue). */
static void check_rx_held(void)
{
	for (int i = 0; i < app.nconn; i++) {
		int err;
		struct sock *s = sock_of(app.conn[i], &err);
		if (!s)
			continue;
		unsigned unread = chain_pbufs(s->rx), lwip = 0;
		if (s->pcb) {
			lwip = chain_pbufs(s->pcb->refused_data);
			for (const struct tcp_seg *seg = s->pcb->ooseq; seg; seg = seg->next)
				lwip += chain_pbufs(seg->p);
		}
		if (unread + lwip > RX_PBUFS_PER_SOCKET_MAX)
			harness_fail("fd %d holds %u pbufs of received data (%u unread with %zu bytes, %u in lwIP), "
				     "more than RX_PBUFS_PER_SOCKET_MAX (%u)",
				     app.conn[i], unread + lwip, unread, s->rx_len, lwip,
				     (unsigned)RX_PBUFS_PER_SOCKET_MAX);
	}
}

/* ---- what a handshake agreed ------------------------------------------------------------ */

/* A connection still in its handshake scales windows only if the SYN-ACK we
 * sent (queued until the peer acknowledges it) offered scaling: lwIP would
 * take a window-scale option from a SYN that comes again, after a SYN-ACK
 * built from a first SYN without one, and the two sides would then read each
 * other's windows at different scales (RFC 7323: scaling needs the option
 * in both SYNs). */
static void check_handshake_scaling(void)
{
	for (const struct tcp_pcb *pcb = tcp_active_pcbs; pcb; pcb = pcb->next) {
		if (pcb->state != SYN_RCVD)
			continue;
		const struct tcp_seg *synack = pcb->unacked ? pcb->unacked : pcb->unsent;
		if (!synack || !(TCPH_FLAGS(synack->tcphdr) & TCP_SYN))
			continue;
		bool scaling = pcb->flags & TF_WND_SCALE, offered = synack->flags & TF_SEG_OPTS_WND_SCALE;
		if (scaling != offered)
			harness_fail("connection from port %u in SYN_RCVD: window scaling %s, but our SYN-ACK %s it",
				     pcb->remote_port, scaling ? "on" : "off", offered ? "offered" : "did not offer");
	}
}

/* ---- start and end of an input -------------------------------------------------------- */

/* One period of the ISN's 4 us clock (2^32 ticks): every input starts at a
 * multiple of it, so our ISNs are the same in every input. 250 periods make
 * exactly 2^32 ms, one turn of lwIP's 32-bit millisecond clock: after 250
 * inputs the start goes back to the first, which neither lwIP nor the ISN
 * can tell from time going on (and the 64-bit clock never wraps). */
#define ISN_PERIOD_NS ((1ULL << 32) * 4000)
#define PERIODS_PER_TURN 250

static void start_clock(void)
{
	static uint64_t inputs;
	fake_now_ns = (1 + inputs++ % PERIODS_PER_TURN) * ISN_PERIOD_NS;
	/* Overdue cyclic timers run now and restart from here: the same phase
	 * in every input. */
	pump();
}

/* Close everything, end what lwIP still holds, and check that nothing of
 * this input remains. */
static void teardown(void)
{
	while (app.nconn)
		drop_conn(app.nconn - 1);
	close(app.udp);
	if (app.listener >= 0)
		close(app.listener);
	dev_tx_complete();
	pump();
	/* Connections still closing (FIN_WAIT, LAST_ACK, TIME_WAIT, handshakes
	 * the app never saw) would outlive the input: end them. */
	while (tcp_active_pcbs)
		tcp_abort(tcp_active_pcbs);
	while (tcp_tw_pcbs)
		tcp_abort(tcp_tw_pcbs);
	if (tcp_listen_pcbs.listen_pcbs || tcp_bound_pcbs)
		harness_fail("a listening or bound pcb outlived its socket");
	etharp_cleanup_netif(netif_default);
	/* Fragments waiting for reassembly go when their timer says (15 s);
	 * TCP's timer stops at its next tick once no pcb is left. */
	for (int i = 0; i < 100 && (reclaim_all(), off_baseline()); i++)
		fake_now_ns += 250 * MS;
	const char *why = off_baseline();
	if (why) {
		host_verbose = true;
		net_stats_print();
		harness_fail("after the input: %s", why);
	}
	if (dev_rx_posted() != dev_rx_ring_size())
		harness_fail("%u of %u receive buffers are back on the ring", dev_rx_posted(), dev_rx_ring_size());
	/* The device's late stores land, and the driver gets one poll to see
	 * what they show: nothing may be owed after it. */
	dev_settle();
	reclaim_all();
	const char *owed = dev_owed();
	if (owed) {
		host_verbose = true;
		vnet_stats_print(); /* where the rings stand */
		harness_fail("after the input: %s", owed);
	}
	if (host_verbose)
		vnet_stats_print(); /* kicks, repairs, watchdog so far */
}

/* The guest's pool sizes. Pools from malloc have no size, so lwIP leaves
 * their "avail" statistic at 0, and code that asks whether a pool is full
 * (net/tcp_hooks.c, for SYN floods) would always hear yes. */
static const u16_t pool_size[MEMP_MAX] = {
#define LWIP_MEMPOOL(name, num, size, desc) num,
#include "lwip/priv/memp_std.h"
};

static void init_once(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	host_verbose = getenv("NETRX_VERBOSE") != NULL;
	host_random_reset();
	/* The first socket starts the network: the driver over the simulated
	 * device, lwIP, the interface. */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	must(fd >= 0, "socket (start)");
	close(fd);
	for (int i = 0; i < MEMP_MAX; i++)
		lwip_stats.memp[i]->avail = pool_size[i];
	/* The heap comes from malloc here, which leaves its size unset; the
	 * socket layer's pressure test reads it (netif.c): the guest's size. */
	lwip_stats.mem.avail = MEM_SIZE;
	/* The ISN key is drawn at the first ISN: draw it now, from the same
	 * "random" numbers in every process. */
	ip4_addr_t a = { 0 };
	net_tcp_isn(&a, 0, &a, 0);
	reclaim_all();
	snapshot_take(&baseline);
}

/* One record of the input. */
struct record {
	uint8_t ctl, xctl;  /* xctl 0 for a plain record */
	unsigned repeat;    /* deliveries of its frame */
	uint16_t len;       /* what the device claims it wrote */
	const uint8_t *bytes;
	size_t n;           /* bytes the input has for it (at most len) */
};

static unsigned repeat_count(uint8_t r) { return r < 128 ? r + 1u : (r - 127u) * 128; }

/* The record at data[*p], moving *p past it; false when the input ends. */
static bool next_record(const uint8_t *data, size_t size, size_t *p, bool extended, struct record *rec)
{
	size_t head = extended ? 5 : 3;
	if (*p + head > size)
		return false;
	const uint8_t *h = data + *p;
	rec->ctl = h[0];
	rec->xctl = extended ? h[1] : 0;
	rec->repeat = extended ? repeat_count(h[2]) : 1;
	rec->len = (uint16_t)(h[head - 2] | h[head - 1] << 8);
	*p += head;
	rec->n = rec->len < size - *p ? rec->len : size - *p;
	rec->bytes = data + *p;
	*p += rec->n;
	return true;
}

/* Deliver a record's frame, as many times as it says and the budget allows,
 * then the app's action and reading change and the time it asks for. */
static void run_record(int r, const struct record *rec, unsigned *budget)
{
	static uint8_t frame[RECORD_MAX];
	size_t in_buf = rec->n < RECORD_MAX ? rec->n : RECORD_MAX;
	unsigned time_ms = time_step_ms[CTL_TIME(rec->ctl)];
	unsigned step_cost = 1 + time_ms / 50;
	bool batch = rec->ctl & CTL_BATCH, time_each = !(rec->xctl & XCTL_TIME_ONCE);
	trace("record %d: ctl %02x, xctl %02x, %zu bytes, claims %u, %u times\n", r, rec->ctl, rec->xctl, in_buf,
	      rec->len, rec->repeat);
	for (unsigned i = 0; i < rec->repeat; i++) {
		if (i) {
			unsigned cost = batch || !time_each ? 1 : step_cost;
			if (cost > *budget) {
				trace("record %d: repeat budget spent after %u times\n", r, i);
				break;
			}
			*budget -= cost;
		}
		memcpy(frame, rec->bytes, in_buf);
		fix_frame(frame, in_buf, rec->ctl, rec->xctl, i);
		dev_rx(frame, in_buf, rec->len, rec->ctl & CTL_FIX_CSUM);
		if (batch)
			continue;
		pump();
		app_service();
		if (i + 1 < rec->repeat) {
			pump();
			if (time_each)
				advance(time_ms);
		}
	}
	check_rx_held();
	check_handshake_scaling();
	act((enum action)CTL_ACTION(rec->ctl));
	change_reading((enum reading)XCTL_READING(rec->xctl));
	if (batch)
		return;
	pump();
	advance(time_ms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	init_once();
	if (size < 2)
		return 0;
	trace("input: %zu bytes, configuration %02x, device %02x\n", size, data[0], data[1]);
	host_random_reset();
	dev_set_mode(data[1] & HEAD_DEV_MODE);
	start_clock();
	app.cfg = data[0];
	app_open();
	bool extended = data[1] & HEAD_EXT_RECORDS;
	unsigned budget = REPEAT_BUDGET;
	size_t p = 2;
	struct record rec;
	for (int r = 0; r < MAX_RECORDS && next_record(data, size, &p, extended, &rec); r++)
		run_record(r, &rec, &budget);
	pump();
	app_service();
	advance(1000);
	check_rx_held();
	check_handshake_scaling();
	teardown();
	return 0;
}
