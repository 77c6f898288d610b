/*
 * net.h: the network layer's one public header. net_init() starts the
 * virtio-net device and lwIP (raw API, NO_SYS) on it; the application then
 * drives both from its own loop, in thread context:
 *
 *	net_init();
 *	for (;;) {
 *		net_poll();
 *		if (!net_work_pending())
 *			net_wait(UINT64_MAX);
 *	}
 *
 * Applications use lwIP's raw API (lwip/tcp.h, lwip/udp.h) directly; every
 * lwIP call must come from thread context, never from an interrupt handler.
 */
#ifndef NET_NET_H
#define NET_NET_H

#include <stdbool.h>
#include <stdint.h>

/* Start the NIC and lwIP and configure the address: kernel options ip=, mask=
 * (default 255.255.255.0) and gw=, or DHCP (waiting up to 10 s) when ip= is
 * absent. Prints one line with the MAC and the address, and registers the
 * layer's counters and lwIP's statistics with the kernel's counter report (at
 * exit unless the kernel option quiet is set, and on Ctrl-T). 0, or a negative errno after
 * printing why. Later calls return the first call's result. */
int net_init(void);

/* Do the network's pending work: reclaim sent frames, feed received frames
 * to lwIP (a bounded batch), run lwIP's timers if one is due. Returns whether
 * anything was done. */
bool net_poll(void);

/* O(1): whether net_poll() has work now (frames received, a timer due, or the
 * driver's own: a lost notification to repair, its transmit watchdog). */
bool net_work_pending(void);

/* clock_ns() time of lwIP's next timer or the driver's next look (while the
 * device has frames outstanding), UINT64_MAX when neither is due. */
uint64_t net_next_deadline_ns(void);

/* Park the CPU until a frame arrives, lwIP's next timer is due, a kernel
 * timer is due, or `deadline_ns` (clock_ns() time; UINT64_MAX: none) passes.
 * Returns at once if there is work already. Runs expired kernel timers before
 * returning. */
void net_wait(uint64_t deadline_ns);

#endif
