/*
 * floor.c: the floor, the benchmark's reference guest (issue 37, item 6): it
 * answers each HTTP request with the least work the VMM path allows, so that
 * every guest's ratio can be read against what this host allows. It drives
 * the virtio-net driver directly (drivers/virtio/virtio.h: vnet_rx() hands
 * it each received frame in the device's own buffer, vnet_tx() takes a
 * reply from one of its slots) with no TCP/IP stack and no sockets: ARP
 * answered, IPv4 checked, TCP answered statelessly (tcp.c: the handshake,
 * ONE segment with the answer, the close), the answer made by httpd's own
 * code (answer.c), so its bytes are httpd's.
 *
 *   floor [-p PORT] [-s] [-q]
 *     -p PORT   the TCP port answered (default 8080)
 *     -s        GET /__shutdown answers, then the floor exits 0
 *     -q        quiet: no line of its own but the errors (the net: line and
 *               the counters are printed anyway)
 * Kernel options ip= (required: there is no DHCP here), mask= and gw= (only
 * printed: every reply goes back to the MAC address its request came from).
 * SIGINT (Ctrl-C on the console) and SIGTERM stop it too, exit 0.
 *
 * lwIP is kept out entirely: nothing here calls the network layer (net/),
 * whose net_init() is what starts lwIP (the socket layer calls it at the
 * first socket), so it is never started, and the linker takes none of
 * libnet.a's objects into this image (`nm build/apps/floor.elf | grep lwip`
 * finds nothing; test 70 checks). The wait is the kernel's own: this file
 * gives the executor a wait source made of the driver's calls, as
 * net/sock_wait.c does for the stack, and block_on() polls it when frames
 * wait, spins briefly, then parks with the receive interrupt on, so an idle
 * floor costs no CPU. The kernel prints the registered counters at exit and
 * on Ctrl-T (0x14) on the console: the floor's line, the driver's, the
 * kernel's, in the `prefix: label N, ...` form bench/runner/report/counters.py
 * reads.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include "kernel/kernel.h"
#include "floor.h"

/* Frames taken per poll, as net.c's NET_RX_BUDGET: enough for a burst,
 * few enough that a Ctrl-T or a signal gets its turn. */
#define RX_BUDGET 64
#define EX_USAGE 64

struct floor_config floor_cfg;
struct floor_counters floor_counters;
bool floor_stop;

/* ---- the wait source: the driver alone ---------------------------------------- */

/* One poll: finished frames reclaimed, received frames answered; replies
 * made in one poll are published together when two or more frames waited
 * (the driver's batching, as net_poll does). */
static bool source_poll(void)
{
	vnet_tx_batch_begin(vnet_rx_burst());
	int work = vnet_tx_reclaim();
	work += vnet_rx(link_input, NULL, RX_BUDGET);
	vnet_tx_batch_end();
	return work > 0;
}

static bool source_due(void) { return vnet_rx_pending() || vnet_service_due(); }
static bool source_arm(void) { return vnet_rx_irq_enable(true); }
static void source_disarm(void) { vnet_rx_irq_enable(false); }

static const struct wait_source floor_source = {
	.due = source_due,
	.device_ready = vnet_rx_pending,
	.poll = source_poll,
	.next_deadline = vnet_next_deadline_ns,
	.arm = source_arm,
	.disarm = source_disarm,
	.wake = &vnet_wake,
	.drained = vnet_tx_idle, /* exit waits for the last answer to leave */
};

static bool stopped(void *ctx)
{
	(void)ctx;
	return floor_stop;
}

/* SIGINT or SIGTERM arrived (the handler runs in a wait loop's turn). */
static bool got_signal;

static void on_signal(int sig)
{
	(void)sig;
	got_signal = true;
	floor_stop = true;
}

/* ---- start ---------------------------------------------------------------------- */

/* A dotted quad, host byte order; false when `s` is not one (the boot's
 * option check lets none through). */
static bool parse_ip(const char *s, uint32_t *ip)
{
	uint32_t v = 0;
	for (int part = 0; part < 4; part++) {
		unsigned n = 0, digits = 0;
		for (; *s >= '0' && *s <= '9' && digits < 3; s++, digits++)
			n = n * 10 + (unsigned)(*s - '0');
		if (digits == 0 || n > 255 || *s != (part < 3 ? '.' : '\0'))
			return false;
		v = v << 8 | n;
		if (part < 3)
			s++;
	}
	*ip = v;
	return true;
}

/* The value of address option `id` (or its default), 0.0.0.0 when absent. */
static uint32_t address_option(enum kopt id)
{
	uint32_t ip = 0;
	const char *text = kopt_text(id);
	if (text && !parse_ip(text, &ip))
		kprintf("floor: %s=%s is not an IPv4 address\n", kernel_options[id].name, text);
	return ip;
}

