/*
 * test_acpi_crs.c: a virtio-mmio device's resource template
 * (kernel/acpi_crs.c) and the FADT's pointer to the DSDT
 * (kernel/acpi_tables.c). The template as QEMU writes it, every prefix of
 * it, and each way a descriptor can lie: a length past the buffer, an
 * Extended Interrupt claiming more interrupts than it holds, two
 * interrupts, no End Tag, no window, a Memory32Fixed of the wrong length, a
 * window given another way, an ISA IRQ, GSIs out of range. A FADT of ACPI
 * 1.0 (no X_DSDT), one whose X_DSDT wins, one with neither, one too short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/acpi.h"
#include "aml_build.h"

/* The template alone: each way a descriptor can run past its buffer. */
static void descriptor_past_buffer(void **state)
{
	(void)state;
	struct mmio_window w;
	struct aml t = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	assert_null(acpi_crs_mmio_window(t.b, t.n, &w));
	assert_int_equal(w.base, 0xfeb00e00);
	for (size_t len = 0; len < t.n; len++) {
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, t.b, len);
		assert_non_null(acpi_crs_mmio_window(copy, len, &w));
		free(copy);
	}
	/* A large item whose length runs past the buffer. */
	t.b[1] = 0xff;
	assert_non_null(strstr(acpi_crs_mmio_window(t.b, t.n, &w), "runs past"));
	/* An Extended Interrupt claiming two interrupts in room for one. */
	t = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	t.b[12 + 4] = 2;
	assert_non_null(strstr(acpi_crs_mmio_window(t.b, t.n, &w), "shorter than its interrupts"));
	/* Two interrupts, properly: refused too. */
	struct aml two = { .n = 0 };
	mem32_fixed(&two, 0xfeb00e00, 512);
	ext_irq(&two, IRQ_CONSUMER, 22);
	ext_irq(&two, IRQ_CONSUMER, 23);
	end_tag(&two);
	assert_non_null(strstr(acpi_crs_mmio_window(two.b, two.n, &w), "more than one interrupt"));
	/* A small item whose length runs past the buffer; no End Tag. */
	static const uint8_t small[] = { 0x47, 0x01, 0x10 };
	assert_non_null(strstr(acpi_crs_mmio_window(small, sizeof small, &w), "runs past"));
	static const uint8_t no_end[] = { 0x22, 0x10, 0x00 };
	assert_non_null(acpi_crs_mmio_window(no_end, sizeof no_end, &w));
	/* No window; a Memory32Fixed of the wrong length; a window by Memory32. */
	struct aml irq_only = { .n = 0 };
	ext_irq(&irq_only, IRQ_CONSUMER, 23);
	end_tag(&irq_only);
	assert_non_null(strstr(acpi_crs_mmio_window(irq_only.b, irq_only.n, &w), "no Memory32Fixed"));
	t = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	t.b[1] = 8;
	assert_non_null(acpi_crs_mmio_window(t.b, t.n, &w));
	t = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	t.b[0] = 0x85;
	assert_non_null(strstr(acpi_crs_mmio_window(t.b, t.n, &w), "not given by a Memory32Fixed"));
	/* An interrupt as an ISA IRQ descriptor; GSI 0 and 256. */
	struct aml isa = { .n = 0 };
	mem32_fixed(&isa, 0xfeb00e00, 512);
	put8(&isa, 0x22);
	put_le(&isa, 1u << 5, 2);
	end_tag(&isa);
	assert_non_null(strstr(acpi_crs_mmio_window(isa.b, isa.n, &w), "ISA IRQ"));
	t = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 0);
	assert_non_null(acpi_crs_mmio_window(t.b, t.n, &w));
	t = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 256);
	assert_non_null(acpi_crs_mmio_window(t.b, t.n, &w));
}

static void fadt_dsdt(void **state)
{
	(void)state;
	uint8_t f[276];
	uint64_t dsdt;
	const char *why;
	memset(f, 0, sizeof f);
	memcpy(f, "FACP", 4);
	uint32_t len = 116, d32 = 0xefcc0;
	memcpy(f + 4, &len, 4);
	memcpy(f + 40, &d32, 4);
	/* ACPI 1.0's FADT: no X_DSDT field, whatever lies past its length. */
	memset(f + 140, 0x55, 8);
	assert_int_equal(acpi_fadt_dsdt(f, &dsdt, &why), 0);
	assert_int_equal(dsdt, 0xefcc0);
	/* A long FADT: X_DSDT wins when it is set. */
	len = 268;
	memcpy(f + 4, &len, 4);
	uint64_t x = 0x123456000ULL;
	memcpy(f + 140, &x, 8);
	assert_int_equal(acpi_fadt_dsdt(f, &dsdt, &why), 0);
	assert_int_equal(dsdt, 0x123456000ULL);
	x = 0;
	memcpy(f + 140, &x, 8);
	assert_int_equal(acpi_fadt_dsdt(f, &dsdt, &why), 0);
	assert_int_equal(dsdt, 0xefcc0);
	/* Neither set; too short to hold the field. */
	d32 = 0;
	memcpy(f + 40, &d32, 4);
	assert_int_equal(acpi_fadt_dsdt(f, &dsdt, &why), -1);
	len = 40;
	memcpy(f + 4, &len, 4);
	assert_int_equal(acpi_fadt_dsdt(f, &dsdt, &why), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor_past_buffer),
		cmocka_unit_test(fadt_dsdt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
