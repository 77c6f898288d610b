/*
 * test_options.c: the table of kernel options (kernel/options.c). Its
 * entries are whole; the boot's check takes every option the tests and the
 * benchmark pass and refuses, with a line naming it, an unknown name, a flag
 * with a value, a number that is malformed or out of range, a word not in
 * its list and a malformed address; the accessors return the value given or
 * the table's default and panic when asked the wrong way; and
 * docs/kernel-options.md is what the table generates (tools/kernel-options).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/cmdline.h"
#include "kernel/kernel.h"
#include "kernel/switches.h"
#include "tools/kernel-options/doc.h"

#define DOC_PATH "docs/kernel-options.md" /* make test-unit runs in the repository's root */

/* ---- the kernel's side: the parsed command line, and a panic that returns ----- */

static struct cmdline line;
static char why[256];

const char *kernel_option(const char *key) { return cmdline_get(&line, key); }

static jmp_buf panic_return;
static bool panic_expected;
static char panic_message[256];

void panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(panic_message, sizeof panic_message, fmt, ap);
	va_end(ap);
	if (!panic_expected)
		fail_msg("panic: %s", panic_message);
	longjmp(panic_return, 1);
}

/* Parses text as the kernel command line and checks its options: 0 or -1
 * (the reason in why). */
static int check(const char *text)
{
	const char *error;
	if (cmdline_parse(&line, text, "test", &error) < 0)
		fail_msg("cmdline_parse(%s): %s", text, error);
	why[0] = 0;
	return kernel_options_check(&line, why, sizeof why);
}

static void refused(const char *text, const char *reason)
{
	if (check(text) == 0)
		fail_msg("\"%s\" was taken", text);
	assert_string_equal(why, reason);
}

/* ---- the table -------------------------------------------------------------------- */

static void entries_are_whole(void **state)
{
	(void)state;
	for (int i = 0; i < KOPT_COUNT; i++) {
		const struct kopt_spec *s = &kernel_options[i];
		if (!s->name)
			fail_msg("enum kopt %d has no entry", i);
		assert_non_null(s->doc);
		assert_non_null(s->read_in);
		for (int j = 0; j < i; j++)
			if (!strcmp(kernel_options[j].name, s->name))
				fail_msg("%s is in the table twice", s->name);
		/* A default the table holds is one it allows. */
		char reason[128];
		switch (s->kind) {
		case KOPT_FLAG:
			assert_null(s->default_by);
			break;
		case KOPT_NUMBER:
			assert_true(s->min <= s->max);
			if (!s->default_by && (s->number_default < s->min || s->number_default > s->max))
				fail_msg("%s: default %ld outside %ld..%ld", s->name, s->number_default, s->min,
					 s->max);
			break;
		case KOPT_WORD:
		case KOPT_ADDRESS:
			assert_true(s->kind == KOPT_ADDRESS || (s->words && s->words[0]));
			assert_false(s->text_default && s->default_by);
			if (s->text_default && kopt_value_check(s, s->text_default, reason, sizeof reason) < 0)
				fail_msg("%s: default %s: %s", s->name, s->text_default, reason);
			break;
		}
	}
}

/* ---- the boot's check --------------------------------------------------------------- */

/* Every option with values the integration tests, tools/ and bench/ pass. */
static void taken(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"",
		"-- unknown=1 --flags after the separator are the app's",
		"quiet -- -e 42 \"two words\" plain",
		"verbose quiet x2apic=0 pv_eoi=0 -- -s 10",
		"ip=10.0.2.15 gw=10.0.2.2 mask=255.255.255.0 -- -p 80 -s",
		"ip=192.0.2.2 gw=192.0.2.1 mask=255.255.255.0 vnet_drop_kicks=3 vnet_repair=0",
		"vnet_offload=0",
		"vnet_offload=csum",
		"vnet_offload=all vnet_drop_rx=50 vnet_drop_tx=50",
		"spin_us=2000 spin_max_us=250 spin_relax=pause",
		"spin_us=0 spin_relax=barrier",
		"vnet_tx_hold_us=-1",
		"vnet_tx_hold_us=0 vnet_tx_batch=0 vnet_tx_batch=3 vnet_rx_lend=0",
		"vnet_barrier=read vnet_barrier=fence vnet_tx_watchdog_us=0 vnet_tx_watchdog_us=50000",
		"copy=words copy=movsb copy=libc",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		if (check(lines[i]) < 0)
			fail_msg("\"%s\" refused: %s", lines[i], why);
}

