/*
 * fuzz_dsdt: the DSDT's AML reader (kernel/acpi_dsdt.c, with the resource
 * template reader kernel/acpi_crs.c) on arbitrary bytes. The input is a
 * DSDT's body, its term list: the harness puts a table header before it, in
 * a buffer of exactly that size, so a read past the table is a heap
 * overflow. What the reader gives back must keep its promises: at most
 * MMIO_WINDOWS_MAX windows, each within a register window's bounds and
 * overlapping no other, each named by four name characters; refusals with a
 * reason; a malformed place inside the table. The same bytes are then read
 * as a resource template alone, whose window (when taken) has the IRQ it
 * promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/acpi.h"

static int name_ok(const char *n)
{
	for (int i = 0; i < 4; i++)
		if (!((n[i] >= 'A' && n[i] <= 'Z') || n[i] == '_' || (i && n[i] >= '0' && n[i] <= '9')))
			return n[0] == 0; /* the null name */
	return n[4] == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct acpi_mmio_found found;
	size_t len = ACPI_HEADER_LEN + size;
	uint8_t *t = malloc(len);
	memset(t, 0, ACPI_HEADER_LEN);
	memcpy(t, "DSDT", 4);
	memcpy(t + ACPI_HEADER_LEN, data, size);
	int n = acpi_dsdt_virtio_mmio(t, len, &found);
	if (n != found.count || n < 0 || n > MMIO_WINDOWS_MAX || found.nrefused < 0 || found.beyond_max < 0)
		abort();
	for (int i = 0; i < n; i++) {
		if (mmio_window_check(&found.windows[i]) || !name_ok(found.names[i]))
			abort();
		for (int j = 0; j < i; j++)
			if (mmio_windows_overlap(&found.windows[i], &found.windows[j]))
				abort();
	}
	for (int i = 0; i < found.nrefused && i < ACPI_DSDT_REFUSED_MAX; i++)
		if (!found.refused[i].why || !found.refused[i].why[0] || !name_ok(found.refused[i].name))
			abort();
	if (found.bad_why && (found.bad_at < ACPI_HEADER_LEN || found.bad_at >= len))
		abort();
	free(t);

	struct mmio_window w = { 0 };
	const char *why = acpi_crs_mmio_window(data, size, &w);
	if (!why && (w.irq == 0 || w.irq > MMIO_IRQ_MAX))
		abort();
	return 0;
}
