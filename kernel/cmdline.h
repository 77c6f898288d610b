/*
 * cmdline.h: parse the kernel command line (QEMU -append).
 *
 *   key=value flag "key=a value with spaces" -- app-arg1 "app arg 2"
 *
 * Words before `--` are kernel options (`key=value`, or a bare `flag` whose
 * value is ""); words after it are the application's argv[1..]. Double quotes
 * group a word and are removed; inside them \" and \\ escape.
 *
 * One name is the VMM's, not the user's: `virtio_mmio.device=...` entries
 * (kernel/mmio_windows.h), which QEMU's microvm appends to the end of the
 * line, after the app's arguments. Wherever they stand they are taken out
 * into devices[], neither options nor argv. Pure.
 */
#ifndef CMDLINE_H
#define CMDLINE_H

#define CMDLINE_BUF      4096
#define CMDLINE_MAX_OPTS 64
#define CMDLINE_MAX_ARGS 64
#define CMDLINE_MAX_DEVICES 16
#define CMDLINE_DEVICE_PREFIX "virtio_mmio.device="

struct cmdline_opt {
	const char *key;   /* points into buf */
	const char *value; /* "" for a bare flag */
};

struct cmdline {
	char buf[CMDLINE_BUF];                   /* the words, NUL-separated */
	int nopts;
	struct cmdline_opt opts[CMDLINE_MAX_OPTS];
	int argc;                                /* argv[0] is the caller's */
	char *argv[CMDLINE_MAX_ARGS + 2];        /* NULL-terminated */
	int ndevices;
	const char *devices[CMDLINE_MAX_DEVICES]; /* virtio_mmio.device values, in order */
};

/* Returns 0, or -1 with *error set to a one-line reason. argv[0] = app_name. */
int cmdline_parse(struct cmdline *c, const char *line, const char *app_name, const char **error);
/* The value of the last option named key, or NULL. */
const char *cmdline_get(const struct cmdline *c, const char *key);

#endif
