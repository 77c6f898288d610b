/*
 * loader.c: the 64-bit part of the loader. It checks the CPU's features
 * (cpu.c), reads the multiboot record, validates the application image
 * (multiboot module 0, an ELF64 executable), copies its segments into place,
 * fills the bootinfo record, switches to W^X page tables covering all usable
 * RAM (paging.c) and jumps to the image's entry point. A bad image ends QEMU
 * with a one-line reason on the serial console and exit status
 * LOADER_BAD_IMAGE, a CPU without a feature the loader or the kernel needs
 * with LOADER_NO_CPU_FEATURE; never a triple fault. Either way the last line
 * is the exit line tools/qemu-run reads ("loader: exit status N").
 */
#include <stddef.h>
#include <stdint.h>
#include "boot/bootinfo.h"
#include "boot/elf64.h"
#include "boot/memmap.h"
#include "cpu.h"
#include "image.h"
#include "multiboot.h"
#include "paging.h"

#define COM1             0x3f8
#define DEBUG_EXIT_PORT  0xf4
#define LOADER_BAD_IMAGE 65 /* EX_DATAERR; qemu-run reports it as the exit status */
#define MAX_RAM_RANGES   (BOOTINFO_MAX_MEM + 8) /* the most memmap can make of the map */
#define GB4              0x100000000ULL

extern char __loader_start[], __loader_end[];
static struct bootinfo bootinfo;

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static void putc_serial(char c)
{
	while (!(inb(COM1 + 5) & 0x20))
		;
	outb(COM1, (uint8_t)c);
}

static void puts_serial(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			putc_serial('\r');
		putc_serial(*s);
	}
}

static void put_hex(uint64_t v)
{
	char buf[19] = "0x";
	for (int i = 0; i < 16; i++)
		buf[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 0xf];
	buf[18] = 0;
	puts_serial(buf);
}

static void put_dec(uint64_t v)
{
	char buf[21], *p = buf + sizeof buf;
	*--p = 0;
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	puts_serial(p);
}

static void serial_init(void)
{
	outb(COM1 + 1, 0x00); /* no interrupts */
	outb(COM1 + 3, 0x80); /* DLAB: set divisor */
	outb(COM1 + 0, 0x01); /* 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03); /* 8N1 */
	outb(COM1 + 2, 0xc7); /* FIFO on */
}

/* The reason, then the exit line (kernel.h's KERNEL_EXIT_LINE, the loader's
 * name), and QEMU's end once the UART has sent them (TEMT). */
static __attribute__((noreturn)) void fail_with(const char *why, int status)
{
	puts_serial("loader: error: ");
	puts_serial(why);
	puts_serial("\nloader: exit status ");
	put_dec((uint64_t)status);
	puts_serial("\n");
	while (!(inb(COM1 + 5) & 0x40))
		;
	outb(DEBUG_EXIT_PORT, (uint8_t)status);
	for (;;)
		__asm__ volatile("cli; hlt");
}

static __attribute__((noreturn)) void fail(const char *why)
{
	fail_with(why, LOADER_BAD_IMAGE);
}

/* The compiler may emit calls to these for struct copies and loops. */
void *memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--)
		*d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (d < s || d >= s + n)
		return memcpy(dst, src, n);
	while (n--)
		d[n] = s[n];
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

static void copy_memory_map(const struct multiboot_info *mbi)
{
	if (!(mbi->flags & MBI_MMAP))
		fail("no memory map from the boot firmware");
	uint64_t p = mbi->mmap_addr, end = (uint64_t)mbi->mmap_addr + mbi->mmap_length;
	while (p + sizeof(struct multiboot_mmap) <= end) {
		const struct multiboot_mmap *m = (const void *)p;
		if (bootinfo.nmem < BOOTINFO_MAX_MEM) {
			bootinfo.mem[bootinfo.nmem++] =
				(struct mem_range){ .base = m->addr, .len = m->len, .type = m->type };
		} else { /* counted, so the kernel can say what it cannot use */
			bootinfo.mem_dropped++;
			if (m->type == MEM_USABLE)
				bootinfo.mem_dropped_usable += m->len;
		}
		p += (uint64_t)m->size + 4;
	}
}

static void copy_cmdline(const struct multiboot_info *mbi)
{
	if (!(mbi->flags & MBI_CMDLINE))
		return;
	const char *s = (const char *)(uint64_t)mbi->cmdline;
	size_t i = 0;
	for (; s[i] && i < BOOTINFO_CMDLINE - 1; i++)
		bootinfo.cmdline[i] = s[i];
	bootinfo.cmdline[i] = 0;
	if (s[i])
		fail("kernel command line longer than 4095 bytes");
}

/* Whether the kernel options (the command line before `--`) hold `word`, bare
 * or as word=value. Quotes are not parsed: this only decides whether the
 * loader prints one more line. */
static int has_option(const char *s, const char *word)
{
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		const char *t = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		size_t n = (size_t)(s - t), k = 0;
		if (n == 2 && t[0] == '-' && t[1] == '-')
			return 0;
		while (k < n && word[k] && t[k] == word[k])
			k++;
		if (n && !word[k] && (k == n || t[k] == '='))
			return 1;
	}
	return 0;
}