static void unknown_name_refused(void **state)
{
	(void)state;
	refused("quiet vnet_tx_hold_uss=0 -- -p 80",
		"unknown option \"vnet_tx_hold_uss\" (docs/kernel-options.md lists them)");
	refused("verbos", "unknown option \"verbos\" (docs/kernel-options.md lists them)");
	refused("Quiet", "unknown option \"Quiet\" (docs/kernel-options.md lists them)");
	/* The Linux guest's options are not the unikernel's. */
	refused("console=ttyS0", "unknown option \"console\" (docs/kernel-options.md lists them)");
}

static void bad_numbers_refused(void **state)
{
	(void)state;
	refused("spin_us=abc", "option spin_us=abc: not a decimal number (docs/kernel-options.md)");
	refused("spin_us=12x", "option spin_us=12x: not a decimal number (docs/kernel-options.md)");
	refused("spin_us=0x10", "option spin_us=0x10: not a decimal number (docs/kernel-options.md)");
	refused("spin_us=+5", "option spin_us=+5: not a decimal number (docs/kernel-options.md)");
	refused("spin_us=-", "option spin_us=-: not a decimal number (docs/kernel-options.md)");
	refused("spin_us= 5", "option spin_us without a value: not a decimal number (docs/kernel-options.md)");
	refused("x2apic", "option x2apic without a value: not a decimal number (docs/kernel-options.md)");
	refused("spin_us=99999999999999999999",
		"option spin_us=99999999999999999999: not a decimal number (docs/kernel-options.md)");
	refused("spin_us=-5", "option spin_us=-5: not in 0..1000000 (docs/kernel-options.md)");
	refused("spin_us=1000001", "option spin_us=1000001: not in 0..1000000 (docs/kernel-options.md)");
	refused("vnet_tx_batch=4", "option vnet_tx_batch=4: not in 0..3 (docs/kernel-options.md)");
	refused("vnet_tx_hold_us=-2", "option vnet_tx_hold_us=-2: not in -1..1000000 (docs/kernel-options.md)");
	refused("x2apic=2", "option x2apic=2: not in 0..1 (docs/kernel-options.md)");
	refused("vnet_drop_rx=1000001",
		"option vnet_drop_rx=1000001: not in 0..1000000 (docs/kernel-options.md)");
	/* The first bad option stops the check: the last one given is not reached. */
	refused("vnet_tx_batch=9 vnet_tx_batch=1", "option vnet_tx_batch=9: not in 0..3 (docs/kernel-options.md)");
}

static void bad_words_and_flags_refused(void **state)
{
	(void)state;
	refused("spin_relax=fast", "option spin_relax=fast: not one of pause, barrier (docs/kernel-options.md)");
	refused("vnet_offload", "option vnet_offload without a value: not one of all, csum, 0 "
				"(docs/kernel-options.md)");
	refused("copy=Words", "option copy=Words: not one of words, movsb, libc (docs/kernel-options.md)");
	refused("verbose=1", "option verbose=1: a flag, given without a value (docs/kernel-options.md)");
	refused("quiet=0", "option quiet=0: a flag, given without a value (docs/kernel-options.md)");
}

static void bad_addresses_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"10.0.2", "10.0.2.256", "10.0.2.15.1", "a.b.c.d", "10..2.15", "10.0.2.", ".10.0.2",
		"0010.0.2.15", "10.0.2.15 ", "-1.0.0.0", "",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[64], reason[192];
		snprintf(text, sizeof text, "\"ip=%s\"", bad[i]);
		if (*bad[i])
			snprintf(reason, sizeof reason, "option ip=%s: not an IPv4 address (four numbers "
				 "0..255 between dots) (docs/kernel-options.md)", bad[i]);
		else
			snprintf(reason, sizeof reason, "option ip without a value: not an IPv4 address "
				 "(four numbers 0..255 between dots) (docs/kernel-options.md)");
		refused(text, reason);
	}
	assert_int_equal(check("ip=0.0.0.0 mask=255.255.255.255 gw=1.2.3.4"), 0);
}

/* ---- the accessors ---------------------------------------------------------------- */