static void ip_text(uint32_t ip, char out[16])
{
	ksnprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

/* The network line in net/net.c's form (the benchmark waits for it). */
static void print_config(uint32_t mask, uint32_t gw)
{
	const uint8_t *m = floor_cfg.mac;
	char ip[16], gateway[16];
	ip_text(floor_cfg.ip, ip);
	ip_text(gw, gateway);
	kprintf("net: %02x:%02x:%02x:%02x:%02x:%02x ip %s/%d gw %s\n", m[0], m[1], m[2], m[3], m[4], m[5], ip,
		__builtin_popcount(mask), gateway);
}

void floor_counters_print(void)
{
	const struct floor_counters *c = &floor_counters;
	uint64_t refused = c->refused_split + c->refused_extra + c->refused_body + c->refused_long;
	uint64_t drops = c->drop_multi + c->drop_short + c->drop_ethertype + c->drop_arp + c->drop_ip_header +
			 c->drop_fragment + c->drop_not_ours + c->drop_not_tcp + c->drop_tcp_header +
			 c->drop_checksum + c->drop_options + c->drop_port + c->drop_flags + c->drop_stale_ack +
			 c->drop_tx_full;
	kprintf("floor: frames in %lu out %lu; arp replies %lu; syn-acks %lu; answers %lu (closing %lu); "
		"fin-acks %lu; acks %lu; resets in %lu out %lu; refused %lu (split %lu, extra %lu, body %lu, "
		"long %lu); drops %lu (multi-buffer %lu, short %lu, ethertype %lu, arp %lu, ip header %lu, "
		"fragment %lu, not ours %lu, not tcp %lu, tcp header %lu, checksum %lu, options %lu, port %lu, "
		"flags %lu, stale ack %lu, tx full %lu)\n",
		c->frames_in, c->frames_out, c->arp_replies, c->syn_acks, c->answers, c->answers_closing,
		c->fin_acks, c->acks, c->resets_in, c->resets_out, refused, c->refused_split, c->refused_extra,
		c->refused_body, c->refused_long, drops, c->drop_multi, c->drop_short, c->drop_ethertype,
		c->drop_arp, c->drop_ip_header, c->drop_fragment, c->drop_not_ours, c->drop_not_tcp,
		c->drop_tcp_header, c->drop_checksum, c->drop_options, c->drop_port, c->drop_flags,
		c->drop_stale_ack, c->drop_tx_full);
}

static void usage(void)
{
	kprintf("usage: floor [-p PORT] [-s] [-q] (kernel options ip= [mask=] [gw=])\n");
}

int main(int argc, char **argv)
{
	bool quiet = false;
	long port = 8080;
	int opt;
	while ((opt = getopt(argc, argv, "p:sqh")) != -1) {
		char *end;
		switch (opt) {
		case 'p':
			port = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || port < 1 || port > 65535) {
				kprintf("floor: bad port '%s'\n", optarg);
				return 2;
			}
			break;
		case 's': floor_cfg.allow_shutdown = true; break;
		case 'q': quiet = true; break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (optind != argc) {
		usage();
		return 2;
	}
	floor_cfg.port = (uint16_t)port;
	if (!kopt_text(KOPT_IP)) {
		kprintf("floor: needs a static address: ip=ADDR [mask=MASK] [gw=ADDR] before the --"
			" (the floor has no DHCP client)\n");
		return EX_USAGE;
	}
	floor_cfg.ip = address_option(KOPT_IP);
	uint32_t mask = address_option(KOPT_MASK), gw = address_option(KOPT_GW);
	if (vnet_init() < 0)
		return 1; /* the driver has said why */
	vnet_mac(floor_cfg.mac);
	floor_cfg.offload_csum = vnet_offloads() & VNET_OFF_TX_CSUM;

	floor_tcp_init();
	answer_init();
	vnet_rx_irq_enable(false); /* polled until the wait parks */
	link_init();
	stats_register(vnet_stats_print);
	stats_register(floor_counters_print); /* printed first: the last registered goes first */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	executor_set_source(&floor_source);
	print_config(mask, gw);
	if (!quiet)
		kprintf("floor: answering TCP port %u%s; checksums sent %s\n", floor_cfg.port,
			floor_cfg.allow_shutdown ? ", GET /__shutdown stops" : "",
			floor_cfg.offload_csum ? "by the device" : "in software");

	block_on(stopped, NULL, UINT64_MAX);
	if (!quiet)
		kprintf("floor: stopped (%s)\n", got_signal ? "signal" : "shutdown request");
	return 0;
}
