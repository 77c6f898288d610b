/*
 * stats.c: the network's report at exit: the layer's own counters (frames,
 * drops by reason, polls, offloads), the driver's statistics, and lwIP's protocol,
 * heap and pool statistics, compactly (one line per protocol, only pools
 * that were used), and one "pools:" line of everything that must come back
 * to its idle value once the load stops (what make soak compares).
 */
#include "lwip/memp.h"
#include "lwip/stats.h"
#include "kernel/kernel.h"
#include "drivers/virtio/virtio.h"
#include "net_internal.h"
#include "netif_gso.h"

static void print_counters(void)
{
	const struct net_counters *c = &net_counters;
	kprintf("net: frames in %llu (%llu bytes) out %llu (%llu bytes); polls %llu, %llu with work; "
		"timer runs %llu; waits %llu\n",
		(unsigned long long)c->rx_frames, (unsigned long long)c->rx_bytes,
		(unsigned long long)c->tx_frames, (unsigned long long)c->tx_bytes,
		(unsigned long long)c->polls, (unsigned long long)c->polls_with_work,
		(unsigned long long)c->timer_runs, (unsigned long long)c->waits);
	kprintf("net: drops: rx no-pbuf %llu too-long %llu refused %llu; tx ring-full %llu no-pbuf %llu "
		"invalid %llu; tx flattened %llu; tx acks merged %llu, waited %llu; TIME_WAIT recycled %llu, "
		"SYN_RCVD evicted %llu, handshakes deferred %llu, LAST_ACK renewed %llu; insane offsets %llu\n",
		(unsigned long long)c->rx_drop_no_pbuf, (unsigned long long)c->rx_drop_too_long,
		(unsigned long long)c->rx_drop_input, (unsigned long long)c->tx_drop_ring_full,
		(unsigned long long)c->tx_drop_no_pbuf, (unsigned long long)c->tx_drop_invalid,
		(unsigned long long)c->tx_flattened, (unsigned long long)c->tx_acks_merged,
		(unsigned long long)c->tx_acks_waited,
		(unsigned long long)c->tcp_timewait_recycled, (unsigned long long)c->tcp_synrcvd_evicted,
		(unsigned long long)c->tcp_handshake_deferred, (unsigned long long)c->tcp_last_ack_renewed,
		(unsigned long long)c->tcp_insane_offset);
	kprintf("net: guards: tcp beyond window %llu, past fin %llu, mss not on syn %llu, bad syn %llu, "
		"wnd max floor %llu, persist stopped %llu; rx empty fragment %llu, short arp %llu, short ip %llu; "
		"rx coalesced %llu (%llu bytes), rx cap refused %llu, rx pressure refused %llu\n",
		(unsigned long long)c->tcp_beyond_window, (unsigned long long)c->tcp_past_fin,
		(unsigned long long)c->tcp_mss_not_syn, (unsigned long long)c->tcp_bad_syn,
		(unsigned long long)c->tcp_wnd_max_floor, (unsigned long long)c->tcp_persist_stopped,
		(unsigned long long)c->rx_drop_empty_fragment, (unsigned long long)c->rx_drop_short_arp,
		(unsigned long long)c->rx_drop_short_ip,
		(unsigned long long)c->rx_coalesced, (unsigned long long)c->rx_coalesced_bytes,
		(unsigned long long)c->rx_cap_refused, (unsigned long long)c->rx_pressure_refused);
	const struct net_offload_counters *o = &net_offload_counters;
	kprintf("net: offloads tx csum %llu (unhandled %llu), tx gso frames %llu (segments %llu, held %llu, "
		"blocked %llu); rx csum skipped %llu, rx gso %llu\n",
		(unsigned long long)o->tx_csum, (unsigned long long)o->tx_csum_unhandled,
		(unsigned long long)o->tx_gso_frames,
		(unsigned long long)o->tx_gso_segments, (unsigned long long)o->tx_gso_held,
		(unsigned long long)o->tx_gso_blocked, (unsigned long long)o->rx_csum_skipped,
		(unsigned long long)o->rx_gso);
	kprintf("net: bytes copied: rx to pbufs %llu, rx to app %llu; tx from app %llu, tx to segments %llu; "
		"copy routine %s\n",
		(unsigned long long)c->copied_rx_to_pbufs, (unsigned long long)c->copied_rx_to_app,
		(unsigned long long)c->copied_tx_from_app, (unsigned long long)c->copied_tx_to_segments,
		net_copy_routine());
}

