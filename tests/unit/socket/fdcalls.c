/*
 * fdcalls.c: read, write and close over the kernel's descriptor table, as the
 * guest's syscalls.c does it, for the host harnesses that run the socket layer
 * (the socket unit tests and the netrx fuzzer). rename.h makes them uk_*.
 */
#include <errno.h>
#include <unistd.h>
#include "kernel/kernel.h"


static ssize_t fail_errno(long r)
{
	errno = (int)-r;
	return -1;
}

ssize_t read(int fd, void *buf, size_t len)
{
	const struct file_ops *ops;
	void *obj;
	if (fd_lookup(fd, &ops, &obj) < 0)
		return fail_errno(-EBADF);
	long n = ops->read ? ops->read(obj, buf, len) : -EINVAL;
	return n < 0 ? fail_errno(n) : n;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	const struct file_ops *ops;
	void *obj;
	if (fd_lookup(fd, &ops, &obj) < 0)
		return fail_errno(-EBADF);
	long n = ops->write ? ops->write(obj, buf, len) : -EINVAL;
	return n < 0 ? fail_errno(n) : n;
}

int close(int fd)
{
	int r = fd_close(fd);
	return r < 0 ? (int)fail_errno(r) : 0;
}
