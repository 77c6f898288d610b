/*
 * test_copy.c: the data path's copy routines (net/copy.c): each of them, at
 * every length up to 300 bytes and a few long ones, from and to every
 * alignment, copies exactly its bytes and touches nothing around them; the
 * kernel option copy= picks a routine by name, every word the table of
 * options allows is a routine, and the default under a sanitizer is one it
 * can see into.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/kernel.h"
#include "net/net_internal.h"

/* ---- the kernel's side, for copy.c ------------------------------------------ */

static const char *copy_option;

const char *kernel_option(const char *key) { return !strcmp(key, "copy") ? copy_option : NULL; }
enum hypervisor cpu_hypervisor(void) { return HYPERVISOR_KVM; }

/* ---- the copies ------------------------------------------------------------- */

#define GUARD 16
#define LONGEST 20000

static uint8_t src[LONGEST + 2 * GUARD], dst[LONGEST + 2 * GUARD];

/* Copy n bytes from src + GUARD + from to dst + GUARD + to with the routine
 * chosen, and check the copy and GUARD untouched bytes on each side. */
static void check_one(size_t n, size_t from, size_t to)
{
	size_t span = GUARD + to + n + GUARD;
	for (size_t i = 0; i < span; i++)
		src[i] = (uint8_t)(i * 7 + 3), dst[i] = 0xa5;
	void *r = net_copy(dst + GUARD + to, src + GUARD + from, n);
	assert_ptr_equal(r, dst + GUARD + to);
	if (n)
		assert_memory_equal(dst + GUARD + to, src + GUARD + from, n);
	for (size_t i = 0; i < GUARD + to; i++)
		assert_int_equal(dst[i], 0xa5);
	for (size_t i = GUARD + to + n; i < span; i++)
		assert_int_equal(dst[i], 0xa5);
}

static void check_routine(const char *name)
{
	assert_true(net_copy_choose(name));
	assert_string_equal(net_copy_routine(), name);
	for (size_t n = 0; n <= 300; n++)
		for (size_t from = 0; from < 8; from += 3)
			for (size_t to = 0; to < 8; to++)
				check_one(n, from, to);
	const size_t longer[] = { 1459, 1460, 1461, 4096, 16384, LONGEST - 8 };
	for (size_t i = 0; i < sizeof longer / sizeof longer[0]; i++)
		for (size_t to = 0; to < 8; to++)
			check_one(longer[i], 1, to);
}

static void libc_copies(void **state) { (void)state, check_routine("libc"); }
static void words_copies(void **state) { (void)state, check_routine("words"); }
static void movsb_copies(void **state) { (void)state, check_routine("movsb"); }

static void unknown_name_is_refused(void **state)
{
	(void)state;
	assert_true(net_copy_choose("words"));
	assert_false(net_copy_choose("memmove"));
	assert_false(net_copy_choose(""));
	assert_string_equal(net_copy_routine(), "words");
}

static void option_chooses(void **state)
{
	(void)state;
	copy_option = "libc";
	net_copy_init();
	assert_string_equal(net_copy_routine(), "libc");
	copy_option = "movsb";
	net_copy_init();
	assert_string_equal(net_copy_routine(), "movsb");
	copy_option = NULL;
}

/* The boot refuses any other value (kernel/options.c), so each word the
 * table allows must name a routine. */
static void table_words_are_routines(void **state)
{
	(void)state;
	for (const char *const *w = kernel_options[KOPT_COPY].words; *w; w++) {
		copy_option = *w;
		net_copy_init();
		assert_string_equal(net_copy_routine(), *w);
	}
	copy_option = NULL;
}

/* These tests run under AddressSanitizer: the default is the loop, whose
 * loads and stores it checks. */
static void default_under_sanitizer_is_words(void **state)
{
	(void)state;
	copy_option = NULL;
	net_copy_init();
	assert_string_equal(net_copy_routine(), "words");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(libc_copies),
		cmocka_unit_test(words_copies),
		cmocka_unit_test(movsb_copies),
		cmocka_unit_test(unknown_name_is_refused),
		cmocka_unit_test(option_chooses),
		cmocka_unit_test(table_words_are_routines),
		cmocka_unit_test(default_under_sanitizer_is_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
