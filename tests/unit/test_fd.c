/*
 * test_fd.c: the descriptor table's close (kernel/fd.c, what close() runs).
 * The descriptor leaves the table before the object's close runs, so that
 * close, which for a socket polls the network and may run a signal
 * handler, never finds its own descriptor still naming the object: a
 * handler's close of the same descriptor gets EBADF and closes nothing
 * twice, and a descriptor installed meanwhile (the poll accepting a
 * connection) may take the number and keeps it after the close returns.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel/kernel.h"
#include "kernel/percpu.h"

/* The one CPU, the boot CPU: the table's owner (fd.c's checks). */
struct percpu percpu_host = { .self = &percpu_host };

/* One object per test: what its close saw and what it does inside. */
struct fake_file {
	int fd;                 /* its descriptor */
	int closes;             /* times its close ran */
	int lookup_in_close;    /* fd_lookup(fd) from inside the close */
	int open_in_close;      /* fd_count_open() from inside the close */
	int close_again;        /* inside the close: 1 calls fd_close(fd) again */
	int again_result;       /* ... and what that returned */
	int install_in_close;   /* inside the close: 1 installs another file */
	int installed_fd;       /* ... and the descriptor it got */
	int result;             /* what the close returns */
};

static int fake_close(void *obj);
static const struct file_ops fake_ops = { .close = fake_close };
static const struct file_ops other_ops = { .close = NULL };
static int other_object;

static int fake_close(void *obj)
{
	struct fake_file *f = obj;
	const struct file_ops *ops;
	void *found;
	f->closes++;
	f->lookup_in_close = fd_lookup(f->fd, &ops, &found);
	f->open_in_close = fd_count_open();
	if (f->close_again && f->closes == 1) /* once: a table that still named it would recurse */
		f->again_result = fd_close(f->fd);
	if (f->install_in_close)
		f->installed_fd = fd_install(&other_ops, &other_object);
	return f->result;
}

static int open_fake(struct fake_file *f)
{
	f->fd = fd_install(&fake_ops, f);
	assert_true(f->fd >= 0);
	return f->fd;
}

/* Inside its close, the object's descriptor is already free and no longer
 * counted. */
static void close_finds_its_descriptor_gone(void **state)
{
	(void)state;
	struct fake_file f = { 0 };
	int open_before = fd_count_open();
	open_fake(&f);
	assert_int_equal(fd_close(f.fd), 0);
	assert_int_equal(f.closes, 1);
	assert_int_equal(f.lookup_in_close, -EBADF);
	assert_int_equal(f.open_in_close, open_before);
	assert_int_equal(fd_count_open(), open_before);
}

/* A signal handler run from inside the close closes the same descriptor:
 * EBADF, and the object is closed once. */
static void close_again_from_inside_is_ebadf(void **state)
{
	(void)state;
	struct fake_file f = { .close_again = 1 };
	open_fake(&f);
	assert_int_equal(fd_close(f.fd), 0);
	assert_int_equal(f.closes, 1);
	assert_int_equal(f.again_result, -EBADF);
}

/* The close's poll installs a descriptor, which takes the lowest free
 * number, the one being closed; it is still open, naming its own object,
 * when the close returns. */
static void descriptor_installed_meanwhile_survives(void **state)
{
	(void)state;
	struct fake_file f = { .install_in_close = 1 };
	open_fake(&f);
	assert_int_equal(fd_close(f.fd), 0);
	assert_int_equal(f.installed_fd, f.fd);
	const struct file_ops *ops;
	void *obj;
	assert_int_equal(fd_lookup(f.installed_fd, &ops, &obj), 0);
	assert_ptr_equal(ops, &other_ops);
	assert_ptr_equal(obj, &other_object);
	assert_int_equal(fd_close(f.installed_fd), 0); /* no close op: nothing to run */
	assert_int_equal(fd_lookup(f.installed_fd, &ops, &obj), -EBADF);
}

/* A close that fails still frees the descriptor (as on Linux) and says why. */
static void failed_close_frees_the_descriptor(void **state)
{
	(void)state;
	struct fake_file f = { .result = -EIO };
	const struct file_ops *ops;
	void *obj;
	open_fake(&f);
	assert_int_equal(fd_close(f.fd), -EIO);
	assert_int_equal(fd_lookup(f.fd, &ops, &obj), -EBADF);
	assert_int_equal(fd_close(f.fd), -EBADF);
	assert_int_equal(f.closes, 1);
}

static void bad_descriptors(void **state)
{
	(void)state;
	int open_before = fd_count_open();
	assert_int_equal(fd_close(-1), -EBADF);
	assert_int_equal(fd_close(FD_MAX), -EBADF);
	assert_int_equal(fd_close(FD_MAX - 1), -EBADF); /* free */
	assert_int_equal(fd_count_open(), open_before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(close_finds_its_descriptor_gone),
		cmocka_unit_test(close_again_from_inside_is_ebadf),
		cmocka_unit_test(descriptor_installed_meanwhile_survives),
		cmocka_unit_test(failed_close_frees_the_descriptor),
		cmocka_unit_test(bad_descriptors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
