/*
 * doc.h: docs/kernel-options.md, written from the kernel's table of options
 * (kernel/options.c). tools/kernel-options/main.c prints it (make
 * kernel-options-doc); tests/unit/test_options.c compares it with the file.
 */
#ifndef KERNEL_OPTIONS_DOC_H
#define KERNEL_OPTIONS_DOC_H

#include <stdio.h>

/* Writes the whole document to out. */
void kernel_options_write_doc(FILE *out);

#endif
