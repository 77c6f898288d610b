/*
 * cmdline.c: the command-line parser (see cmdline.h). The line comes from
 * outside; every limit is checked and reported, nothing is truncated silently.
 */
#include <stddef.h>
#include <string.h>
#include "cmdline.h"

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

int cmdline_parse(struct cmdline *c, const char *line, const char *app_name, const char **error)
{
	size_t out = 0;
	int in_args = 0;
	c->nopts = 0;
	c->ndevices = 0;
	c->argc = 1;
	c->argv[0] = (char *)app_name;
	c->argv[1] = NULL;
	if (!line)
		line = "";
	for (const char *p = line;;) {
		while (is_space(*p))
			p++;
		if (!*p)
			break;
		char *word = &c->buf[out];
		int quoted = 0;
		for (; *p && (quoted || !is_space(*p)); p++) {
			char ch = *p;
			if (ch == '"') {
				quoted = !quoted;
				continue;
			}
			if (quoted && ch == '\\' && (p[1] == '"' || p[1] == '\\'))
				ch = *++p;
			if (out + 1 >= sizeof c->buf) {
				*error = "command line too long";
				return -1;
			}
			c->buf[out++] = ch;
		}
		if (quoted) {
			*error = "unterminated quote in command line";
			return -1;
		}
		if (out >= sizeof c->buf) {
			*error = "command line too long";
			return -1;
		}
		c->buf[out++] = 0;
		if (!in_args && strcmp(word, "--") == 0) {
			in_args = 1;
			continue;
		}
		if (strncmp(word, CMDLINE_DEVICE_PREFIX, sizeof CMDLINE_DEVICE_PREFIX - 1) == 0) {
			if (c->ndevices == CMDLINE_MAX_DEVICES) {
				*error = "too many virtio_mmio.device entries";
				return -1;
			}
			c->devices[c->ndevices++] = word + sizeof CMDLINE_DEVICE_PREFIX - 1;
			continue;
		}
		if (in_args) {
			if (c->argc == CMDLINE_MAX_ARGS + 1) {
				*error = "too many application arguments";
				return -1;
			}
			c->argv[c->argc++] = word;
			c->argv[c->argc] = NULL;
			continue;
		}
		if (c->nopts == CMDLINE_MAX_OPTS) {
			*error = "too many kernel options";
			return -1;
		}
		char *eq = strchr(word, '=');
		if (eq == word) {
			*error = "kernel option with an empty name";
			return -1;
		}
		if (eq)
			*eq = 0;
		c->opts[c->nopts++] = (struct cmdline_opt){ word, eq ? eq + 1 : "" };
	}
	return 0;
}

const char *cmdline_get(const struct cmdline *c, const char *key)
{
	for (int i = c->nopts - 1; i >= 0; i--)
		if (strcmp(c->opts[i].key, key) == 0)
			return c->opts[i].value;
	return NULL;
}
