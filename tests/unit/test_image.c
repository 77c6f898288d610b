/*
 * test_image.c: the loader's validation of the application image. A valid
 * image is built in memory; each test breaks one thing and checks the reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "boot/elf64.h"
#include "loader/image.h"

#define MB (1ULL << 20)

static const struct mem_range ram[] = {
	{ 0, 0x9fc00, MEM_USABLE, 0 },
	{ 0xf0000, 0x10000, MEM_RESERVED, 0 },
	{ MB, 255 * MB, MEM_USABLE, 0 },
};
static const struct addr_range avoid[] = { { 0, MB }, { MB, MB + 0x10000 } };

/* An image of two segments: text at 4 MiB, data+bss after it. */
static unsigned char file[8192];
static Elf64_Ehdr *eh;
static Elf64_Phdr *ph;

static int setup(void **state)
{
	(void)state;
	memset(file, 0, sizeof file);
	eh = (Elf64_Ehdr *)file;
	memcpy(eh->e_ident, ELFMAG, 4);
	eh->e_ident[4] = ELFCLASS64;
	eh->e_ident[5] = ELFDATA2LSB;
	eh->e_ident[6] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = 4 * MB + 0x10;
	eh->e_phoff = sizeof *eh;
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 2;
	ph = (Elf64_Phdr *)(file + eh->e_phoff);
	ph[0] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, 0x1000, 4 * MB, 4 * MB, 0x800, 0x800, 0x1000 };
	ph[1] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_W, 0x1800, 4 * MB + 0x1000, 4 * MB + 0x1000, 0x100, 0x5000, 0x1000 };
	return 0;
}

static const char *plan(struct image_plan *p)
{
	return image_plan(file, sizeof file, ram, 3, avoid, 2, p);
}

static void valid_image_is_planned(void **state)
{
	(void)state;
	struct image_plan p;
	assert_null(plan(&p));
	assert_int_equal(p.nseg, 2);
	assert_int_equal(p.entry, 4 * MB + 0x10);
	assert_int_equal(p.start, 4 * MB);
	assert_int_equal(p.end, 4 * MB + 0x6000);
	assert_int_equal(p.seg[1].filesz, 0x100);
	assert_int_equal(p.seg[1].memsz, 0x5000);
}

static void expect(const char *fragment)
{
	struct image_plan p;
	const char *why = plan(&p);
	assert_non_null(why);
	if (!strstr(why, fragment))
		fail_msg("reason '%s' does not mention '%s'", why, fragment);
}

static void header_checks(void **state)
{
	(void)state;
	struct image_plan p;
	assert_non_null(image_plan(file, 10, ram, 3, avoid, 2, &p));
	assert_non_null(image_plan(NULL, 0, ram, 3, avoid, 2, &p));
	file[1] = 'X';
	expect("magic");
	setup(NULL), file[4] = 1;
	expect("64-bit");
	setup(NULL), file[5] = 2;
	expect("little-endian");
	setup(NULL), eh->e_machine = 3;
	expect("x86_64");
	setup(NULL), eh->e_type = 3;
	expect("executable");
	setup(NULL), eh->e_phnum = 0;
	expect("no program headers");
	setup(NULL), eh->e_phoff = sizeof file - 8;
	expect("outside the file");
	setup(NULL), eh->e_phoff = UINT64_MAX - 8;
	expect("outside the file");
	setup(NULL), eh->e_phentsize = 12;
	expect("entry size");
}

static void segment_checks(void **state)
{
	(void)state;
	ph[0].p_filesz = 0x900; /* more file than memory */
	expect("file size exceeds");
	setup(NULL), ph[1].p_offset = sizeof file - 0x10;
	expect("outside the file");
	setup(NULL), ph[1].p_offset = UINT64_MAX - 0x10;
	expect("outside the file");
	setup(NULL), ph[1].p_paddr = ph[1].p_vaddr = 300 * MB; /* beyond RAM */
	expect("outside usable RAM");
	setup(NULL), ph[1].p_paddr = ph[1].p_vaddr = 0xa0000; /* the hole below 1 MiB */
	expect("outside usable RAM");
	setup(NULL), ph[1].p_paddr = ph[1].p_vaddr = 0x1000; /* low memory: RAM, but avoided */
	expect("overlaps the loader");
	setup(NULL), ph[1].p_paddr = ph[1].p_vaddr = MB + 0x8000;
	expect("overlaps the loader");
	setup(NULL), ph[1].p_paddr = ph[1].p_vaddr = UINT64_MAX - 0x100;
	expect("4 GiB");
	setup(NULL), ph[1].p_paddr = ph[1].p_vaddr = 4 * MB + 0x400;
	expect("overlap each other");
	setup(NULL), ph[1].p_vaddr = 0x80000000;
	expect("virtual and physical");
	setup(NULL), eh->e_entry = 4 * MB + 0x1000; /* in the data segment */
	expect("entry point");
	setup(NULL), ph[0].p_type = ph[1].p_type = 6;
	expect("no loadable segments");
}

