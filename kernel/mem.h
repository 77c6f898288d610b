/*
 * mem.h: kernel-internal memory set-up: the free ranges, the page tables and
 * the address checks the panic path needs.
 */
#ifndef MEM_H
#define MEM_H

#include <stdint.h>
#include "boot/bootinfo.h"

void kmem_init(const struct bootinfo *bi);
/* One line (the `verbose` option): RAM, its ranges, where the heap and the
 * pages start. */
void mem_print_layout(void);
/* True when [addr, addr+len) is RAM the kernel mapped (safe to read). */
int mem_is_mapped_ram(uint64_t addr, uint64_t len);
/* Unmaps the page at va (mapped, page aligned): a stack's guard, whose
 * touch is a page fault instead of a write into whatever lies below. Before
 * another CPU uses the tables (no other CPU's TLB is flushed). */
void mem_guard_page(uint64_t va);

#endif
