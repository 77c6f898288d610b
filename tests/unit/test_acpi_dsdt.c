/*
 * test_acpi_dsdt.c: the virtio-mmio devices of a DSDT (kernel/acpi_dsdt.c,
 * kernel/acpi_aml.c), over AML composed here (aml_build.h).
 *
 * The QEMU-shaped table follows the layout of what QEMU 7.2's and 10's
 * microvm write with ACPI on (dumped once from a guest's memory, then
 * written out here by hand, the GED's method shortened): Scope(_SB)
 * holding a fw_cfg device, COM1, the RTC, the generic event device (with
 * an OperationRegion, a Field and a Method), a power button, then the
 * LNRO0005 devices, and Scope(\) with _S5. Around it, hostile tables: a
 * device with no _CRS, every truncation of the table, every byte changed,
 * package lengths that claim too much, a buffer size larger than its
 * package, descriptors that run past their buffer, a wrong _HID,
 * edge-triggered and active-low interrupts, nested scopes and devices (and
 * nesting past the limit), AML the walk does not follow before a device,
 * overlapping windows, and more devices than are kept.
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

/* The _SB scope of a QEMU microvm with ACPI on, with the virtio devices
 * `devices` appended, and Scope(\) { Name(_S5, Package) } after it. */
static struct aml *qemu_dsdt(const struct aml *devices)
{
	struct aml sb = { .n = 0 }, body = { .n = 0 }, crs = { .n = 0 }, top = { .n = 0 };
	/* Device(FWCF): a string _HID, _STA, an I/O port range. */
	static const uint8_t io[] = { 0x47, 0x01, 0x10, 0x05, 0x10, 0x05, 0x01, 0x0c };
	name_string(&body, "_HID", "QEMU0002");
	name_int(&body, "_STA", 0x0b);
	put(&crs, io, sizeof io);
	end_tag(&crs);
	name_buffer(&body, "_CRS", &crs);
	device(&sb, "FWCF", &body);
	/* Device(COM1): an EISA _HID (a dword), ISA IRQ 4. */
	static const uint8_t com_io[] = { 0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03, 0x00, 0x08, 0x22, 0x10, 0x00 };
	body.n = crs.n = 0;
	name_int(&body, "_HID", 0x0105d041); /* EisaId("PNP0501") */
	name_int(&body, "_UID", 1);
	name_int(&body, "_STA", 0x0f);
	put(&crs, com_io, sizeof com_io);
	end_tag(&crs);
	name_buffer(&body, "_CRS", &crs);
	device(&sb, "COM1", &body);
	/* Device(RTC_): an EISA _HID, I/O ports and ISA IRQ 8. */
	static const uint8_t rtc_io[] = { 0x47, 0x01, 0x70, 0x00, 0x70, 0x00, 0x01, 0x08, 0x22, 0x00, 0x01 };
	body.n = crs.n = 0;
	name_int(&body, "_HID", 0x000bd041); /* EisaId("PNP0B00") */
	put(&crs, rtc_io, sizeof rtc_io);
	end_tag(&crs);
	name_buffer(&body, "_CRS", &crs);
	device(&sb, "RTC_", &body);
	/* Device(GED_): an interrupt, OperationRegion, Field, Method(_EVT). */
	static const uint8_t region[] = { 0x5b, 0x80, 'E', 'R', 'E', 'G', 0x00, 0x0c, 0x00, 0x00, 0xa0, 0xfe,
					  0x0a, 0x04 };
	static const uint8_t field[] = { 0x5b, 0x81, 0x0b, 'E', 'R', 'E', 'G', 0x43, 'E', 'S', 'E', 'L', 0x20 };
	static const uint8_t method[] = { 0x14, 0x0f, '_', 'E', 'V', 'T', 0x09, 0x70, 'E', 'S', 'E', 'L', 0x60,
					  0xa0, 0x02, 0x00 };
	body.n = crs.n = 0;
	name_string(&body, "_HID", "ACPI0013");
	name_string(&body, "_UID", "GED");
	ext_irq(&crs, IRQ_CONSUMER | IRQ_EDGE, 9);
	end_tag(&crs);
	name_buffer(&body, "_CRS", &crs);
	put(&body, region, sizeof region);
	put(&body, field, sizeof field);
	put(&body, method, sizeof method);
	device(&sb, "GED_", &body);
	body.n = 0;
	name_string(&body, "_HID", "PNP0C0C");
	name_int(&body, "_UID", 0);
	device(&sb, "PWRB", &body);
	put(&sb, devices->b, devices->n);
	scope(&top, "_SB_", &sb);
	/* Scope(\) { Name(_S5, Package(4) { 5, 0, 0, 0 }) } */
	static const uint8_t s5[] = { 0x10, 0x10, 0x5c, 0x00, 0x08, '_', 'S', '5', '_',
				      0x12, 0x07, 0x04, 0x0a, 0x05, 0x00, 0x00, 0x00 };
	put(&top, s5, sizeof s5);
	return table(&top);
}

