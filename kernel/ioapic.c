/*
 * ioapic.c: the I/O APIC, enough to route a legacy ISA interrupt (the serial
 * port's) to a vector on this CPU, and a level-triggered device line (a
 * virtio-mmio window's on QEMU's microvm, which has no MSI). Devices that
 * matter for speed on the PC machine use MSI-X and never come here.
 *
 * QEMU's PC machines put the I/O APIC at 0xfec00000 with ISA IRQs 1-15 on the
 * same-numbered inputs (only the timer, IRQ 0, is overridden to input 2 in the
 * MADT, and we do not use it); reading ACPI to learn that is left for a
 * machine where it differs.
 */
#include "arch.h"
#include "kernel.h"

#define IOAPIC_BASE  0xfec00000ULL
#define REG_VERSION  0x01
#define REG_REDIR(n) (0x10 + 2 * (n))
#define REDIR_MASKED (1u << 16)
#define REDIR_LEVEL  (1u << 15)

static volatile uint32_t *ioapic;
static int inputs; /* redirection entries */

static uint32_t rd(uint32_t reg)
{
	ioapic[0] = reg;
	return ioapic[4];
}

static void wr(uint32_t reg, uint32_t v)
{
	ioapic[0] = reg;
	ioapic[4] = v;
}

void ioapic_init(void)
{
	ioapic = mmio_map(IOAPIC_BASE, PAGE_SIZE);
	inputs = (int)((rd(REG_VERSION) >> 16) & 0xff) + 1;
	if (inputs > 64)
		inputs = 0; /* nothing sane answered: leave it alone */
	for (int i = 0; i < inputs; i++)
		wr(REG_REDIR(i), REDIR_MASKED);
}

int ioapic_route_isa(int irq, int vector)
{
	if (irq < 1 || irq >= inputs)
		return -1;
	wr(REG_REDIR(irq) + 1, lapic_id() << 24);          /* destination: this CPU */
	wr(REG_REDIR(irq), (uint32_t)vector);               /* fixed, edge, active high, unmasked */
	return 0;
}

int ioapic_route_here(int gsi)
{
	if (gsi < 1 || gsi >= inputs)
		return -1;
	uint32_t low = rd(REG_REDIR(gsi));
	if (low & REDIR_MASKED)
		return -1; /* not routed: nothing to move */
	wr(REG_REDIR(gsi), low | REDIR_MASKED); /* no delivery to half a destination */
	wr(REG_REDIR(gsi) + 1, lapic_id() << 24);
	wr(REG_REDIR(gsi), low);
	return 0;
}

int ioapic_route_level(int gsi, int vector)
{
	if (gsi < 1 || gsi >= inputs)
		return -1;
	if (!(rd(REG_REDIR(gsi)) & REDIR_MASKED))
		return -1; /* routed already: two devices on one line are not handled here */
	wr(REG_REDIR(gsi) + 1, lapic_id() << 24);
	/* Fixed, active high, level: the line stays up until the device's
	 * interrupt status is acknowledged, and the EOI the LAPIC broadcasts for
	 * a level vector re-arms the input. */
	wr(REG_REDIR(gsi), REDIR_LEVEL | (uint32_t)vector);
	return 0;
}
