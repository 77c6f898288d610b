/*
 * fuzz_cmdline: the kernel command-line parser on arbitrary text. Checks that
 * every option and argument it returns lies inside its own buffer and that
 * argv is NULL-terminated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/cmdline.h"

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
	} else if (!err || !*err) {
		abort();
	}
	free(line);
	return 0;
}