static void put_counts(const struct page_counts *n)
{
	put_dec(n->rx);
	puts_serial(" RX ");
	put_dec(n->r);
	puts_serial(" R ");
	put_dec(n->rw);
	puts_serial(" RW");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * The hand-over map (paging.c) over every usable RAM range the CPU can
 * address. Its tables for RAM above 4 GiB take free pages below 4 GiB, clear
 * of low memory, the loader, the image and its file; bootinfo records them
 * (the kernel keeps them until it has its own tables) and where the mapped
 * RAM ends.
 */
static void build_map(const struct image_plan *plan, uint64_t mod_start, uint64_t mod_size,
		      struct paging_map *map)
{
	struct phys_range ram[MAX_RAM_RANGES], free[MAX_RAM_RANGES];
	int nram = memmap_free_ranges(bootinfo.mem, (int)bootinfo.nmem, NULL, 0, ram, MAX_RAM_RANGES, NULL);
	bootinfo.cpu_phys_bits = cpu_phys_addr_bits();
	uint64_t limit = bootinfo.cpu_phys_bits >= 47 ? PAGING_ADDR_LIMIT : 1ULL << bootinfo.cpu_phys_bits;

	const struct phys_range in_use[] = {
		{ 0, 0x100000 },
		{ bootinfo.loader_start, bootinfo.loader_end },
		{ plan->start, plan->end },
		{ mod_start, mod_start + mod_size },
	};
	int nfree = memmap_free_ranges(bootinfo.mem, (int)bootinfo.nmem, in_use, 4, free, MAX_RAM_RANGES, NULL);
	uint64_t want = paging_pool_pages(ram, nram, limit), pool = 0;
	for (int i = 0; i < nfree && want && !pool; i++) {
		uint64_t end = free[i].end < GB4 ? free[i].end : GB4;
		if (free[i].start < end && (end - free[i].start) / 4096 >= want)
			pool = free[i].start;
	}
	if (!pool) /* then only the first 4 GiB; the kernel says what is left out */
		want = 0;

	const char *why = paging_build(plan, ram, nram, limit, (uint64_t *)pool, want, map);
	if (why)
		fail(why);
	bootinfo.ram_limit = map->ram_limit;
	bootinfo.tables_start = pool;
	bootinfo.tables_end = pool + map->tables_used * 4096;
}

void loader_main(uint32_t magic, uint32_t mbi_addr)
{
	serial_init();
	const char *why = cpu_missing_feature(); /* before the TSC is read */
	if (why)
		fail_with(why, LOADER_NO_CPU_FEATURE);
	uint64_t tsc = rdtsc();
	if (magic != MULTIBOOT_BOOTLOADER_MAGIC)
		fail("not started by a multiboot loader");
	const struct multiboot_info *mbi = (const void *)(uint64_t)mbi_addr;

	bootinfo.magic = BOOTINFO_MAGIC;
	bootinfo.version = BOOTINFO_VERSION;
	bootinfo.tsc_at_entry = tsc;
	bootinfo.loader_start = (uint64_t)__loader_start;
	bootinfo.loader_end = (uint64_t)__loader_end;
	copy_memory_map(mbi);
	copy_cmdline(mbi);

	if (!(mbi->flags & MBI_MODS) || mbi->mods_count < 1)
		fail("no application image (pass one with -initrd)");
	const struct multiboot_module *mod = (const void *)(uint64_t)mbi->mods_addr;
	uint64_t mod_start = mod->mod_start, mod_size = mod->mod_end - mod->mod_start;
	if (mod->mod_end < mod->mod_start)
		fail("application image has a negative size");

	/* Segments stay clear of low memory (BIOS, real-mode structures) and of us. */
	const struct addr_range avoid[] = {
		{ 0, 0x100000 },
		{ bootinfo.loader_start, bootinfo.loader_end },
	};
	struct image_plan plan;
	why = image_plan((const void *)mod_start, mod_size, bootinfo.mem,
				     (int)bootinfo.nmem, avoid, 2, &plan);
	if (why)
		fail(why);

	uint64_t home = image_module_home(mod_start, mod_size, &plan, bootinfo.mem, (int)bootinfo.nmem);
	if (home == 0)
		fail("no room to move the image file out of its own load area");
	if (home != mod_start) {
		memmove((void *)home, (const void *)mod_start, mod_size);
		mod_start = home;
	}
	for (int i = 0; i < plan.nseg; i++) {
		const struct image_segment *s = &plan.seg[i];
		memcpy((void *)s->paddr, (const char *)mod_start + s->offset, s->filesz);
		memset((char *)s->paddr + s->filesz, 0, s->memsz - s->filesz);
	}
	bootinfo.image_base = mod_start;
	bootinfo.image_size = mod_size;
	bootinfo.load_start = plan.start;
	bootinfo.load_end = plan.end;

	struct paging_map map;
	build_map(&plan, mod_start, mod_size, &map);
	puts_serial("loader: image ");
	put_hex(plan.start);
	puts_serial("-");
	put_hex(plan.end);
	puts_serial(" entry ");
	put_hex(plan.entry);
	puts_serial("\n");
	if (has_option(bootinfo.cmdline, "verbose")) {
		puts_serial("loader: W^X map: image ");
		put_counts(&map.image);
		puts_serial(", loader ");
		put_counts(&map.loader);
		puts_serial(" (4 KiB pages); the rest RW no-execute\n");
		puts_serial("loader: RAM mapped below ");
		put_hex(bootinfo.ram_limit);
		puts_serial(" (");
		put_dec(bootinfo.cpu_phys_bits);
		puts_serial("-bit physical addresses), ");
		put_dec(map.tables_used);
		puts_serial(" page tables for RAM above 4 GiB at ");
		put_hex(bootinfo.tables_start);
		puts_serial("\n");
	}

	/* From here the loader runs on the hand-over map: its stack and
	 * bootinfo are writable, its text executable, and nothing is both. */
	paging_enter();
	void (*entry)(struct bootinfo *) = (void (*)(struct bootinfo *))plan.entry;
	entry(&bootinfo);
	fail("the image returned to the loader");
}
