/*
 * test_virtio_mmio.c: the virtio-mmio transport (drivers/virtio/
 * virtio_mmio.c) and the device finding and interrupt dispatch of
 * virtio_dev.c over it, on fake register windows in host memory: the
 * probe's refusals (bad magic, a legacy version 1, an unknown version, no
 * device), windows over RAM, the first net device taken, QueueNumMax 0 or
 * absurd, a queue ready before set-up, the device configuration's bounds, a
 * device that needs a reset, and the one line's status dispatched and
 * acknowledged. Plain memory has no register side effects: each test sets
 * the values a device would show.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "drivers/virtio/virtio_dev.h"
#include "kernel/mmio_windows.h"

#define WINDOW_BASE 0xfeb00000ULL
#define WINDOW_SIZE 0x200
#define NWINDOWS    4
#define RAM_WINDOW  0x200000ULL /* a window the stand-in memory map calls RAM */

/* Register offsets, as the spec gives them (4.2.2). */
enum {
	R_MAGIC = 0x000, R_VERSION = 0x004, R_DEVICE_ID = 0x008, R_DEVICE_FEATURES = 0x010,
	R_QUEUE_NUM_MAX = 0x034, R_QUEUE_NUM = 0x038, R_QUEUE_READY = 0x044, R_QUEUE_NOTIFY = 0x050,
	R_INT_STATUS = 0x060, R_INT_ACK = 0x064, R_STATUS = 0x070, R_QUEUE_DESC = 0x080,
	R_QUEUE_DEVICE_HIGH = 0x0a4, R_CONFIG = 0x100,
};

static uint32_t windows[NWINDOWS][WINDOW_SIZE / 4]; /* 0xfeb00000 + 0x200 * i */
static char last_message[256];
static irq_handler_t line_handler;
static void *line_arg;
static int routed_gsi = -1, routed_vector = -1;

static uint32_t *reg(int w, int off) { return &windows[w][off / 4]; }

/* A modern device of `type` in window w. */
static void device(int w, uint32_t version, uint32_t type)
{
	memset(windows[w], 0, sizeof windows[w]);
	*reg(w, R_MAGIC) = VIRTIO_MMIO_MAGIC;
	*reg(w, R_VERSION) = version;
	*reg(w, R_DEVICE_ID) = type;
}

/* ---- what the transport calls in the kernel ---------------------------------- */

int kprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(last_message, sizeof last_message, fmt, ap);
	va_end(ap);
	return n;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void *mmio_map(uint64_t phys, size_t len)
{
	if (phys < WINDOW_BASE || phys + len > WINDOW_BASE + sizeof windows)
		fail_msg("mapped 0x%llx, not a fake window", (unsigned long long)phys);
	return (char *)windows + (phys - WINDOW_BASE);
}

int mem_is_mapped_ram(uint64_t addr, uint64_t len)
{
	return addr >= RAM_WINDOW && addr + len <= RAM_WINDOW + 0x100000;
}

int irq_alloc(irq_handler_t handler, void *arg)
{
	line_handler = handler;
	line_arg = arg;
	return 48;
}

int ioapic_route_level(int gsi, int vector)
{
	routed_gsi = gsi;
	routed_vector = vector;
	return 0;
}

/* One CPU here: moving the line to the calling CPU routes it again. */
int ioapic_route_here(int gsi)
{
	routed_gsi = gsi;
	return 0;
}

/* No PCI here: the PCI transport is never reached. */
static void never(void) { fail_msg("the PCI transport was reached"); }
struct pci_dev *pci_find(uint16_t vendor, uint16_t device, int nth) { (void)vendor, (void)device, (void)nth; return NULL; }
int pci_msix_enable(struct pci_dev *d) { (void)d; never(); return -1; }
void pci_msix_route(struct pci_dev *d, int entry, int vector) { (void)d, (void)entry, (void)vector; never(); }
void pci_msix_mask(struct pci_dev *d, int entry, bool masked) { (void)d, (void)entry, (void)masked; never(); }
void pci_msix_route_here(struct pci_dev *d, int entry) { (void)d, (void)entry; never(); }
int virtio_pci_probe(struct virtio_pci *vp, struct pci_dev *pci) { (void)vp, (void)pci; never(); return -1; }
uint8_t virtio_pci_status(struct virtio_pci *vp) { (void)vp; never(); return 0; }
void virtio_pci_set_status(struct virtio_pci *vp, uint8_t status) { (void)vp, (void)status; never(); }
uint32_t virtio_pci_device_features(struct virtio_pci *vp, uint32_t sel) { (void)vp, (void)sel; never(); return 0; }
void virtio_pci_driver_features(struct virtio_pci *vp, uint32_t sel, uint32_t bits)
{
	(void)vp, (void)sel, (void)bits;
	never();
}
uint16_t virtio_pci_queue_size(struct virtio_pci *vp, uint16_t q) { (void)vp, (void)q; never(); return 0; }
int virtio_pci_queue_enable(struct virtio_pci *vp, struct virtqueue *vq, uint16_t msix, const char **why)
{
	(void)vp, (void)vq, (void)msix, (void)why;
	never();
	return -1;
}
int virtio_pci_config_vector(struct virtio_pci *vp, uint16_t msix) { (void)vp, (void)msix; never(); return -1; }
uint8_t virtio_pci_config_generation(struct virtio_pci *vp) { (void)vp; never(); return 0; }

