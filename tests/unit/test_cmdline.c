/*
 * test_cmdline.c: the kernel command-line parser: options, flags, quoting,
 * the `--` split into argv, the VMM's virtio_mmio.device entries taken out
 * wherever they stand, and every limit reported as an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/cmdline.h"

static struct cmdline c;
static const char *err;

static void options_and_flags(void **state)
{
	(void)state;
	assert_int_equal(cmdline_parse(&c, "ip=10.0.0.2 verbose  mask=255.0.0.0", "app", &err), 0);
	assert_int_equal(c.nopts, 3);
	assert_string_equal(cmdline_get(&c, "ip"), "10.0.0.2");
	assert_string_equal(cmdline_get(&c, "verbose"), "");
	assert_string_equal(cmdline_get(&c, "mask"), "255.0.0.0");
	assert_null(cmdline_get(&c, "gw"));
	assert_int_equal(c.argc, 1);
	assert_string_equal(c.argv[0], "app");
	assert_null(c.argv[1]);
}

static void argv_after_double_dash(void **state)
{
	(void)state;
	assert_int_equal(cmdline_parse(&c, "quiet -- -p 80 -- x", "httpd", &err), 0);
	assert_int_equal(c.nopts, 1);
	assert_int_equal(c.argc, 5);
	assert_string_equal(c.argv[1], "-p");
	assert_string_equal(c.argv[2], "80");
	assert_string_equal(c.argv[3], "--"); /* only the first -- separates */
	assert_string_equal(c.argv[4], "x");
	assert_null(c.argv[5]);
}

static void quotes_and_escapes(void **state)
{
	(void)state;
	assert_int_equal(cmdline_parse(&c, "name=\"a b\" -- \"x y\" \"say \\\"hi\\\"\" a\"b\"c \"\"", "a", &err), 0);
	assert_string_equal(cmdline_get(&c, "name"), "a b");
	assert_int_equal(c.argc, 5);
	assert_string_equal(c.argv[1], "x y");
	assert_string_equal(c.argv[2], "say \"hi\"");
	assert_string_equal(c.argv[3], "abc");
	assert_string_equal(c.argv[4], "");
}

static void last_duplicate_wins_and_value_may_hold_equals(void **state)
{
	(void)state;
	assert_int_equal(cmdline_parse(&c, "k=1 k=2 x=a=b", "a", &err), 0);
	assert_string_equal(cmdline_get(&c, "k"), "2");
	assert_string_equal(cmdline_get(&c, "x"), "a=b");
}

static void empty_and_null_lines(void **state)
{
	(void)state;
	assert_int_equal(cmdline_parse(&c, "", "a", &err), 0);
	assert_int_equal(c.nopts, 0);
	assert_int_equal(c.argc, 1);
	assert_int_equal(cmdline_parse(&c, NULL, "a", &err), 0);
	assert_int_equal(cmdline_parse(&c, " \t\n ", "a", &err), 0);
	assert_int_equal(c.nopts, 0);
}

static void errors(void **state)
{
	(void)state;
	assert_int_equal(cmdline_parse(&c, "a=\"open", "a", &err), -1);
	assert_non_null(strstr(err, "quote"));
	assert_int_equal(cmdline_parse(&c, "=x", "a", &err), -1);
	assert_non_null(strstr(err, "empty name"));

	char line[CMDLINE_MAX_OPTS * 4 + 16] = "";
	for (int i = 0; i <= CMDLINE_MAX_OPTS; i++)
		strcat(line, "o=1 ");
	assert_int_equal(cmdline_parse(&c, line, "a", &err), -1);
	assert_non_null(strstr(err, "too many kernel options"));

	char args[8 + CMDLINE_MAX_ARGS * 2 + 8] = "--";
	for (int i = 0; i <= CMDLINE_MAX_ARGS; i++)
		strcat(args, " a");
	assert_int_equal(cmdline_parse(&c, args, "a", &err), -1);
	assert_non_null(strstr(err, "too many application arguments"));
}

static void exactly_the_buffer_and_one_more(void **state)
{
	(void)state;
	/* One word of CMDLINE_BUF - 1 characters fits with its NUL; one more does not. */
	static char line[CMDLINE_BUF + 8];
	memset(line, 'x', CMDLINE_BUF - 1);
	line[CMDLINE_BUF - 1] = 0;
	assert_int_equal(cmdline_parse(&c, line, "a", &err), 0);
	assert_int_equal(strlen(c.opts[0].key), CMDLINE_BUF - 1);
	memset(line, 'x', CMDLINE_BUF);
	line[CMDLINE_BUF] = 0;
	assert_int_equal(cmdline_parse(&c, line, "a", &err), -1);
	/* Many empty words cannot overrun the buffer either. */
	static char empties[CMDLINE_BUF * 3 + 8];
	empties[0] = 0;
	strcat(empties, "-- ");
	for (int i = 0; i < CMDLINE_BUF; i++)
		strcat(empties, "\"\" ");
	assert_int_equal(cmdline_parse(&c, empties, "a", &err), -1);
}

/* QEMU's microvm appends its entries after the app's arguments: they are
 * neither options nor argv. */
static void mmio_device_entries_taken_out(void **state)
{
	(void)state;
	assert_int_equal(cmdline_parse(&c, "verbose virtio_mmio.device=4K@0xd0000000:5 -- -p 80 "
				       "virtio_mmio.device=512@0xfeb00e00:12", "httpd", &err), 0);
	assert_int_equal(c.nopts, 1);
	assert_string_equal(c.opts[0].key, "verbose");
	assert_int_equal(c.argc, 3);
	assert_string_equal(c.argv[1], "-p");
	assert_string_equal(c.argv[2], "80");
	assert_null(c.argv[3]);
	assert_int_equal(c.ndevices, 2);
	assert_string_equal(c.devices[0], "4K@0xd0000000:5");
	assert_string_equal(c.devices[1], "512@0xfeb00e00:12");
	/* An empty value is kept, for mmio_windows_set to refuse by name. */
	assert_int_equal(cmdline_parse(&c, "virtio_mmio.device=", "a", &err), 0);
	assert_int_equal(c.ndevices, 1);
	assert_string_equal(c.devices[0], "");
	/* A name that only begins alike is an ordinary option. */
	assert_int_equal(cmdline_parse(&c, "virtio_mmio.devices=1", "a", &err), 0);
	assert_int_equal(c.ndevices, 0);
	assert_int_equal(c.nopts, 1);

	char line[CMDLINE_MAX_DEVICES * 40 + 40] = "";
	for (int i = 0; i < CMDLINE_MAX_DEVICES; i++)
		strcat(line, "virtio_mmio.device=512@0xfeb00000:5 ");
	assert_int_equal(cmdline_parse(&c, line, "a", &err), 0);
	assert_int_equal(c.ndevices, CMDLINE_MAX_DEVICES);
	strcat(line, "-- virtio_mmio.device=512@0xfeb00000:5");
	assert_int_equal(cmdline_parse(&c, line, "a", &err), -1);
	assert_non_null(strstr(err, "too many virtio_mmio.device entries"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(options_and_flags),
		cmocka_unit_test(argv_after_double_dash),
		cmocka_unit_test(quotes_and_escapes),
		cmocka_unit_test(last_duplicate_wins_and_value_may_hold_equals),
		cmocka_unit_test(empty_and_null_lines),
		cmocka_unit_test(errors),
		cmocka_unit_test(exactly_the_buffer_and_one_more),
		cmocka_unit_test(mmio_device_entries_taken_out),
	};
	return cmocka_run_group_tests_name("cmdline", tests, NULL, NULL);
}