static struct acpi_mmio_found found;

/* The reader over a copy of exactly len bytes, so that AddressSanitizer
 * sees a read past them. */
static int read_dsdt(const uint8_t *p, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, p, len);
	int n = acpi_dsdt_virtio_mmio(copy, len, &found);
	free(copy);
	assert_int_equal(n, found.count);
	return n;
}

static void assert_refused(const char *name, const char *reason)
{
	assert_int_equal(found.count, 0);
	assert_int_equal(found.nrefused, 1);
	assert_string_equal(found.refused[0].name, name);
	if (!strstr(found.refused[0].why, reason))
		fail_msg("refused as \"%s\", not \"%s\"", found.refused[0].why, reason);
}

/* One device whose body is `body`, inside Scope(_SB). */
static struct aml *one_device(const struct aml *body)
{
	struct aml dev = { .n = 0 }, top = { .n = 0 };
	device(&dev, "VR00", body);
	scope(&top, "_SB_", &dev);
	return table(&top);
}

/* ---- the tests ----------------------------------------------------------- */

static void qemu_shaped(void **state)
{
	(void)state;
	struct aml devs = { .n = 0 };
	virtio_device(&devs, "VR06", 6, 0xfeb00c00, 22);
	virtio_device(&devs, "VR07", 7, 0xfeb00e00, 23);
	struct aml *t = qemu_dsdt(&devs);
	assert_int_equal(read_dsdt(t->b, t->n), 2);
	assert_string_equal(found.names[0], "VR06");
	assert_int_equal(found.windows[0].base, 0xfeb00c00);
	assert_int_equal(found.windows[0].size, 512);
	assert_int_equal(found.windows[0].irq, 22);
	assert_int_equal(found.windows[0].id, 6);
	assert_string_equal(found.names[1], "VR07");
	assert_int_equal(found.windows[1].base, 0xfeb00e00);
	assert_int_equal(found.windows[1].irq, 23);
	assert_int_equal(found.windows[1].id, 7);
	assert_int_equal(found.nrefused, 0);
	assert_int_equal(found.unfollowed, 0);
	assert_null(found.bad_why);
	/* The header's length is what the kernel passes; a table shorter than
	 * its header has nothing to read. */
	assert_int_equal(read_dsdt(t->b, ACPI_HEADER_LEN), 0);
	assert_int_equal(read_dsdt(t->b, 10), 0);
	/* No virtio device: nothing found, nothing to say. */
	struct aml none = { .n = 0 };
	t = qemu_dsdt(&none);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_int_equal(found.nrefused, 0);
	assert_null(found.bad_why);
}

/* Every prefix of the table, so every package length in it cut: nothing
 * read past it, nothing taken from a Scope(_SB) cut short (its package
 * length claims past the end), both devices once it is whole. */
static void truncated_everywhere(void **state)
{
	(void)state;
	struct aml devs = { .n = 0 };
	virtio_device(&devs, "VR06", 6, 0xfeb00c00, 22);
	virtio_device(&devs, "VR07", 7, 0xfeb00e00, 23);
	struct aml *t = qemu_dsdt(&devs);
	size_t sb_end = t->n - 17; /* Scope(\) { _S5 } follows it */
	for (size_t len = 0; len < t->n; len++) {
		read_dsdt(t->b, len);
		assert_int_equal(found.count, len >= sb_end ? 2 : 0);
		if (len > ACPI_HEADER_LEN && len != sb_end)
			assert_non_null(found.bad_why);
		else
			assert_null(found.bad_why);
	}
}

