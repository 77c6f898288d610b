/*
 * mem.h: kernel-internal memory set-up: the free ranges, the page tables and
 * the address checks the panic path needs.
 */
#ifndef MEM_H
#define MEM_H

#include <stdint.h>
#include "loader/bootinfo.h"

void mem_init(const struct bootinfo *bi);
/* True when [addr, addr+len) is RAM the kernel mapped (safe to read). */
int mem_is_mapped_ram(uint64_t addr, uint64_t len);

#endif
