/*
 * poll.c: descriptor readiness and the generic descriptor calls that are not
 * newlib's: poll(), fcntl(), ioctl(), readv(), writev(). Each asks the file's
 * own operation; poll() waits through the executor, so the network is polled
 * (when due) and timers fire while it waits, and a signal whose handler runs
 * meanwhile ends it with EINTR.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>
#include "handoff.h"
#include "kernel.h"

/* ---- poll -------------------------------------------------------------------- */

struct poll_set {
	struct pollfd *fds; /* the caller's array */
	nfds_t n;
	int ready;          /* entries with revents != 0 after the last scan */
};

static bool scan(void *arg)
{
	struct poll_set *ps = arg;
	ps->ready = 0;
	for (nfds_t i = 0; i < ps->n; i++) {
		struct pollfd *p = &ps->fds[i];
		const struct file_ops *ops;
		void *obj;
		p->revents = 0;
		if (p->fd < 0)
			continue;
		if (fd_lookup(p->fd, &ops, &obj) < 0)
			p->revents = POLLNVAL;
		else if (ops->poll)
			/* Errors and hang-ups are reported whether asked for or not. */
			p->revents = (short)(ops->poll(obj, p->events) & (p->events | POLLERR | POLLHUP | POLLNVAL));
		else
			p->revents = (short)(p->events & (POLLIN | POLLOUT));
		if (p->revents)
			ps->ready++;
	}
	return ps->ready > 0;
}

/* poll() after its checks; on the network core, run there (handoff.h), so
 * that the scan reads the sockets on the CPU that owns them and the wait
 * is the network's own. */
static int poll_wait(struct pollfd *fds, nfds_t nfds, int timeout_ms, uint64_t deadline)
{
	struct poll_set ps = { fds, nfds, 0 };
	if (timeout_ms == 0) {
		executor_poll(); /* a zero timeout still lets pending work land */
		scan(&ps);
		return ps.ready;
	}
	int r = handoff_block_on(scan, &ps, deadline, true);
	if (r == -EINTR) { /* a signal's handler ran (the console's Ctrl-C) */
		errno = EINTR;
		return -1;
	}
	if (r < 0)
		scan(&ps); /* timed out: report the final state (normally 0) */
	return ps.ready;
}

static long poll_call(const long *a)
{
	return poll_wait((struct pollfd *)a[0], (nfds_t)a[1], (int)a[2], (uint64_t)a[3]);
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	if (nfds > FD_MAX || (nfds && !fds)) {
		errno = EINVAL;
		return -1;
	}
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : clock_ns() + (uint64_t)timeout_ms * 1000000;
	const long args[] = { (long)fds, (long)nfds, timeout_ms, (long)deadline };
	int r = (int)handoff_call(poll_call, args);
	if (r > 0)
		trace_mark(TP_POLL);
	return r;
}

/* ---- fcntl, ioctl ------------------------------------------------------------ */

int fcntl(int fd, int cmd, ...)
{
	const struct file_ops *ops;
	void *obj;
	va_list ap;
	va_start(ap, cmd);
	int arg = va_arg(ap, int);
	va_end(ap);
	if (fd_lookup(fd, &ops, &obj) < 0) {
		errno = EBADF;
		return -1;
	}
	switch (cmd) {
	case F_GETFL:
		return O_RDWR | (ops->get_flags ? ops->get_flags(obj) : 0);
	case F_SETFL: {
		int r = ops->set_flags ? ops->set_flags(obj, arg & O_NONBLOCK) : 0;
		if (r < 0) {
			errno = -r;
			return -1;
		}
		return 0;
	}
	case F_GETFD:
	case F_SETFD:
		return 0; /* nothing is ever exec'd: close-on-exec means nothing */
	default:
		errno = EINVAL;
		return -1;
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	const struct file_ops *ops;
	void *obj;
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd_lookup(fd, &ops, &obj) < 0) {
		errno = EBADF;
		return -1;
	}
	int r = ops->ioctl ? ops->ioctl(obj, req, arg) : -ENOTTY;
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

/* ---- scatter/gather -------------------------------------------------------- */

static int check_iov(const struct iovec *iov, int n)
{
	size_t total = 0;
	if (n < 0 || n > IOV_MAX || (n && !iov))
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len > (size_t)INTPTR_MAX - total) /* the sum must fit ssize_t */
			return -EINVAL;
		total += iov[i].iov_len;
	}
	return 0;
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	const struct file_ops *ops;
	void *obj;
	int r = check_iov(iov, n);
	if (r == 0 && fd_lookup(fd, &ops, &obj) < 0)
		r = -EBADF;
	if (r < 0) {
		errno = -r;
		return -1;
	}
	if (ops->writev) {
		long w = ops->writev(obj, iov, n);
		if (w < 0) {
			errno = (int)-w;
			return -1;
		}
		return w;
	}
	ssize_t total = 0;
	for (int i = 0; i < n; i++) {
		long w = ops->write ? ops->write(obj, iov[i].iov_base, iov[i].iov_len) : -EINVAL;
		if (w < 0) {
			if (total)
				return total;
			errno = (int)-w;
			return -1;
		}
		total += w;
		if ((size_t)w < iov[i].iov_len)
			break;
	}
	return total;
}

ssize_t readv(int fd, const struct iovec *iov, int n)
{
	int r = check_iov(iov, n);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	ssize_t total = 0;
	for (int i = 0; i < n; i++) {
		ssize_t got = read(fd, iov[i].iov_base, iov[i].iov_len);
		if (got < 0)
			return total ? total : -1;
		total += got;
		if ((size_t)got < iov[i].iov_len)
			break;
	}
	return total;
}
