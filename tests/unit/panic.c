/*
 * panic.c: the kernel's panic() for the unit tests that run kernel code on
 * the host (unit.mk links it where a test needs it): a KASSERT, or lwIP's
 * assertion, in the code under test fails the test with the panic's message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "kernel/kernel.h"

void panic(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fail_msg("panic: %s", buf);
	abort();
}