static void print_udp(void)
{
	const struct udp_counters *u = &net_udp_counters;
	kprintf("udp: sockets %llu; datagrams received %llu sent %llu; drops: queue full %llu\n",
		(unsigned long long)u->open, (unsigned long long)u->received, (unsigned long long)u->sent,
		(unsigned long long)u->drops_queue_full);
}

static void print_proto(const char *name, const struct stats_proto *s)
{
	kprintf("lwip %-6s xmit %u recv %u drop %u chkerr %u lenerr %u memerr %u rterr %u "
		"proterr %u opterr %u err %u\n",
		name, (unsigned)s->xmit, (unsigned)s->recv, (unsigned)s->drop, (unsigned)s->chkerr,
		(unsigned)s->lenerr, (unsigned)s->memerr, (unsigned)s->rterr, (unsigned)s->proterr,
		(unsigned)s->opterr, (unsigned)s->err);
}

/* "name used/max/avail" (+ errors) for each pool that was ever used. */
static void print_pools(void)
{
	char line[160];
	int len = 0;
	for (int i = 0; i < MEMP_MAX; i++) {
		const struct stats_mem *m = lwip_stats.memp[i];
		if (!m || m->max == 0)
			continue;
		char item[80];
		int n = ksnprintf(item, sizeof item, " %s %u/%u/%u", m->name, (unsigned)m->used,
				  (unsigned)m->max, (unsigned)m->avail);
		if (m->err || m->illegal)
			n += ksnprintf(item + n, sizeof item - n, " err %u illegal %u", (unsigned)m->err,
				       (unsigned)m->illegal);
		if (len > 0 && len + n > 110) {
			kprintf("lwip pools (used/max/size):%s\n", line);
			len = 0;
		}
		len += ksnprintf(line + len, sizeof line - len, "%s", item);
	}
	if (len > 0)
		kprintf("lwip pools (used/max/size):%s\n", line);
}

/* One line, fixed order, every pool: what is in use right now. A leak shows
 * as a number that grows from one idle moment to the next. At idle the
 * listening pcb and the app's own sockets and descriptors stay in use. */
void net_pools_print(void)
{
	char line[512];
	int len = ksnprintf(line, sizeof line, "pools:");
	for (int i = 0; i < MEMP_MAX; i++) {
		const struct stats_mem *m = lwip_stats.memp[i];
		if (m && len < (int)sizeof line)
			len += ksnprintf(line + len, sizeof line - len, " %s %u", m->name, (unsigned)m->used);
	}
	struct mem_stats ms;
	mem_get_stats(&ms);
	kprintf("%s; lwip-heap %u; rx-lent %u; tcp-sockets %lu udp-sockets %lu; fds %d; malloc-bytes %lu; "
		"heap-bytes %lu high-water %lu\n",
		line, (unsigned)lwip_stats.mem.used, vnet_rx_buffers_held(),
		(unsigned long)net_socket_counters.sockets_open,
		(unsigned long)net_udp_counters.open, fd_count_open(), (unsigned long)ms.malloc_bytes,
		(unsigned long)ms.heap_bytes, (unsigned long)ms.heap_high_water);
}

void net_stats_print(void)
{
	print_counters();
	print_udp();
	vnet_stats_print();
	print_proto("link", &lwip_stats.link);
	print_proto("etharp", &lwip_stats.etharp);
	print_proto("ipfrag", &lwip_stats.ip_frag);
	print_proto("ip", &lwip_stats.ip);
	print_proto("icmp", &lwip_stats.icmp);
	print_proto("udp", &lwip_stats.udp);
	print_proto("tcp", &lwip_stats.tcp);
	kprintf("lwip heap used %u max %u of %u err %u illegal %u\n", (unsigned)lwip_stats.mem.used,
		(unsigned)lwip_stats.mem.max, (unsigned)lwip_stats.mem.avail,
		(unsigned)lwip_stats.mem.err, (unsigned)lwip_stats.mem.illegal);
	print_pools();
	net_pools_print();
}