/* Each byte of the table raised or cleared: whatever is taken is sound. */
static void every_byte_changed(void **state)
{
	(void)state;
	struct aml devs = { .n = 0 };
	virtio_device(&devs, "VR06", 6, 0xfeb00c00, 22);
	virtio_device(&devs, "VR07", 7, 0xfeb00e00, 23);
	struct aml copy = *qemu_dsdt(&devs);
	static const uint8_t values[] = { 0x00, 0x01, 0x3f, 0x40, 0x7f, 0x80, 0xbf, 0xc0, 0xff };
	for (size_t i = ACPI_HEADER_LEN; i < copy.n; i++) {
		for (size_t k = 0; k < sizeof values; k++) {
			struct aml t = copy;
			t.b[i] = values[k];
			read_dsdt(t.b, t.n);
			assert_true(found.count <= 2);
			for (int d = 0; d < found.count; d++)
				assert_null(mmio_window_check(&found.windows[d]));
		}
	}
}

static void package_length_too_long(void **state)
{
	(void)state;
	struct aml body = { .n = 0 }, crs = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	name_string(&body, "_HID", "LNRO0005");
	name_buffer(&body, "_CRS", &crs);
	struct aml *t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 1);
	/* The Device's PkgLength (after 10 xx _SB_ 5B 82) one more than there is. */
	size_t at = ACPI_HEADER_LEN + 2 + 4 + 2;
	t->b[at]++;
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_non_null(strstr(found.bad_why, "past its enclosing package"));
	/* A PkgLength with its reserved bits set. */
	t->b[at]--;
	t->b[at + 0] |= 0x40 | 0x10;
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_non_null(found.bad_why);
}

static void no_crs(void **state)
{
	(void)state;
	struct aml body = { .n = 0 };
	name_string(&body, "_HID", "LNRO0005");
	name_int(&body, "_UID", 0);
	struct aml *t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_refused("VR00", "no _CRS");
	/* A _CRS that is an integer, or a method. */
	name_int(&body, "_CRS", 5);
	t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_refused("VR00", "not a buffer");
	body.n = 0;
	name_string(&body, "_HID", "LNRO0005");
	static const uint8_t method[] = { 0x14, 0x0a, '_', 'C', 'R', 'S', 0x00, 0xa4, 0x11, 0x02, 0x00 };
	put(&body, method, sizeof method);
	t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_refused("VR00", "method");
	/* Two of them. */
	struct aml crs = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	body.n = 0;
	name_string(&body, "_HID", "LNRO0005");
	name_buffer(&body, "_CRS", &crs);
	name_buffer(&body, "_CRS", &crs);
	t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_refused("VR00", "more than one _CRS");
}

static void buffer_larger_than_package(void **state)
{
	(void)state;
	struct aml body = { .n = 0 }, crs = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	name_string(&body, "_HID", "LNRO0005");
	name_buffer_sized(&body, "_CRS", &crs, crs.n + 1);
	struct aml *t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_refused("VR00", "larger than its package");
	/* Smaller than its bytes: the buffer is what its size says, and the
	 * End Tag is then outside it. */
	body.n = 0;
	name_string(&body, "_HID", "LNRO0005");
	name_buffer_sized(&body, "_CRS", &crs, crs.n - 2);
	t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_refused("VR00", "no End Tag");
}

static void wrong_hid(void **state)
{
	(void)state;
	static const char *const hids[] = { "LNRO0006", "lnro0005", "LNRO00051", "LNRO000", "" };
	struct aml crs = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	for (size_t i = 0; i < sizeof hids / sizeof hids[0]; i++) {
		struct aml body = { .n = 0 };
		name_string(&body, "_HID", hids[i]);
		name_buffer(&body, "_CRS", &crs);
		struct aml *t = one_device(&body);
		assert_int_equal(read_dsdt(t->b, t->n), 0);
		assert_int_equal(found.nrefused, 0);
	}
	/* An EISA ID (an integer) is no match either; a _CID is not read. */
	struct aml body = { .n = 0 };
	name_int(&body, "_HID", 0x0105d041);
	name_string(&body, "_CID", "LNRO0005");
	name_buffer(&body, "_CRS", &crs);
	struct aml *t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_int_equal(found.nrefused, 0);
}

