/*
 * vnet_host.c: the kernel's stand-ins the virtio-net driver tests share
 * (test_vnet_notify.c, test_vnet_offload.c and their second builds): quiet
 * kprintf and trace, TCG as the hypervisor, a 1 GHz TSC for kernel/trace.c,
 * and panic and the simulated device's harness_fail ending the test with
 * their message; and the driver's start over the simulated device
 * (vnet_host.h). Each test keeps its own clock_ns() and kernel_option()
 * (the options it boots with, which kernel/options.c reads), which are what
 * it varies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "drivers/virtio/virtio.h"
#include "kernel/kernel.h"
#include "tests/fuzz/netrx/netrx.h"
#include "tests/unit/vnet_host.h"

uint64_t clock_tsc_hz(void) { return 1000000000; } /* kernel/trace.c reads the real TSC */
/* TCG: the driver then orders its last look before a park with a device read
 * (choose_barrier), which the tests count. */
enum hypervisor cpu_hypervisor(void) { return HYPERVISOR_TCG; }
int kprintf(const char *fmt, ...) { (void)fmt; return 0; }
void trace(const char *fmt, ...) { (void)fmt; }
/* The executor's spin window, which a timed hold lasts by default. */
uint64_t executor_spin_window_ns(void) { return 250000; }
/* Room for the driver's reserve of receive buffers (lending on). */
uint64_t mem_heap_room(void) { return 1ULL << 30; }

__attribute__((noreturn)) static void vfail(const char *what, const char *fmt, va_list ap)
{
	char buf[256];
	vsnprintf(buf, sizeof buf, fmt, ap);
	fail_msg("%s: %s", what, buf);
	abort();
}

void panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail("panic", fmt, ap); /* ends the test: no va_end */
}

void harness_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail("device", fmt, ap); /* ends the test: no va_end */
}

void vnet_host_start(uint64_t offloads)
{
	static bool started;
	if (started)
		return;
	dev_offer(offloads);
	assert_int_equal(vnet_init(), 0);
	vnet_rx_irq_enable(false);
	started = true;
}