/* ---- the tests ------------------------------------------------------------------ */

static struct virtio_mmio vm;

static int probe(int w)
{
	last_message[0] = 0;
	return virtio_mmio_probe(&vm, (volatile uint8_t *)windows[w], WINDOW_BASE + WINDOW_SIZE * w, WINDOW_SIZE, 5);
}

static void probe_refusals(void **state)
{
	(void)state;
	device(0, 2, VIRTIO_ID_NET);
	*reg(0, R_MAGIC) = 0x12345678;
	assert_int_equal(probe(0), -1);
	assert_non_null(strstr(last_message, "no virtio-mmio registers"));

	device(0, 1, VIRTIO_ID_NET);
	assert_int_equal(probe(0), -1);
	assert_non_null(strstr(last_message, "legacy"));
	assert_non_null(strstr(last_message, "force-legacy=false"));

	device(0, 3, VIRTIO_ID_NET);
	assert_int_equal(probe(0), -1);
	assert_non_null(strstr(last_message, "version 3"));

	device(0, 2, 0);
	assert_int_equal(probe(0), -1);
	assert_non_null(strstr(last_message, "no device"));

	device(0, 2, VIRTIO_ID_NET);
	assert_int_equal(probe(0), 0);
	assert_int_equal(vm.device_id, VIRTIO_ID_NET);
	assert_string_equal(vm.name, "virtio-mmio@0xfeb00000");
	assert_int_equal(virtio_mmio_config_len(&vm), WINDOW_SIZE - 0x100);

	assert_int_equal(virtio_mmio_probe(&vm, (volatile uint8_t *)windows[0], WINDOW_BASE, 0x80, 5), -1);
	assert_non_null(strstr(last_message, "cannot hold the registers"));
}

static struct virtio_dev vd;

static void find_takes_the_first_net_device(void **state)
{
	(void)state;
	device(0, 1, VIRTIO_ID_NET); /* legacy: refused */
	device(1, 2, 2);             /* a block device: not ours */
	device(2, 2, VIRTIO_ID_NET); /* taken */
	device(3, 2, VIRTIO_ID_NET); /* a second one: left alone */
	char why[128];
	const char *entries[] = { "512@0xfeb00000:5", "512@0x200000:9", "512@0xfeb00200:6", "512@0xfeb00400:7",
				  "512@0xfeb00600:8" };
	assert_int_equal(mmio_windows_set(entries, 5, why, sizeof why), 0);
	assert_int_equal(virtio_find(&vd, VIRTIO_ID_NET), 0);
	assert_int_equal(vd.transport, VIRTIO_TRANSPORT_MMIO);
	assert_string_equal(virtio_name(&vd), "virtio-mmio@0xfeb00400");
	assert_int_equal(vd.mmio.irq, 7);
	assert_int_equal(virtio_find(&vd, 4), -1); /* no rng among them */

	/* A window over RAM is never mapped. */
	const char *ram[] = { "512@0x200000:9" };
	assert_int_equal(mmio_windows_set(ram, 1, why, sizeof why), 0);
	assert_int_equal(virtio_find(&vd, VIRTIO_ID_NET), -1);
	assert_non_null(strstr(last_message, "lies in RAM"));
}

static void set_up_found(void)
{
	char why[128];
	const char *entries[] = { "512@0xfeb00400:7" };
	device(2, 2, VIRTIO_ID_NET);
	assert_int_equal(mmio_windows_set(entries, 1, why, sizeof why), 0);
	assert_int_equal(virtio_find(&vd, VIRTIO_ID_NET), 0);
}

static void queue_sizes_checked(void **state)
{
	(void)state;
	set_up_found();
	*reg(2, R_QUEUE_NUM_MAX) = 0;
	assert_int_equal(virtio_queue_size(&vd, 0), 0);
	*reg(2, R_QUEUE_NUM_MAX) = 40000;
	assert_int_equal(virtio_queue_size(&vd, 0), 0);
	assert_non_null(strstr(last_message, "more than a ring can have"));
	*reg(2, R_QUEUE_NUM_MAX) = 256;
	assert_int_equal(virtio_queue_size(&vd, 0), 256);
}

