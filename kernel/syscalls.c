/*
 * syscalls.c: newlib's system-call layer. newlib was built without its own
 * stubs, so these are the whole interface between the C library and the
 * kernel: I/O through the descriptor table, the heap, time, and exit. Errors
 * set errno and return -1, as newlib expects.
 *
 * This newlib configuration calls the plain names (write, sbrk, ...); the
 * underscore names are the same functions, for code that expects those.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>
#include "kernel.h"
#include "stats.h"

#define KERNEL_PID 1

static int fail(int err)
{
	errno = err;
	return -1;
}

/* ---- the console as a file ----------------------------------------------- */

static long console_file_read(void *obj, void *buf, size_t len)
{
	(void)obj;
	int n;
	/* The UART raises no interrupt here: look every millisecond, parked between. */
	while ((n = console_read(buf, len)) == 0 && len)
		sleep_until(clock_ns() + 1000000);
	return n;
}

static long console_file_write(void *obj, const void *buf, size_t len)
{
	(void)obj;
	console_write(buf, len);
	return (long)len;
}

static int console_file_close(void *obj)
{
	(void)obj;
	return 0;
}

static int console_file_fstat(void *obj, struct stat *st)
{
	(void)obj;
	st->st_mode = S_IFCHR | 0620;
	st->st_blksize = 0;
	return 0;
}

/* The console can always take output; input is ready when the UART holds a byte
 * (looked at without consuming it). */
static short console_file_poll(void *obj, short events)
{
	(void)obj;
	short r = POLLOUT;
	if ((events & POLLIN) && console_input_ready())
		r |= POLLIN;
	return r;
}

static const struct file_ops console_ops = {
	.read = console_file_read,
	.write = console_file_write,
	.close = console_file_close,
	.fstat = console_file_fstat,
	.poll = console_file_poll,
	.isatty = 1,
};

void console_files_init(void)
{
	for (int fd = 0; fd < 3; fd++)
		fd_install(&console_ops, NULL);
}

/* ---- I/O ------------------------------------------------------------------ */

int _write(int fd, const void *buf, size_t len)
{
	const struct file_ops *ops;
	void *obj;
	if (fd_lookup(fd, &ops, &obj) < 0)
		return fail(EBADF);
	if (!ops->write)
		return fail(EINVAL);
	long n = ops->write(obj, buf, len);
	return n < 0 ? fail((int)-n) : (int)n;
}

int _read(int fd, void *buf, size_t len)
{
	const struct file_ops *ops;
	void *obj;
	if (fd_lookup(fd, &ops, &obj) < 0)
		return fail(EBADF);
	if (!ops->read)
		return fail(EINVAL);
	long n = ops->read(obj, buf, len);
	return n < 0 ? fail((int)-n) : (int)n;
}

int _close(int fd)
{
	int r = fd_close(fd);
	return r < 0 ? fail(-r) : 0;
}

int _fstat(int fd, struct stat *st)
{
	const struct file_ops *ops;
	void *obj;
	if (fd_lookup(fd, &ops, &obj) < 0)
		return fail(EBADF);
	if (!st)
		return fail(EFAULT);
	*st = (struct stat){ 0 };
	int r = ops->fstat ? ops->fstat(obj, st) : 0;
	return r < 0 ? fail(-r) : 0;
}

int _isatty(int fd)
{
	const struct file_ops *ops;
	void *obj;
	if (fd_lookup(fd, &ops, &obj) < 0)
		return fail(EBADF), 0;
	if (!ops->isatty)
		return fail(ENOTTY), 0;
	return 1;
}

off_t _lseek(int fd, off_t off, int whence)
{
	const struct file_ops *ops;
	void *obj;
	(void)off, (void)whence;
	if (fd_lookup(fd, &ops, &obj) < 0)
		return fail(EBADF);
	return fail(ESPIPE); /* consoles and sockets do not seek */
}

/* There is no file system. */
int _open(const char *path, int flags, ...)
{
	(void)path, (void)flags;
	return fail(ENOENT);
}
int _unlink(const char *path) { (void)path; return fail(ENOENT); }
int _link(const char *old, const char *new) { (void)old, (void)new; return fail(ENOENT); }
int _stat(const char *path, struct stat *st) { (void)path, (void)st; return fail(ENOENT); }

/* There is one task. */
int _fork(void) { return fail(ENOSYS); }
int _execve(const char *p, char *const a[], char *const e[]) { (void)p, (void)a, (void)e; return fail(ENOSYS); }
int _wait(int *status) { (void)status; return fail(ECHILD); }
int _getpid(void) { return KERNEL_PID; }

__attribute__((noreturn)) static void exit_now(int status); /* see "exit" */

int _kill(int pid, int sig)
{
	if (pid != KERNEL_PID && pid != 0)
		return fail(ESRCH);
	if (sig == 0)
		return 0;
	/* Exit statuses have 7 bits here: a fatal signal ends like a panic. */
	kprintf("kernel: killed by signal %d\n", sig);
	exit_now(KERNEL_PANIC_STATUS);
}

/* ---- memory and time ------------------------------------------------------ */

void *_sbrk(ptrdiff_t incr)
{
	return kernel_sbrk(incr);
}

int _gettimeofday(struct timeval *tv, void *tz)
{
	(void)tz;
	if (tv) {
		uint64_t ns = clock_realtime_ns();
		tv->tv_sec = (time_t)(ns / NSEC_PER_SEC);
		tv->tv_usec = (suseconds_t)(ns % NSEC_PER_SEC / 1000);
	}
	return 0;
}

clock_t _times(struct tms *t)
{
	/* One task, no separate system time: everything since boot is its own. */
	clock_t ticks = (clock_t)(clock_ns() / (NSEC_PER_SEC / CLOCKS_PER_SEC));
	if (t)
		*t = (struct tms){ .tms_utime = ticks };
	return ticks;
}

/* ---- exit ----------------------------------------------------------------- */

/* An exit without the network's drain: abort() may come from inside lwIP. */
__attribute__((noreturn)) static void exit_now(int status)
{
	if (!kopt_flag(KOPT_QUIET))
		stats_print_all();
	/* isa-debug-exit carries 7 bits: QEMU's status is (status << 1) | 1. */
	kernel_exit(status & 0x7f);
}

void _exit(int status)
{
	executor_drain(); /* the frames handed to the device leave first */
	exit_now(status);
}

/* ---- the names newlib and applications call -------------------------------- */
#define ALIAS(name) __attribute__((alias(#name)))
int write(int fd, const void *buf, size_t len) ALIAS(_write);
int read(int fd, void *buf, size_t len) ALIAS(_read);
int close(int fd) ALIAS(_close);
int fstat(int fd, struct stat *st) ALIAS(_fstat);
int isatty(int fd) ALIAS(_isatty);
off_t lseek(int fd, off_t off, int whence) ALIAS(_lseek);
int open(const char *path, int flags, ...) ALIAS(_open);
int unlink(const char *path) ALIAS(_unlink);
int link(const char *old, const char *new) ALIAS(_link);
int stat(const char *path, struct stat *st) ALIAS(_stat);
int fork(void) ALIAS(_fork);
int execve(const char *p, char *const a[], char *const e[]) ALIAS(_execve);
int wait(int *status) ALIAS(_wait);
int getpid(void) ALIAS(_getpid);
int kill(int pid, int sig) ALIAS(_kill);
void *sbrk(ptrdiff_t incr) ALIAS(_sbrk);
int gettimeofday(struct timeval *tv, void *tz) ALIAS(_gettimeofday);
clock_t times(struct tms *t) ALIAS(_times);