static void interrupt_kinds(void **state)
{
	(void)state;
	static const struct { uint8_t flags; const char *why; } kinds[] = {
		{ IRQ_CONSUMER | IRQ_EDGE, "edge-triggered" }, /* Firecracker's */
		{ IRQ_CONSUMER | IRQ_LOW, "active-low" },
		{ IRQ_CONSUMER | IRQ_EDGE | IRQ_LOW, "edge-triggered" },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		struct aml body = { .n = 0 }, crs = virtio_crs(0xd0000000, 4096, kinds[i].flags, 5);
		name_string(&body, "_HID", "LNRO0005");
		name_int(&body, "_UID", 0);
		name_buffer(&body, "_CRS", &crs);
		struct aml *t = one_device(&body);
		assert_int_equal(read_dsdt(t->b, t->n), 0);
		assert_refused("VR00", kinds[i].why);
	}
	/* Shared (bit 3) is no reason to refuse. */
	struct aml body = { .n = 0 }, crs = virtio_crs(0xd0000000, 4096, IRQ_CONSUMER | 0x08, 5);
	name_string(&body, "_HID", "LNRO0005");
	name_buffer(&body, "_CRS", &crs);
	struct aml *t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 1);
	assert_int_equal(found.windows[0].irq, 5);
	assert_int_equal(found.windows[0].id, -1); /* no _UID */
}

static void nested(void **state)
{
	(void)state;
	/* Scope(_SB) { Scope(PCI0) { Device(VR00) } Device(HOST) { Device(VR01) } } */
	struct aml inner = { .n = 0 }, sb = { .n = 0 }, host = { .n = 0 }, top = { .n = 0 };
	virtio_device(&inner, "VR00", 0, 0xfeb00000, 16);
	scope(&sb, "PCI0", &inner);
	struct aml hostbody = { .n = 0 };
	name_string(&hostbody, "_HID", "ACPI0004");
	virtio_device(&hostbody, "VR01", 1, 0xfeb00200, 17);
	name_int(&hostbody, "_UID", 3);
	device(&host, "HOST", &hostbody);
	put(&sb, host.b, host.n);
	scope(&top, "_SB_", &sb);
	struct aml *t = table(&top);
	assert_int_equal(read_dsdt(t->b, t->n), 2);
	assert_string_equal(found.names[0], "VR00");
	assert_string_equal(found.names[1], "VR01");
	assert_int_equal(found.windows[1].id, 1); /* its own _UID, not HOST's */

	/* Scopes nested 15 deep hold a device at the limit; 20 deep, past it. */
	for (int levels = 15; levels <= 20; levels += 5) {
		struct aml a = { .n = 0 }, b;
		virtio_device(&a, "VR00", 0, 0xfeb00000, 16);
		for (int i = 0; i < levels; i++) {
			b = a;
			a.n = 0;
			scope(&a, "DEEP", &b);
		}
		t = table(&a);
		read_dsdt(t->b, t->n);
		assert_int_equal(found.count, levels == 15 ? 1 : 0);
		if (levels == 20)
			assert_non_null(strstr(found.bad_why, "deeper"));
	}
	/* A path as a scope's name; a _HID given by a path names another object. */
	struct aml body = { .n = 0 }, crs = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	static const uint8_t path_hid[] = { 0x08, 0x5c, 0x2e, '_', 'S', 'B', '_', '_', 'H', 'I', 'D', 0x0d,
					    'L', 'N', 'R', 'O', '0', '0', '0', '5', 0x00 };
	put(&body, path_hid, sizeof path_hid);
	name_buffer(&body, "_CRS", &crs);
	t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
}

/* AML the walk does not follow (a Store at the top of a scope, which no
 * VMM writes): the devices after it are still found, by the scan. */