static void values_or_defaults(void **state)
{
	(void)state;
	assert_int_equal(check(""), 0);
	assert_false(kopt_flag(KOPT_VERBOSE));
	assert_int_equal(kopt_number(KOPT_VNET_REPAIR), 1);
	assert_int_equal(kopt_number(KOPT_SPIN_US), SPIN_NS_DEFAULT / 1000);
	assert_int_equal(kopt_number(KOPT_VNET_DROP_KICKS), 0);
	assert_int_equal(kopt_number_or(KOPT_VNET_TX_HOLD_US, 42), 42);
	assert_null(kopt_text(KOPT_IP));
	assert_string_equal(kopt_text(KOPT_MASK), "255.255.255.0");
	assert_string_equal(kopt_text(KOPT_VNET_OFFLOAD), "all");
	assert_null(kopt_text(KOPT_SPIN_RELAX));
	assert_true(kopt_is(KOPT_VNET_OFFLOAD, "all"));
	assert_false(kopt_is(KOPT_SPIN_RELAX, "pause"));
	assert_false(kopt_is(KOPT_SPIN_RELAX, "barrier"));

	assert_int_equal(check("verbose vnet_repair=0 spin_us=7 vnet_tx_hold_us=-1 ip=10.0.0.2 "
			       "vnet_offload=csum spin_relax=barrier spin_us=8"), 0);
	assert_true(kopt_flag(KOPT_VERBOSE));
	assert_int_equal(kopt_number(KOPT_VNET_REPAIR), 0);
	assert_int_equal(kopt_number(KOPT_SPIN_US), 8); /* the last one given */
	assert_int_equal(kopt_number_or(KOPT_VNET_TX_HOLD_US, 42), -1);
	assert_string_equal(kopt_text(KOPT_IP), "10.0.0.2");
	assert_true(kopt_is(KOPT_VNET_OFFLOAD, "csum"));
	assert_false(kopt_is(KOPT_VNET_OFFLOAD, "all"));
	assert_true(kopt_is(KOPT_SPIN_RELAX, "barrier"));
}

/* Runs the accessor call `call` (a function of no arguments) and requires a
 * panic whose message contains `words`. */
static void panics(void (*call)(void), const char *words)
{
	panic_expected = true;
	panic_message[0] = 0;
	if (setjmp(panic_return) == 0) {
		call();
		panic_expected = false;
		fail_msg("no panic (wanted one saying \"%s\")", words);
	}
	panic_expected = false;
	if (!strstr(panic_message, words))
		fail_msg("panic \"%s\" does not say \"%s\"", panic_message, words);
}

static void number_of_a_flag(void) { kopt_number(KOPT_QUIET); }
static void flag_of_a_number(void) { kopt_flag(KOPT_SPIN_US); }
static void table_default_of_a_computed_one(void) { kopt_number(KOPT_SPIN_MAX_US); }
static void computed_default_of_a_fixed_one(void) { kopt_number_or(KOPT_SPIN_US, 1); }
static void word_not_in_the_list(void) { kopt_is(KOPT_SPIN_RELAX, "paws"); }
static void number_unchecked(void) { kopt_number(KOPT_VNET_TX_BATCH); }
static void id_outside_the_table(void) { kopt_flag(KOPT_COUNT); }

/* Each accessor serves one kind; asking the wrong way, or reading a value
 * the boot would have refused, is the reader's bug and a panic, never a
 * silent default. */
static void misuse_panics(void **state)
{
	(void)state;
	assert_int_equal(check(""), 0);
	panics(number_of_a_flag, "quiet");
	panics(flag_of_a_number, "spin_us");
	panics(table_default_of_a_computed_one, "kopt_number_or");
	panics(computed_default_of_a_fixed_one, "kopt_number)");
	panics(word_not_in_the_list, "paws");
	panics(id_outside_the_table, "not in the table");
	const char *error;
	assert_int_equal(cmdline_parse(&line, "vnet_tx_batch=7", "test", &error), 0); /* unchecked */
	panics(number_unchecked, "vnet_tx_batch=7: not in 0..3");
}

/* ---- the documentation ------------------------------------------------------------ */

static void doc_is_current(void **state)
{
	(void)state;
	char *generated = NULL;
	size_t generated_len = 0;
	FILE *out = open_memstream(&generated, &generated_len);
	assert_non_null(out);
	kernel_options_write_doc(out);
	assert_int_equal(fclose(out), 0);

	FILE *in = fopen(DOC_PATH, "r");
	if (!in)
		fail_msg("cannot open %s (run the test from the repository's root)", DOC_PATH);
	static char file[1 << 16];
	size_t file_len = fread(file, 1, sizeof file - 1, in);
	fclose(in);
	file[file_len] = 0;

	if (file_len != generated_len || memcmp(file, generated, file_len)) {
		int line_no = 1;
		for (size_t i = 0; i < file_len && i < generated_len && file[i] == generated[i]; i++)
			line_no += file[i] == '\n';
		free(generated);
		fail_msg("%s differs from the table from line %d on: make kernel-options-doc", DOC_PATH,
			 line_no);
	}
	free(generated);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(entries_are_whole),
		cmocka_unit_test(taken),
		cmocka_unit_test(unknown_name_refused),
		cmocka_unit_test(bad_numbers_refused),
		cmocka_unit_test(bad_words_and_flags_refused),
		cmocka_unit_test(bad_addresses_refused),
		cmocka_unit_test(values_or_defaults),
		cmocka_unit_test(misuse_panics),
		cmocka_unit_test(doc_is_current),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
