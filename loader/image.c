/*
 * image.c: validation of the application image and its load plan (see image.h).
 *
 * Every field read from the file is checked before it is used as an offset or
 * a size, with overflow-safe arithmetic, because the image is input: a corrupt
 * or hostile file must produce a reason, never a wild copy.
 */
#include <stddef.h>
#include "boot/elf64.h"
#include "image.h"

/* a + b without wrap-around; 0 on overflow (never a valid end here). */
static uint64_t add_end(uint64_t a, uint64_t b)
{
	return a + b < a ? 0 : a + b;
}

static int in_usable_ram(uint64_t start, uint64_t end, const struct mem_range *mem, int nmem)
{
	for (int i = 0; i < nmem; i++) {
		uint64_t mend = add_end(mem[i].base, mem[i].len);
		if (mem[i].type == MEM_USABLE && start >= mem[i].base && end <= mend && mend)
			return 1;
	}
	return 0;
}

static int overlaps(uint64_t s1, uint64_t e1, uint64_t s2, uint64_t e2)
{
	return s1 < e2 && s2 < e1;
}

/* Whether [s1, e1) and [s2, e2) touch a common 4 KiB page. Ends are at most
 * IMAGE_ADDR_LIMIT here, so rounding up cannot wrap. */
static int share_a_page(uint64_t s1, uint64_t e1, uint64_t s2, uint64_t e2)
{
	return overlaps(s1 & ~4095ULL, (e1 + 4095) & ~4095ULL, s2 & ~4095ULL, (e2 + 4095) & ~4095ULL);
}

#define PF_WX (PF_W | PF_X)

const char *image_plan(const void *file, uint64_t size, const struct mem_range *mem, int nmem,
		       const struct addr_range *avoid, int navoid, struct image_plan *plan)
{
	const unsigned char *bytes = file;
	const Elf64_Ehdr *eh = file;

	if (file == NULL || size < sizeof(Elf64_Ehdr))
		return "image too small for an ELF header";
	if (bytes[0] != 0x7f || bytes[1] != 'E' || bytes[2] != 'L' || bytes[3] != 'F')
		return "not an ELF file (bad magic)";
	if (bytes[4] != ELFCLASS64)
		return "not a 64-bit ELF file";
	if (bytes[5] != ELFDATA2LSB)
		return "not a little-endian ELF file";
	if (bytes[6] != EV_CURRENT || eh->e_version != EV_CURRENT)
		return "unknown ELF version";
	if (eh->e_machine != EM_X86_64)
		return "ELF machine is not x86_64";
	if (eh->e_type != ET_EXEC)
		return "ELF type is not an executable";
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return "bad program header entry size";
	if (eh->e_phnum == 0)
		return "no program headers";
	uint64_t ph_end = add_end(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr));
	if (ph_end == 0 || ph_end > size)
		return "program headers lie outside the file";
	if (eh->e_phoff % 8)
		return "misaligned program headers";

	plan->nseg = 0;
	plan->start = UINT64_MAX;
	plan->end = 0;
	plan->entry = eh->e_entry;
	int entry_ok = 0;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(bytes + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_memsz == 0)
			continue;
		const Elf64_Phdr *p = &ph[i];
		uint64_t fend = add_end(p->p_offset, p->p_filesz);
		uint64_t mend = add_end(p->p_paddr, p->p_memsz);
		if (p->p_filesz > p->p_memsz)
			return "segment file size exceeds its memory size";
		if (p->p_filesz && (fend == 0 || fend > size))
			return "segment data lies outside the file";
		if (mend == 0 || mend > IMAGE_ADDR_LIMIT)
			return "segment lies above the loader's 4 GiB map";
		if (p->p_vaddr != p->p_paddr)
			return "segment virtual and physical addresses differ";
		/* W^X: the loader maps each page with its segment's permissions, so
		 * no segment may ask for both, nor share a page with one whose
		 * permissions differ (one of them would get the wrong ones). */
		if ((p->p_flags & PF_WX) == PF_WX)
			return "segment is both writable and executable";
		if (!in_usable_ram(p->p_paddr, mend, mem, nmem))
			return "segment lies outside usable RAM";
		for (int a = 0; a < navoid; a++)
			if (overlaps(p->p_paddr, mend, avoid[a].start, avoid[a].end))
				return "segment overlaps the loader or low memory";
		for (int s = 0; s < plan->nseg; s++) {
			const struct image_segment *o = &plan->seg[s];
			if (overlaps(p->p_paddr, mend, o->paddr, o->paddr + o->memsz))
				return "segments overlap each other";
			if ((p->p_flags & PF_WX) != (o->flags & PF_WX) &&
			    share_a_page(p->p_paddr, mend, o->paddr, o->paddr + o->memsz))
				return "segments with different permissions share a page";
		}
		if (plan->nseg == IMAGE_MAX_SEGMENTS)
			return "too many loadable segments";
		plan->seg[plan->nseg++] = (struct image_segment){
			.offset = p->p_offset, .filesz = p->p_filesz,
			.paddr = p->p_paddr, .memsz = p->p_memsz, .flags = p->p_flags,
		};
		if (p->p_paddr < plan->start)
			plan->start = p->p_paddr;
		if (mend > plan->end)
			plan->end = mend;
		if ((p->p_flags & PF_X) && eh->e_entry >= p->p_paddr && eh->e_entry < mend)
			entry_ok = 1;
	}
	if (plan->nseg == 0)
		return "no loadable segments";
	if (!entry_ok)
		return "entry point is not inside an executable segment";
	return NULL;
}

uint64_t image_module_home(uint64_t mod_start, uint64_t mod_size, const struct image_plan *plan,
			   const struct mem_range *mem, int nmem)
{
	uint64_t mod_end = add_end(mod_start, mod_size);
	if (mod_end == 0)
		return 0;
	if (!overlaps(mod_start, mod_end, plan->start, plan->end))
		return mod_start;
	uint64_t home = (plan->end + 4095) & ~4095ULL;
	uint64_t home_end = add_end(home, mod_size);
	if (home_end == 0 || home_end > IMAGE_ADDR_LIMIT || !in_usable_ram(home, home_end, mem, nmem))
		return 0;
	return home;
}
