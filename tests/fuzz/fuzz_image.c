/*
 * fuzz_image: the loader's validation of the application image on arbitrary
 * files. Whatever it accepts must really be loadable: every segment's bytes
 * inside the file, every segment inside usable RAM below 4 GiB and clear of the
 * avoided ranges, the entry inside an executable segment.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "boot/elf64.h"
#include "loader/image.h"

#define MB (1ULL << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mem_range ram[] = {
		{ 0, 0x9fc00, MEM_USABLE, 0 },
		{ MB, 255 * MB, MEM_USABLE, 0 },
	};
	static const struct addr_range avoid[] = { { 0, MB }, { MB, MB + 0x10000 } };
	/* Aligned, exactly-sized copy: the loader reads the headers in place. */
	uint64_t *copy = malloc((size + 7) / 8 * 8 + 8);
	memcpy(copy, data, size);
	struct image_plan plan;
	if (image_plan(copy, size, ram, 2, avoid, 2, &plan) == NULL) {
		int entry_ok = 0;
		for (int i = 0; i < plan.nseg; i++) {
			const struct image_segment *s = &plan.seg[i];
			if (s->filesz > s->memsz || (s->filesz && s->offset + s->filesz > size))
				abort();
			if (s->paddr < MB + 0x10000 || s->paddr + s->memsz > 256 * MB)
				abort();
			if ((s->flags & PF_X) && plan.entry >= s->paddr && plan.entry < s->paddr + s->memsz)
				entry_ok = 1;
		}
		if (!entry_ok)
			abort();
		uint64_t home = image_module_home(2 * MB, size, &plan, ram, 2);
		if (home && home != 2 * MB && home < plan.end)
			abort();
	}
	free(copy);
	return 0;
}