/* W^X: the loader maps pages by their segment's flags, so it refuses a segment
 * that is both writable and executable, and a page two segments of different
 * permissions would share. */
static void write_xor_execute(void **state)
{
	(void)state;
	ph[0].p_flags = PF_R | PF_W | PF_X;
	expect("both writable and executable");
	setup(NULL), ph[1].p_flags = PF_W | PF_X;
	expect("both writable and executable");
	/* Data starting in the last page of the text. */
	setup(NULL), ph[1].p_paddr = ph[1].p_vaddr = 4 * MB + 0x800;
	expect("different permissions share a page");
	/* Read-only data there: still a different permission (no execute). */
	setup(NULL), ph[1].p_paddr = ph[1].p_vaddr = 4 * MB + 0x800, ph[1].p_flags = PF_R;
	expect("different permissions share a page");
	/* The other way round: text after the data, in the page where the bss
	 * ends. Data and bss end at 4 MiB + 0x6000; the text starts at + 0x6800. */
	setup(NULL), ph[0].p_paddr = ph[0].p_vaddr = 4 * MB + 0x6800;
	eh->e_entry = 4 * MB + 0x6810;
	assert_null(plan(&(struct image_plan){ 0 })); /* separate pages: fine */
	ph[1].p_memsz = 0x5800;                        /* now ends at + 0x6800 */
	expect("different permissions share a page");
	/* Two segments with the same permissions may share a page. */
	setup(NULL), ph[1].p_paddr = ph[1].p_vaddr = 4 * MB + 0x800, ph[1].p_flags = PF_R | PF_X;
	assert_null(plan(&(struct image_plan){ 0 }));
}

static void module_stays_or_moves(void **state)
{
	(void)state;
	struct image_plan p;
	assert_null(plan(&p));
	/* Clear of the load area: stays. */
	assert_int_equal(image_module_home(2 * MB, 0x2000, &p, ram, 3), 2 * MB);
	/* Overlapping it: moves to the first page after it. */
	assert_int_equal(image_module_home(3 * MB, 2 * MB, &p, ram, 3), 4 * MB + 0x6000);
	/* No RAM after it for the whole module: no home. */
	assert_int_equal(image_module_home(3 * MB, 300 * MB, &p, ram, 3), 0);
	/* A size that wraps around: no home. */
	assert_int_equal(image_module_home(3 * MB, UINT64_MAX, &p, ram, 3), 0);
}

static void random_corruption_never_crashes(void **state)
{
	(void)state;
	srand(1);
	for (int i = 0; i < 20000; i++) {
		setup(NULL);
		for (int k = 0; k < 4; k++)
			file[rand() % (int)(sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr))] = (unsigned char)rand();
		struct image_plan p;
		if (plan(&p) == NULL) {
			/* Whatever passes must really be in RAM and inside the file. */
			for (int s = 0; s < p.nseg; s++) {
				assert_true(p.seg[s].offset + p.seg[s].filesz <= sizeof file || p.seg[s].filesz == 0);
				assert_true(p.seg[s].paddr >= MB + 0x10000);
				assert_true(p.seg[s].paddr + p.seg[s].memsz <= 256 * MB);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(valid_image_is_planned, setup),
		cmocka_unit_test_setup(header_checks, setup),
		cmocka_unit_test_setup(segment_checks, setup),
		cmocka_unit_test_setup(write_xor_execute, setup),
		cmocka_unit_test_setup(module_stays_or_moves, setup),
		cmocka_unit_test(random_corruption_never_crashes),
	};
	return cmocka_run_group_tests_name("image", tests, NULL, NULL);
}
