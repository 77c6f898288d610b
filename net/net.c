/*
 * net.c: starting the network (device, lwIP, address) and driving it: the
 * poll step, the O(1) "is there work" test, and the simple wait that parks
 * the CPU until there is. Everything runs in thread context.
 */
#include <errno.h>
#include <stdlib.h>
#include "lwip/dhcp.h"
#include "lwip/init.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/sys.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"
#include "kernel/kernel.h"
#include "kernel/percpu.h"
#include "drivers/virtio/virtio.h"
#include "net.h"
#include "net_internal.h"
#include "net_lock.h"
#include "netif_gso.h"

/* Frames fed to lwIP per poll: enough to drain a burst, few enough that
 * timers and the application get their turn. */
#define NET_RX_BUDGET 64
/* How long net_init waits for a DHCP lease. */
#define DHCP_WAIT_NS (10 * NSEC_PER_SEC)

/* The one interface. */
static struct netif net_if;
/* net_init's result once it has run (lwIP cannot be started twice); 1 before. */
static int net_init_result = 1;

bool net_poll(void)
{
	/* lwIP and the driver are the boot CPU's (docs/design/smp.md): every
	 * way into them runs on it, a poll, a socket call (kernel/fd.c). Under
	 * the global lock they are the lock holder's, on any CPU; with the
	 * network core, its CPU's. */
#if SW_SMP_GLOBAL_LOCK
	KASSERT(net_lock_held());
#elif SW_SMP_NET_CORE
	KASSERT(handoff_serving() ? !on_boot_cpu() : on_boot_cpu()); /* the network core's */
#else
	KASSERT(on_boot_cpu());
#endif
	if (!netif_is_up(&net_if))
		return false; /* before net_init (the DHCP wait polls too) */
	net_counters.polls++;
	vnet_tx_batch_begin(vnet_rx_burst());
	int work = vnet_tx_reclaim();
	/* A run of segments held for TSO (netif_gso.c) since the last poll
	 * goes first, and so does one that what follows makes; pure ACKs that
	 * waited for room (netif_ack.c) follow it. The burst's own pure ACKs
	 * wait for its end, each connection's merged into its last. */
	net_gso_flush();
	net_ack_flush();
	net_ack_input_begin();
	work += vnet_rx(net_netif_deliver, &net_if, NET_RX_BUDGET);
	net_ack_input_end();
	if (sys_timeouts_sleeptime() == 0) {
		net_tcp_run_timers();
		net_counters.timer_runs++;
		work++;
	}
	net_gso_flush();
	vnet_tx_batch_end();
	if (work)
		net_counters.polls_with_work++;
	return work > 0;
}

