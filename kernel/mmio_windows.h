/*
 * mmio_windows.h: the virtio-mmio windows a VMM announces: on the kernel
 * command line, in Linux's syntax, one entry a window:
 *
 *   virtio_mmio.device=SIZE@ADDR:IRQ[:ID]
 *
 * SIZE in bytes, decimal or 0x hex, with an optional K, M or G suffix
 * (QEMU's microvm writes 512, Firecracker 4K); ADDR the window's physical
 * address, 0x hex or decimal; IRQ the I/O APIC input (GSI) its interrupt
 * line is wired to, decimal; ID the platform device number Linux gives it,
 * decimal, accepted and kept but not used. cmdline_parse() takes these
 * entries out of the line wherever they stand (QEMU appends them after the
 * app's arguments); kernel/main.c hands them here and refuses the boot
 * (status 64) on the first one that does not parse or does not fit beside
 * the others. Or, with no such entry, as LNRO0005 devices in the ACPI DSDT
 * (kernel/acpi_dsdt.c), which are held to the same bounds. Pure: built for
 * the host too.
 */
#ifndef MMIO_WINDOWS_H
#define MMIO_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MMIO_WINDOWS_MAX    16              /* entries kept; more is refused */
#define MMIO_WINDOW_MIN     0x100           /* the virtio-mmio registers */
#define MMIO_WINDOW_MAX     0x100000        /* a register window, not a memory region */
#define MMIO_WINDOW_LOWEST  0x100000        /* nothing below 1 MiB (BIOS, VGA, low RAM) */
#define MMIO_WINDOW_LIMIT   (1ULL << 46)    /* the identity mapping's reach, with room */
#define MMIO_IRQ_MAX        255             /* an I/O APIC input number; the I/O APIC
                                             * checks its own count when routing */

struct mmio_window {
	uint64_t base;  /* physical address of the registers */
	uint64_t size;  /* bytes, MMIO_WINDOW_MIN..MMIO_WINDOW_MAX */
	unsigned irq;   /* I/O APIC input (GSI) of its interrupt line */
	long id;        /* the entry's :ID, or -1 without one */
};

/* NULL when w is a register window the kernel may map (its size, address,
 * alignment, IRQ and ID within the bounds above), else why not. */
const char *mmio_window_check(const struct mmio_window *w);
/* The two windows share a byte (both checked first). */
bool mmio_windows_overlap(const struct mmio_window *a, const struct mmio_window *b);
/* Parse one entry's value (what follows "virtio_mmio.device="). 0, or -1
 * with a one-line reason in why. */
int mmio_window_parse(const char *value, struct mmio_window *w, char *why, size_t why_size);
/* Parse and keep the n entries given (each a value as above); a window that
 * overlaps another is refused. 0, or -1 with the reason (naming the entry)
 * in why, and none kept. */
int mmio_windows_set(const char *const *values, int n, char *why, size_t why_size);
/* Keep the n windows found elsewhere (the DSDT), each checked again and
 * against the others: 0, or -1 with the reason in why, and none kept. */
int mmio_windows_use(const struct mmio_window *found, int n, char *why, size_t why_size);
int mmio_window_count(void);
const struct mmio_window *mmio_window_get(int i);

#endif