static void unfollowed_aml(void **state)
{
	(void)state;
	struct aml sb = { .n = 0 }, top = { .n = 0 };
	static const uint8_t store[] = { 0x70, 0x0a, 0x05, 'X', 'X', 'X', 'X' };
	put(&sb, store, sizeof store);
	virtio_device(&sb, "VR00", 0, 0xfeb00000, 16);
	virtio_device(&sb, "VR01", 1, 0xfeb00200, 17);
	scope(&top, "_SB_", &sb);
	struct aml *t = table(&top);
	assert_int_equal(read_dsdt(t->b, t->n), 2);
	assert_int_equal(found.unfollowed, 1);
	/* In a device's body, before its _CRS: the device is refused, saying so. */
	struct aml body = { .n = 0 }, crs = virtio_crs(0xfeb00e00, 512, IRQ_CONSUMER, 23);
	name_string(&body, "_HID", "LNRO0005");
	put(&body, store, sizeof store);
	name_buffer(&body, "_CRS", &crs);
	t = one_device(&body);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_refused("VR00", "does not follow");
}

static void windows_checked(void **state)
{
	(void)state;
	/* Out of a register window's bounds: low memory, too small, unaligned. */
	static const struct { uint32_t base, size; const char *why; } bad[] = {
		{ 0x1000, 512, "address outside" },
		{ 0xfeb00000, 0x80, "size outside" },
		{ 0xfeb00002, 512, "not 4-byte aligned" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct aml body = { .n = 0 }, crs = virtio_crs(bad[i].base, bad[i].size, IRQ_CONSUMER, 5);
		name_string(&body, "_HID", "LNRO0005");
		name_buffer(&body, "_CRS", &crs);
		struct aml *t = one_device(&body);
		assert_int_equal(read_dsdt(t->b, t->n), 0);
		assert_refused("VR00", bad[i].why);
	}
	/* Two devices over the same window: the second is refused. */
	struct aml sb = { .n = 0 }, top = { .n = 0 };
	virtio_device(&sb, "VR00", 0, 0xfeb00000, 16);
	virtio_device(&sb, "VR01", 1, 0xfeb00100, 17);
	scope(&top, "_SB_", &sb);
	struct aml *t = table(&top);
	assert_int_equal(read_dsdt(t->b, t->n), 1);
	assert_int_equal(found.nrefused, 1);
	assert_string_equal(found.refused[0].name, "VR01");
	assert_non_null(strstr(found.refused[0].why, "overlaps"));
}

static void too_many(void **state)
{
	(void)state;
	struct aml sb = { .n = 0 }, top = { .n = 0 };
	for (int i = 0; i < MMIO_WINDOWS_MAX + 3; i++) {
		char name[5] = { 'V', 'R', (char)('A' + i / 10), (char)('0' + i % 10), 0 };
		virtio_device(&sb, name, (unsigned)i, 0xfeb00000 + 512 * (uint32_t)i, 5 + (uint32_t)i);
	}
	scope(&top, "_SB_", &sb);
	struct aml *t = table(&top);
	assert_int_equal(read_dsdt(t->b, t->n), MMIO_WINDOWS_MAX);
	assert_int_equal(found.beyond_max, 3);
	/* Every one refused: the first few reasons kept, all counted. */
	sb.n = top.n = 0;
	for (int i = 0; i < ACPI_DSDT_REFUSED_MAX + 2; i++) {
		struct aml body = { .n = 0 };
		name_string(&body, "_HID", "LNRO0005");
		device(&sb, "NOPE", &body);
	}
	scope(&top, "_SB_", &sb);
	t = table(&top);
	assert_int_equal(read_dsdt(t->b, t->n), 0);
	assert_int_equal(found.nrefused, ACPI_DSDT_REFUSED_MAX + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(qemu_shaped),
		cmocka_unit_test(truncated_everywhere),
		cmocka_unit_test(every_byte_changed),
		cmocka_unit_test(package_length_too_long),
		cmocka_unit_test(no_crs),
		cmocka_unit_test(buffer_larger_than_package),
		cmocka_unit_test(wrong_hid),
		cmocka_unit_test(interrupt_kinds),
		cmocka_unit_test(nested),
		cmocka_unit_test(unfollowed_aml),
		cmocka_unit_test(windows_checked),
		cmocka_unit_test(too_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
