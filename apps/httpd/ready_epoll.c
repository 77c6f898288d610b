/*
 * ready_epoll.c: ready.h over Linux's epoll (the linux-epoll guest's httpd).
 *
 * The kernel keeps the set. Level-triggered, as poll() is: a descriptor
 * that stays readable is reported on every wait, so httpd's loop needs no
 * change of logic. ready_want() calls epoll_ctl only when a descriptor's
 * interest changes (a connection that starts or stops waiting to write);
 * a keep-alive connection that reads a request and answers it at once
 * keeps POLLIN throughout and costs no call. ready_del() makes none either:
 * closing a descriptor takes it out of every epoll set (httpd never
 * duplicates one). A wait hands back only the ready descriptors; what each
 * got is kept by descriptor number, stamped with the wait it came from, so
 * nothing is cleared between waits.
 */
#define _GNU_SOURCE

#include "ready.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

/* httpd reads poll()'s bits; epoll's are the same on Linux. */
_Static_assert(EPOLLIN == POLLIN && EPOLLOUT == POLLOUT && EPOLLERR == POLLERR &&
	       EPOLLHUP == POLLHUP && EPOLLPRI == POLLPRI, "epoll and poll bits differ");

/* What the set knows of one descriptor. */
struct ready_fd {
	bool watched;        /* in the set */
	short want;          /* the events the kernel was last told */
	short got;           /* what wait number `turn` reported */
	unsigned long turn;  /* the wait `got` belongs to */
};

struct ready {
	int epfd;                   /* the epoll instance */
	struct ready_fd *fds;       /* by descriptor number */
	size_t fd_cap;              /* entries of fds */
	size_t n;                   /* descriptors watched */
	struct epoll_event *events; /* the last wait's answer */
	size_t ev_cap;              /* entries of events: at least n, so one
	                               wait can report every descriptor */
	unsigned long turn;         /* waits so far: the current one's number */
};

/* Makes room for `entries` descriptors watched at once (one wait can report
 * them all) and for descriptor fd's entry. */
static int grow(struct ready *r, size_t entries, int fd)
{
	if ((size_t)fd >= r->fd_cap) {
		size_t cap = r->fd_cap ? r->fd_cap : (size_t)fd + 1, i;
		struct ready_fd *f;

		while (cap <= (size_t)fd)
			cap *= 2;
		f = realloc(r->fds, cap * sizeof(*f));
		if (f == NULL)
			return -1;
		for (i = r->fd_cap; i < cap; i++)
			f[i] = (struct ready_fd){ 0 };
		r->fds = f;
		r->fd_cap = cap;
	}
	if (entries > r->ev_cap) {
		size_t cap = r->ev_cap ? r->ev_cap : entries;
		struct epoll_event *e;

		while (cap < entries)
			cap *= 2;
		e = realloc(r->events, cap * sizeof(*e));
		if (e == NULL)
			return -1;
		r->events = e;
		r->ev_cap = cap;
	}
	return 0;
}

struct ready *ready_new(size_t max)
{
	struct ready *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0 || grow(r, max ? max : 1, (int)(max + READY_FD_SLACK) - 1) < 0) {
		ready_free(r);
		return NULL;
	}
	return r;
}

void ready_free(struct ready *r)
{
	if (r == NULL)
		return;
	if (r->epfd >= 0)
		close(r->epfd);
	free(r->fds);
	free(r->events);
	free(r);
}

/* Tells the kernel what fd waits for. */
static int control(struct ready *r, int op, int fd, short events)
{
	struct epoll_event ev = { .events = (unsigned short)events, .data.fd = fd };

	return epoll_ctl(r->epfd, op, fd, &ev);
}

int ready_add(struct ready *r, int fd, short events)
{
	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (grow(r, r->n + 1, fd) < 0) {
		errno = ENOMEM;
		return -1;
	}
	if (control(r, EPOLL_CTL_ADD, fd, events) < 0)
		return -1;
	r->fds[fd] = (struct ready_fd){ .watched = true, .want = events };
	r->n++;
	return 0;
}

int ready_want(struct ready *r, int fd, short events)
{
	struct ready_fd *f;

	if (fd < 0 || (size_t)fd >= r->fd_cap || !r->fds[fd].watched) { /* in every build */
		errno = EBADF;
		return -1;
	}
	f = &r->fds[fd];
	if (f->want == events)
		return 0;
	if (control(r, EPOLL_CTL_MOD, fd, events) < 0)
		return -1;
	f->want = events;
	return 0;
}

void ready_del(struct ready *r, int fd)
{
	if (fd < 0 || (size_t)fd >= r->fd_cap || !r->fds[fd].watched)
		return; /* nothing to remove; fds[] is not indexed by a stranger */
	r->fds[fd].watched = false; /* the close that follows leaves the kernel's set */
	r->n--;
}

int ready_wait(struct ready *r, int timeout_ms)
{
	int i, n;

	r->turn++;
	n = epoll_wait(r->epfd, r->events, (int)r->ev_cap, timeout_ms);
	for (i = 0; i < n; i++) {
		struct ready_fd *f = &r->fds[r->events[i].data.fd];

		f->got = (short)r->events[i].events;
		f->turn = r->turn;
	}
	return n;
}

short ready_revents(const struct ready *r, int fd)
{
	const struct ready_fd *f;

	if (fd < 0 || (size_t)fd >= r->fd_cap)
		return 0;
	f = &r->fds[fd];
	return f->watched && f->turn == r->turn ? f->got : 0;
}
