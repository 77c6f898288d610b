/*
 * fuzz_cmdline: the kernel command-line parser on arbitrary text. Checks that
 * every option and argument it returns lies inside its own buffer and that
 * argv is NULL-terminated; then the virtio_mmio.device entries it took out
 * go through the window parser (kernel/mmio_windows.c), and every window it
 * keeps must lie within the bounds it promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/cmdline.h"
#include "kernel/mmio_windows.h"

static int inside(const struct cmdline *c, const char *p)
{
	return p >= c->buf && p < c->buf + sizeof c->buf && memchr(p, 0, (size_t)(c->buf + sizeof c->buf - p));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cmdline c;
	char *line = malloc(size + 1);
	memcpy(line, data, size);
	line[size] = 0;
	const char *err;
	if (cmdline_parse(&c, line, "app", &err) == 0) {
		for (int i = 0; i < c.nopts; i++)
			if (!inside(&c, c.opts[i].key) || (c.opts[i].value[0] && !inside(&c, c.opts[i].value)))
				abort();
		if (c.argc < 1 || c.argc > CMDLINE_MAX_ARGS + 1 || c.argv[c.argc] != NULL)
			abort();
		for (int i = 1; i < c.argc; i++)
			if (!inside(&c, c.argv[i]))
				abort();
		if (c.nopts)
			cmdline_get(&c, c.opts[0].key);
		if (c.ndevices < 0 || c.ndevices > CMDLINE_MAX_DEVICES)
			abort();
		for (int i = 0; i < c.ndevices; i++)
			if (c.devices[i][0] && !inside(&c, c.devices[i]))
				abort();
		char why[256];
		if (mmio_windows_set(c.devices, c.ndevices, why, sizeof why) == 0) {
			for (int i = 0; i < mmio_window_count(); i++) {
				const struct mmio_window *w = mmio_window_get(i);
				if (w->size < MMIO_WINDOW_MIN || w->size > MMIO_WINDOW_MAX || w->base < MMIO_WINDOW_LOWEST ||
				    w->base + w->size > MMIO_WINDOW_LIMIT || w->irq == 0 || w->irq > MMIO_IRQ_MAX)
					abort();
			}
		} else if (!why[0]) {
			abort();
		}
	} else if (!err || !*err) {
		abort();
	}
	free(line);
	return 0;
}
