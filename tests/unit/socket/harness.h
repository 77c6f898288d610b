/*
 * harness.h: what the socket unit tests get from their host harness: the fake
 * clock (host.c), the in-memory loopback network and its log of TCP segments
 * (loopnet.c), and read-only views into the socket layer's private state
 * (probe.c).
 */
#ifndef TEST_SOCKET_HARNESS_H
#define TEST_SOCKET_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- host.c: time ------------------------------------------------------------ */
/* clock_ns() returns this; only the test and cpu_park() move it. */
extern uint64_t fake_now_ns;
/* cpu_park() fails the test when a wait would run past this (a call that
 * blocks forever otherwise spins through lwIP's timers for ever). */
extern uint64_t fake_park_limit_ns;
/* timer_program_oneshot() calls (outside parks: the naive reload switch) and
 * the last deadline given. */
extern uint64_t fake_oneshot_programs, fake_oneshot_deadline;
/* An unrelated interrupt at fake_wake_at_ns ends the park that reaches it
 * (UINT64_MAX: none); with a period, another comes that much later. The
 * earliest and latest deadlines parks were given. socket_test_setup resets
 * all four. */
extern uint64_t fake_wake_at_ns, fake_wake_period_ns;
extern uint64_t fake_park_min_deadline, fake_park_max_deadline;
extern uint64_t fake_parks; /* cpu_park calls that parked (the wake flag was down) */
/* A signal's handler "runs" at the first wait-loop turn at or after
 * fake_signal_at_ns (UINT64_MAX: none); fake_signals_run counts them. */
extern uint64_t fake_signal_at_ns, fake_signals_run;
/* vnet_rx_irq_enable(true) calls: how often a wait turned the interrupt on. */
extern uint64_t fake_irq_arms;
extern uint64_t host_heap_free; /* what mem_heap_room reports (host.c) */
/* The next this many vnet_tx_idle() calls find the device busy, each moving
 * the clock 1 ms (UINT64_MAX: it never takes its frames); setup zeroes it. */
extern uint64_t fake_tx_busy_looks;

/* ---- loopnet.c: the network ---------------------------------------------------- */
/* The one address (10.0.0.1/24); both ends of every connection use it. */
#define LOOPNET_ADDR "10.0.0.1"

/* One TCP segment that left the netif. Ports in host order. */
struct seg_rec {
	uint16_t src_port, dst_port;
	uint8_t flags;        /* TCP_FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10 */
	uint32_t seqno;
	uint16_t payload_len;
};
#define SEG_FIN 0x01
#define SEG_SYN 0x02
#define SEG_RST 0x04

void seglog_clear(void);
size_t seglog_count(void);
const struct seg_rec *seglog_get(size_t i);
/* Segments from src_port carrying data / with any of `flags` set, since the
 * last seglog_clear(). */
unsigned seglog_data_from(uint16_t src_port);
unsigned seglog_flags_from(uint16_t src_port, uint8_t flags);
/* The wire loses the next `count` segments from src_port that carry data
 * (logged all the same): a lossy link, for retransmission tests. */
void loopnet_lose_data_from(uint16_t src_port, unsigned count);
/* Frames queued on the wire, not yet fed back to lwIP. */
size_t loopnet_queued(void);
/* What net_rx_memory_short() answers the socket layer (default false). */
extern bool loopnet_memory_short;

/* Run the network and the egress pass until nothing more happens at this
 * instant (time does not move). */
void pump(void);
/* Let `ms` of fake time pass in small steps, pumping at each: delayed ACKs,
 * retransmissions and TIME_WAIT run their course. */
void settle_ms(unsigned ms);

/* ---- probe.c: the socket layer's private state --------------------------------- */
struct tcp_pcb;
struct tcp_pcb *probe_pcb(int fd);   /* NULL when none (or not a socket) */
bool probe_on_egress(int fd);
/* Whether fd's socket is really linked on the egress list (not just flagged). */
bool probe_on_egress_list(int fd);
/* The listener's backlog size and its slot sockets that hold connections. */
int probe_backlog(int fd);
size_t probe_tx_len(int fd);
/* Sockets that hold bytes (or a FIN) to send, are off the egress list and
 * are not blocked on lwIP's send window: each one is a send that nothing will
 * ever restart. */
int probe_egress_strays(void);
/* Sockets allocated now, closed or not. */
uint64_t probe_sockets_open(void);
/* The pbufs (receive buffers) fd's socket holds unread. */
unsigned probe_rx_bufs(int fd);

#endif

/* ---- pairs.c: connections for the tests to work on ------------------------------ */
/* A listening socket on LOOPNET_ADDR:port. */
int listen_on(uint16_t port, int backlog);
/* A blocking connect to LOOPNET_ADDR:port; the fd. */
int connect_to(uint16_t port);
/* A connected pair through a listener on `port` (closed again): *client has
 * connected, *server is what accept returned. */
void make_pair(uint16_t port, int *client, int *server);
uint16_t local_port_of(int fd);
void set_nonblock(int fd);
/* TCP_NODELAY on: each write leaves at once, Nagle off. */
void set_nodelay(int fd);
/* The byte at offset i of the tests' data stream. */
static inline uint8_t pattern(size_t i) { return (uint8_t)(i % 251); }
/* Fill buf with pattern() from stream offset `from`. */
static inline void fill_pattern(uint8_t *buf, size_t len, size_t from)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(from + i);
}
/* Read exactly len bytes (blocking or not) and check them against pattern()
 * from offset `from`. */
void read_pattern(int fd, size_t from, size_t len);
/* cmocka setup/teardown: a time limit for blocking calls; afterwards every
 * descriptor is closed, time runs on until lwIP lets go, and no socket may
 * remain allocated. */
int socket_test_setup(void **state);
int socket_test_teardown(void **state);
