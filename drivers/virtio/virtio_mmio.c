/*
 * virtio_mmio.c: the virtio 1.x MMIO transport (see virtio_mmio.h). Only
 * version 2 of the register layout: QEMU's virtio-mmio is legacy (version 1)
 * unless started with -global virtio-mmio.force-legacy=false, and such a
 * device is refused with that hint rather than driven the old way.
 *
 * The registers are 32 bits wide and read and written whole (spec 4.2.2.2);
 * 64-bit ring addresses go in two halves. The device configuration after
 * them is read a byte at a time by virtio_dev.c under ConfigGeneration.
 */
#include "kernel/kernel.h"
#include "virtio_mmio.h"

/* Register offsets (spec 4.2.2). */
#define REG_MAGIC            0x000
#define REG_VERSION          0x004
#define REG_DEVICE_ID        0x008
#define REG_DEVICE_FEATURES  0x010
#define REG_DEVICE_FEAT_SEL  0x014
#define REG_DRIVER_FEATURES  0x020
#define REG_DRIVER_FEAT_SEL  0x024
#define REG_QUEUE_SEL        0x030
#define REG_QUEUE_NUM_MAX    0x034
#define REG_QUEUE_NUM        0x038
#define REG_QUEUE_READY      0x044
#define REG_QUEUE_NOTIFY     0x050
#define REG_INTERRUPT_STATUS 0x060
#define REG_INTERRUPT_ACK    0x064
#define REG_STATUS           VIRTIO_MMIO_STATUS
#define REG_QUEUE_DESC       0x080
#define REG_QUEUE_DRIVER     0x090
#define REG_QUEUE_DEVICE     0x0a0
#define REG_CONFIG_GEN       0x0fc

/* The largest split ring there is (2.7: at most 32768 entries). */
#define QUEUE_SIZE_MAX 32768

static inline uint32_t rd32(struct virtio_mmio *vm, int off) { return *(volatile uint32_t *)(vm->regs + off); }
static inline void wr32(struct virtio_mmio *vm, int off, uint32_t v) { *(volatile uint32_t *)(vm->regs + off) = v; }
static inline void wr64(struct virtio_mmio *vm, int off, uint64_t v)
{
	wr32(vm, off, (uint32_t)v);
	wr32(vm, off + 4, (uint32_t)(v >> 32));
}

int virtio_mmio_probe(struct virtio_mmio *vm, volatile uint8_t *regs, uint64_t base, uint32_t size,
		      unsigned irq)
{
	*vm = (struct virtio_mmio){ .regs = regs, .base = base, .size = size, .irq = irq };
	ksnprintf(vm->name, sizeof vm->name, "virtio-mmio@0x%lx", (unsigned long)base);
	if (size < VIRTIO_MMIO_CONFIG) {
		kprintf("%s: a window of %u bytes cannot hold the registers\n", vm->name, size);
		return -1;
	}
	uint32_t magic = rd32(vm, REG_MAGIC), version = rd32(vm, REG_VERSION);
	if (magic != VIRTIO_MMIO_MAGIC) {
		kprintf("%s: no virtio-mmio registers there (magic 0x%x)\n", vm->name, magic);
		return -1;
	}
	if (version == 1) {
		kprintf("%s: a legacy device (version 1); only virtio 1.x is driven "
			"(QEMU: -global virtio-mmio.force-legacy=false)\n", vm->name);
		return -1;
	}
	if (version != 2) {
		kprintf("%s: unknown register layout version %u\n", vm->name, version);
		return -1;
	}
	vm->device_id = rd32(vm, REG_DEVICE_ID);
	if (vm->device_id == 0) {
		kprintf("%s: no device behind the window\n", vm->name);
		return -1;
	}
	return 0;
}

uint8_t virtio_mmio_status(struct virtio_mmio *vm) { return (uint8_t)rd32(vm, REG_STATUS); }
void virtio_mmio_set_status(struct virtio_mmio *vm, uint8_t status) { wr32(vm, REG_STATUS, status); }
uint32_t virtio_mmio_config_generation(struct virtio_mmio *vm) { return rd32(vm, REG_CONFIG_GEN); }
uint32_t virtio_mmio_config_len(const struct virtio_mmio *vm) { return vm->size - VIRTIO_MMIO_CONFIG; }

uint32_t virtio_mmio_device_features(struct virtio_mmio *vm, uint32_t sel)
{
	wr32(vm, REG_DEVICE_FEAT_SEL, sel);
	return rd32(vm, REG_DEVICE_FEATURES);
}

void virtio_mmio_driver_features(struct virtio_mmio *vm, uint32_t sel, uint32_t bits)
{
	wr32(vm, REG_DRIVER_FEAT_SEL, sel);
	wr32(vm, REG_DRIVER_FEATURES, bits);
}

uint16_t virtio_mmio_queue_size(struct virtio_mmio *vm, uint16_t q)
{
	wr32(vm, REG_QUEUE_SEL, q);
	uint32_t max = rd32(vm, REG_QUEUE_NUM_MAX);
	if (max > QUEUE_SIZE_MAX) {
		kprintf("%s: queue %u claims %u entries, more than a ring can have\n", vm->name, q, max);
		return 0;
	}
	return (uint16_t)max;
}

int virtio_mmio_queue_enable(struct virtio_mmio *vm, struct virtqueue *vq, const char **why)
{
	wr32(vm, REG_QUEUE_SEL, vq->index);
	if (rd32(vm, REG_QUEUE_READY) != 0) {
		*why = "a queue was ready before we set it up";
		return -1;
	}
	uint32_t max = rd32(vm, REG_QUEUE_NUM_MAX);
	if (max == 0 || vq->size > max) {
		*why = "a queue's maximum size changed under us";
		return -1;
	}
	wr32(vm, REG_QUEUE_NUM, vq->size);
	wr64(vm, REG_QUEUE_DESC, (uint64_t)vq->desc);
	wr64(vm, REG_QUEUE_DRIVER, (uint64_t)vq->avail);
	wr64(vm, REG_QUEUE_DEVICE, (uint64_t)vq->used);
	wr32(vm, REG_QUEUE_READY, 1);
	if (rd32(vm, REG_QUEUE_READY) != 1) {
		*why = "the device did not make a queue ready";
		return -1;
	}
	vq->notify = vm->regs + REG_QUEUE_NOTIFY;
	vq->notify_32 = true; /* the registers take whole 32-bit stores (4.2.2.2) */
	return 0;
}

uint32_t virtio_mmio_irq_take(struct virtio_mmio *vm)
{
	uint32_t status = rd32(vm, REG_INTERRUPT_STATUS);
	if (status)
		wr32(vm, REG_INTERRUPT_ACK, status);
	return status;
}