bool net_work_pending(void)
{
	return vnet_rx_pending() || vnet_service_due() || net_gso_due() || net_ack_due() || sys_timeouts_sleeptime() == 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The earlier of lwIP's next timer and the driver's next look (its transmit
 * watchdog while frames are outstanding, so a CPU that parks with frames
 * the device has not taken wakes in time to notify it again). */
uint64_t net_next_deadline_ns(void)
{
	uint64_t driver = vnet_next_deadline_ns();
	u32_t wait_ms = sys_timeouts_sleeptime();
	if (wait_ms == SYS_TIMEOUTS_SLEEPTIME_INFINITE)
		return driver;
	/* lwIP's timer is due once its clock, sys_now(), reaches now + wait_ms.
	 * sys_now() is the same milliseconds in 32 bits: it wraps after 49.7
	 * days, and a deadline built from it would then lie in the past. */
	return min_u64(driver, (clock_ns() / 1000000 + wait_ms) * 1000000);
}

void net_wait(uint64_t deadline_ns)
{
	/* Clear the flag first, then turn the interrupt on and look again: a
	 * frame that arrives after the look raises the flag, and cpu_park
	 * returns at once. */
	net_gso_flush(); /* nothing held while the CPU sleeps (what the full ring */
	net_ack_flush(); /* keeps waiting has the watchdog's deadline) */
	vnet_wake = false;
	bool arrived = vnet_rx_irq_enable(true);
	uint64_t until = min_u64(deadline_ns, min_u64(net_next_deadline_ns(), timer_next_deadline()));
	if (!arrived && !vnet_rx_pending() && until > clock_ns()) {
		net_counters.waits++;
		cpu_park(until, &vnet_wake);
	}
	/* net_poll runs with the interrupt off. */
	vnet_rx_irq_enable(false);
	timer_run_expired();
}

/* The value of an address option (or its default): 1 found, 0 absent, -1
 * malformed (after saying so; the boot's check lets none through). */
static int address_option(enum kopt id, ip4_addr_t *addr)
{
	const char *value = kopt_text(id);
	if (!value)
		return 0;
	if (!ip4addr_aton(value, addr)) {
		kprintf("net: %s=%s is not an IPv4 address\n", kernel_options[id].name, value);
		return -1;
	}
	return 1;
}

/* Waits for a DHCP lease for at most DHCP_WAIT_NS; 0 or -ETIMEDOUT. */
static int dhcp_configure(void)
{
	if (dhcp_start(&net_if) != ERR_OK) {
		kprintf("net: DHCP could not start (out of memory?)\n");
		return -ENOMEM;
	}
	uint64_t deadline = clock_ns() + DHCP_WAIT_NS;
	while (!dhcp_supplied_address(&net_if)) {
		if (clock_ns() >= deadline) {
			dhcp_stop(&net_if);
			kprintf("net: DHCP: no lease after %llu s; is a DHCP server on this network? "
				"Or give ip=ADDR [mask=MASK] [gw=ADDR] on the kernel command line\n",
				DHCP_WAIT_NS / NSEC_PER_SEC);
			return -ETIMEDOUT;
		}
		net_poll();
		if (!net_work_pending())
			net_wait(deadline);
	}
	return 0;
}

/*
 * A static address has no lease to look after, but lwIP starts its DHCP
 * timers with its others at lwip_init(): the fine one every 500 ms. With
 * no traffic they are what wakes the parked CPU most often (twice a second
 * against ARP's and reassembly's once, which fall due together), and each
 * wake costs QEMU about a millisecond of host CPU under TCG. So without
 * DHCP they are taken off lwIP's list. (lwip_cyclic_timer, the wrapper lwIP
 * queues each cyclic timer under, is public with LWIP_TESTMODE: lwipopts.h.)
 */
static void stop_dhcp_timers(void)
{
	for (int i = 0; i < lwip_num_cyclic_timers; i++) {
		lwip_cyclic_timer_handler h = lwip_cyclic_timers[i].handler;
		if (h == dhcp_fine_tmr || h == dhcp_coarse_tmr)
			sys_untimeout(lwip_cyclic_timer, LWIP_CONST_CAST(void *, &lwip_cyclic_timers[i]));
	}
}

static void print_config(bool dhcp)
{
	const uint8_t *mac = net_if.hwaddr;
	char ip[16], gw[16];
	ip4addr_ntoa_r(netif_ip4_addr(&net_if), ip, sizeof ip);
	ip4addr_ntoa_r(netif_ip4_gw(&net_if), gw, sizeof gw);
	int prefix = __builtin_popcount(ip4_addr_get_u32(netif_ip4_netmask(&net_if)));
	kprintf("net: %02x:%02x:%02x:%02x:%02x:%02x ip %s/%d gw %s%s\n", mac[0], mac[1], mac[2],
		mac[3], mac[4], mac[5], ip, prefix, gw, dhcp ? " (dhcp)" : "");
}

/* lwIP's heap (lwipopts.h says why it is not BSS), which the kernel sets
 * aside at boot: MEM_SIZE and a page for the headers mem_init() puts at each
 * end (a struct mem of a few words). */
const size_t net_heap_arena_bytes = MEM_SIZE + PAGE_SIZE;
unsigned char *lwip_heap_arena;

static int net_start(void)
{
	int rc = vnet_init();
	if (rc < 0)
		return rc; /* the driver has said why */
	net_copy_init();
#if !MEM_LIBC_MALLOC /* the fuzz build's lwIP takes its heap from malloc */
	lwip_heap_arena = kmem_net_heap_arena();
	if (!lwip_heap_arena) {
		kprintf("net: no memory for lwIP's %u KiB heap: no free run of RAM that long\n",
			(unsigned)(MEM_SIZE / 1024));
		return -ENOMEM;
	}
#endif
	lwip_init();

	ip4_addr_t ip, mask, gw; /* mask and gw: always an option's or the table's default */
	ip4_addr_set_zero(&ip);
	int have_ip = address_option(KOPT_IP, &ip);
	if (have_ip < 0 || address_option(KOPT_MASK, &mask) < 0 || address_option(KOPT_GW, &gw) < 0)
		return -EINVAL;

	net_ack_init();
	if (!netif_add(&net_if, &ip, &mask, &gw, NULL, net_netif_init, ethernet_input)) {
		kprintf("net: netif_add failed\n");
		return -EIO;
	}
	netif_set_default(&net_if);
	netif_set_up(&net_if);
	vnet_rx_irq_enable(false); /* polled until net_wait parks */
	stats_register(net_stats_print); /* at exit, and on the console's status key */

	bool dhcp = have_ip == 0;
	if (dhcp && (rc = dhcp_configure()) < 0)
		return rc;
	if (!dhcp)
		stop_dhcp_timers();
	print_config(dhcp);
	return 0;
}

int net_init(void)
{
	if (net_init_result > 0)
		net_init_result = net_start();
	return net_init_result;
}
