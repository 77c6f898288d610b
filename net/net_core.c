/*
 * net_core.c: the network core design (switch SW_SMP_NET_CORE). With a
 * second CPU (smp=2), CPU 1 owns lwIP, the driver and the socket layer: the
 * device's interrupt is moved to it and its executor waits on the network,
 * as the boot CPU's does with one CPU. The boot CPU runs the application,
 * whose socket calls, descriptor operations and poll() are handed to CPU 1
 * through kernel/handoff.c's rings (net_entry.h's net_run); no lock is
 * taken on the way, and only the heap (kernel/malloc_lock.c) is shared,
 * since CPU 1 frees the sockets lwIP lets go of. With one CPU nothing is
 * handed over: the calls run where they are made.
 */
#include "drivers/virtio/virtio.h"
#include "kernel/handoff.h"
#include "kernel/percpu.h"
#include "net_entry.h"

#if SW_SMP_NET_CORE

/* The CPU that owns the network when there are two or more. */
#define NET_CPU 1

/* The network core's first step: the device's interrupts to it. */
static void take_device_interrupts(void)
{
	if (vnet_route_irqs_here() < 0)
		kprintf("net: network core: the device's interrupt could not be moved to CPU %u\n", cpu_id());
}

void net_core_start(const struct wait_source *net_source)
{
	if (!handoff_start(NET_CPU, net_source, take_device_interrupts))
		executor_set_source(net_source);
}

#endif
