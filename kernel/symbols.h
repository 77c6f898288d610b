/*
 * symbols.h: function names for addresses, read from the image's own ELF
 * symbol table (the loader leaves the image file in memory and says where).
 */
#ifndef SYMBOLS_H
#define SYMBOLS_H

#include <stdint.h>

void symbols_init(const void *image, uint64_t size);
/* Name of the function containing addr and the offset into it, or NULL. */
const char *symbol_lookup(uint64_t addr, uint64_t *offset);

#endif
