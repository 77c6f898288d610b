/*
 * acpi_crs.c: a virtio-mmio device's resource template (the buffer its _CRS
 * names, found by acpi_dsdt.c) to its register window and interrupt (see
 * acpi.h). Each descriptor is read by its own length, small or large item,
 * checked against what remains of the buffer before any of it is read,
 * and the End Tag ends the template. Pure: built for the host too.
 */
#include "acpi.h"
#include "acpi_aml.h"

/* Resource descriptors (ACPI 6, section 6.4). A small item's tag byte holds
 * its type in bits 6-3 and its length in bits 2-0; a large item's is
 * 0x80 | type, followed by a 16-bit length. */
#define RES_LARGE            0x80
#define RES_SMALL_TYPE(tag)  (((tag) >> 3) & 0x0f)
#define RES_SMALL_LEN(tag)   ((tag) & 0x07)
#define RES_SMALL_IRQ        0x04
#define RES_SMALL_END        0x0f
#define RES_MEMORY24         0x01
#define RES_MEMORY32         0x05
#define RES_MEMORY32_FIXED   0x06
#define RES_DWORD_ADDRESS    0x07
#define RES_WORD_ADDRESS     0x08
#define RES_EXT_INTERRUPT    0x09
#define RES_QWORD_ADDRESS    0x0a
#define RES_EXT_ADDRESS      0x0b
#define RES_MEMORY32_FIXED_LEN 9    /* information byte, base, length */
#define RES_ADDRESS_MEMORY   0      /* an address space descriptor's type: memory */
#define RES_IRQ_EDGE         (1u << 1) /* Extended Interrupt flags: edge, not level */
#define RES_IRQ_ACTIVE_LOW   (1u << 2) /* active-low, not active-high */

const char *acpi_crs_mmio_window(const uint8_t *b, size_t len, struct mmio_window *w)
{
	int windows = 0, interrupts = 0;
	size_t p = 0;
	for (;;) {
		if (p >= len)
			return "its _CRS has no End Tag";
		uint8_t tag = b[p];
		if (!(tag & RES_LARGE)) {
			size_t n = RES_SMALL_LEN(tag);
			if (n > len - p - 1)
				return "a descriptor in its _CRS runs past the buffer";
			if (RES_SMALL_TYPE(tag) == RES_SMALL_END)
				break;
			if (RES_SMALL_TYPE(tag) == RES_SMALL_IRQ)
				return "its interrupt is an ISA IRQ descriptor (only an Extended Interrupt is read)";
			p += 1 + n;
			continue;
		}
		if (len - p < 3)
			return "a descriptor in its _CRS runs past the buffer";
		size_t n = (size_t)aml_le(b + p + 1, 2);
		const uint8_t *body = b + p + 3;
		if (n > len - p - 3)
			return "a descriptor in its _CRS runs past the buffer";
		switch (tag & ~RES_LARGE) {
		case RES_MEMORY32_FIXED:
			if (n != RES_MEMORY32_FIXED_LEN)
				return "a Memory32Fixed descriptor of the wrong length";
			w->base = aml_le(body + 1, 4);
			w->size = aml_le(body + 5, 4);
			windows++;
			break;
		case RES_EXT_INTERRUPT: {
			if (n < 2 || body[1] > (n - 2) / 4)
				return "an Extended Interrupt descriptor shorter than its interrupts";
			if (body[1] != 1)
				return body[1] ? "more than one interrupt in its _CRS" : "an Extended Interrupt with no interrupt";
			if (body[0] & RES_IRQ_EDGE)
				return "its interrupt is edge-triggered (the driver routes it level-triggered)";
			if (body[0] & RES_IRQ_ACTIVE_LOW)
				return "its interrupt is active-low (the driver routes it active-high)";
			uint64_t gsi = aml_le(body + 2, 4);
			if (gsi == 0 || gsi > MMIO_IRQ_MAX)
				return "its interrupt is outside 1..255";
			w->irq = (unsigned)gsi;
			interrupts++;
			break;
		}
		case RES_MEMORY24:
		case RES_MEMORY32:
			return "its window is not given by a Memory32Fixed descriptor";
		case RES_DWORD_ADDRESS:
		case RES_WORD_ADDRESS:
		case RES_QWORD_ADDRESS:
		case RES_EXT_ADDRESS:
			if (n >= 1 && body[0] == RES_ADDRESS_MEMORY)
				return "its window is not given by a Memory32Fixed descriptor";
			break;
		default:
			break;
		}
		p += 3 + n;
	}
	if (windows != 1)
		return windows ? "more than one memory window in its _CRS" : "no Memory32Fixed window in its _CRS";
	if (interrupts != 1)
		return interrupts ? "more than one interrupt in its _CRS" : "no Extended Interrupt in its _CRS";
	return NULL;
}
