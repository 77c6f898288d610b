/*
 * elf64.h: the ELF64 structures the loader (to load the image) and the kernel
 * (to read its own symbol table for backtraces) need. Freestanding builds have
 * no <elf.h>, so the few definitions live here.
 */
#ifndef ELF64_H
#define ELF64_H

#include <stdint.h>

#define EI_NIDENT    16
#define ELFMAG       "\177ELF"
#define ELFCLASS64   2
#define ELFDATA2LSB  1
#define EV_CURRENT   1
#define ET_EXEC      2
#define EM_X86_64    62
#define PT_LOAD      1
#define PF_X         1
#define PF_W         2
#define PF_R         4
#define SHT_SYMTAB   2
#define STT_FUNC     2
#define ELF64_ST_TYPE(info) ((info) & 0xf)

typedef struct {
	unsigned char e_ident[EI_NIDENT];
	uint16_t e_type;
	uint16_t e_machine;
	uint32_t e_version;
	uint64_t e_entry;
	uint64_t e_phoff;
	uint64_t e_shoff;
	uint32_t e_flags;
	uint16_t e_ehsize;
	uint16_t e_phentsize;
	uint16_t e_phnum;
	uint16_t e_shentsize;
	uint16_t e_shnum;
	uint16_t e_shstrndx;
} Elf64_Ehdr;

typedef struct {
	uint32_t p_type;
	uint32_t p_flags;
	uint64_t p_offset;
	uint64_t p_vaddr;
	uint64_t p_paddr;
	uint64_t p_filesz;
	uint64_t p_memsz;
	uint64_t p_align;
} Elf64_Phdr;

typedef struct {
	uint32_t sh_name;
	uint32_t sh_type;
	uint64_t sh_flags;
	uint64_t sh_addr;
	uint64_t sh_offset;
	uint64_t sh_size;
	uint32_t sh_link;
	uint32_t sh_info;
	uint64_t sh_addralign;
	uint64_t sh_entsize;
} Elf64_Shdr;

typedef struct {
	uint32_t st_name;
	unsigned char st_info;
	unsigned char st_other;
	uint16_t st_shndx;
	uint64_t st_value;
	uint64_t st_size;
} Elf64_Sym;

#endif
