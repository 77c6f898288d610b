/*
 * symbols.c: address-to-name lookup for backtraces. The symbol and string
 * tables are located once at boot and bounds-checked then; a lookup is a
 * linear scan, which is fine for the panic path it serves.
 */
#include <stddef.h>
#include "boot/elf64.h"
#include "symbols.h"

static const Elf64_Sym *symtab;
static uint64_t nsyms;
static const char *strtab;
static uint64_t strtab_size;

void symbols_init(const void *image, uint64_t size)
{
	const unsigned char *base = image;
	const Elf64_Ehdr *eh = image;
	if (!image || size < sizeof *eh || eh->e_shentsize != sizeof(Elf64_Shdr))
		return;
	if (eh->e_shoff > size || (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
		return;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *st = &sh[sh[i].sh_link];
		if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
		    st->sh_offset > size || st->sh_size > size - st->sh_offset || st->sh_size == 0)
			return;
		symtab = (const Elf64_Sym *)(base + sh[i].sh_offset);
		nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
		strtab = (const char *)(base + st->sh_offset);
		strtab_size = st->sh_size;
		return;
	}
}

const char *symbol_lookup(uint64_t addr, uint64_t *offset)
{
	const Elf64_Sym *best = NULL;
	for (uint64_t i = 0; i < nsyms; i++) {
		const Elf64_Sym *s = &symtab[i];
		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_value > addr || s->st_name >= strtab_size)
			continue;
		if (s->st_size && addr >= s->st_value + s->st_size)
			continue;
		/* A symbol without a size (assembly entry points) names only
		 * addresses just after it, not everything above it. */
		if (!s->st_size && addr - s->st_value >= 4096)
			continue;
		if (!best || s->st_value > best->st_value)
			best = s;
	}
	if (!best)
		return NULL;
	*offset = addr - best->st_value;
	/* The string table ends with a NUL (checked at its last byte). */
	return strtab[strtab_size - 1] == 0 ? strtab + best->st_name : NULL;
}
