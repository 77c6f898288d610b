/*
 * main.c: tools/kernel-options, a host program that prints
 * docs/kernel-options.md from the kernel's table of options (doc.c).
 * `make kernel-options-doc` runs it and writes the file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernel/kernel.h"
#include "tools/kernel-options/doc.h"

/* options.c's accessors ask these; nothing here reads an option's value. */
const char *kernel_option(const char *key)
{
	(void)key;
	return NULL;
}

void panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("kernel-options: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

int main(void)
{
	kernel_options_write_doc(stdout);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