static void queue_enable(void **state)
{
	(void)state;
	set_up_found();
	static uint8_t ring[3 * 4096] __attribute__((aligned(4096)));
	static void *cookie[16];
	static uint16_t chain_len[16];
	static uint32_t chain_in[16];
	struct virtqueue vq;
	vq_init(&vq, 1, 16, false, ring, cookie, chain_len, chain_in);

	*reg(2, R_QUEUE_NUM_MAX) = 256;
	*reg(2, R_QUEUE_READY) = 1; /* ready before we set it up */
	assert_int_equal(virtio_queue_enable(&vd, &vq), -1);
	assert_true(*reg(2, R_STATUS) & VIRTIO_STATUS_FAILED);

	*reg(2, R_STATUS) = 0;
	*reg(2, R_QUEUE_READY) = 0;
	*reg(2, R_QUEUE_NUM_MAX) = 8; /* smaller than the ring we made */
	assert_int_equal(virtio_queue_enable(&vd, &vq), -1);

	*reg(2, R_QUEUE_NUM_MAX) = 256;
	assert_int_equal(virtio_queue_enable(&vd, &vq), 0);
	assert_int_equal(*reg(2, R_QUEUE_NUM), 16);
	assert_int_equal(*reg(2, R_QUEUE_READY), 1);
	assert_int_equal(*reg(2, R_QUEUE_DESC), (uint32_t)(uintptr_t)ring);
	assert_int_equal(*reg(2, R_QUEUE_DEVICE_HIGH), (uint32_t)((uintptr_t)vq.used >> 32));
	assert_true(vq.notify_32);
	*reg(2, R_QUEUE_NOTIFY) = 0xffffffff;
	virtio_notify(&vq);
	assert_int_equal(*reg(2, R_QUEUE_NOTIFY), 1); /* one whole 32-bit store */
}

static unsigned queue_irqs, config_irqs;
static void on_queue(void *arg) { (void)arg, queue_irqs++; }
static void on_config(void *arg) { (void)arg, config_irqs++; }

static void one_line_dispatched_and_acknowledged(void **state)
{
	(void)state;
	set_up_found();
	const irq_handler_t fn[VIRTIO_IRQ_MAX] = { on_config, on_queue, NULL };
	assert_int_equal(virtio_irqs_prepare(&vd, VIRTIO_IRQ_MAX), 0);
	assert_int_equal(virtio_bind_irqs(&vd, fn, VIRTIO_IRQ_MAX), 0);
	assert_int_equal(routed_gsi, 7);
	assert_int_equal(routed_vector, 48);

	*reg(2, R_INT_STATUS) = VIRTIO_MMIO_INT_VRING;
	line_handler(line_arg);
	assert_int_equal(queue_irqs, 1);
	assert_int_equal(config_irqs, 0);
	assert_int_equal(*reg(2, R_INT_ACK), VIRTIO_MMIO_INT_VRING);

	*reg(2, R_INT_STATUS) = VIRTIO_MMIO_INT_VRING | VIRTIO_MMIO_INT_CONFIG;
	line_handler(line_arg);
	assert_int_equal(queue_irqs, 2);
	assert_int_equal(config_irqs, 1);
	assert_int_equal(*reg(2, R_INT_ACK), 3);

	*reg(2, R_INT_STATUS) = 0; /* nothing pending: nothing called, nothing acknowledged */
	*reg(2, R_INT_ACK) = 0;
	line_handler(line_arg);
	assert_int_equal(queue_irqs + config_irqs, 3);
	assert_int_equal(*reg(2, R_INT_ACK), 0);
}

static void configuration_bounds(void **state)
{
	(void)state;
	set_up_found();
	uint8_t mac[6];
	memcpy((uint8_t *)windows[2] + R_CONFIG, "\x52\x54\x00\x12\x34\x56", 6);
	assert_int_equal(virtio_config_read(&vd, 0, mac, sizeof mac), 0);
	assert_memory_equal(mac, "\x52\x54\x00\x12\x34\x56", 6);
	uint8_t byte;
	assert_int_equal(virtio_config_read(&vd, WINDOW_SIZE - 0x100 - 1, &byte, 1), 0);
	assert_int_equal(virtio_config_read(&vd, WINDOW_SIZE - 0x100, &byte, 1), -1);
	assert_int_equal(virtio_config_read(&vd, 0xffffffff, &byte, 1), -1);
	assert_int_equal(virtio_config_read(&vd, 1, mac, 0xffffffff), -1);
}

static uint64_t want_everything(uint64_t offered) { return offered; }

static void negotiation_and_start_refused(void **state)
{
	(void)state;
	set_up_found();
	*reg(2, R_DEVICE_FEATURES) = 0; /* no VERSION_1 */
	assert_int_equal(virtio_negotiate(&vd, want_everything, 1ULL << VIRTIO_F_VERSION_1), -1);
	assert_non_null(strstr(last_message, "not offered"));
	assert_true(*reg(2, R_STATUS) & VIRTIO_STATUS_FAILED);

	*reg(2, R_STATUS) = VIRTIO_STATUS_NEEDS_RESET; /* stays: plain memory */
	assert_int_equal(virtio_driver_ok(&vd), -1);
	assert_non_null(strstr(last_message, "needs a reset"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_refusals),
		cmocka_unit_test(find_takes_the_first_net_device),
		cmocka_unit_test(queue_sizes_checked),
		cmocka_unit_test(queue_enable),
		cmocka_unit_test(one_line_dispatched_and_acknowledged),
		cmocka_unit_test(configuration_bounds),
		cmocka_unit_test(negotiation_and_start_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
