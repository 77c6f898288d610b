/*
 * ready_poll.c: ready.h over poll(): the whole set passes to the kernel on
 * every wait.
 *
 * The set is one pollfd array in the order descriptors were added; removing
 * one moves the last into its place, as httpd.c packs its connections, so
 * the listener stays first and the array is the one httpd built before it
 * had this layer. An index by descriptor number finds an entry without a
 * search. Plain POSIX: it builds for the unikernel too.
 */
#define _POSIX_C_SOURCE 200809L

#include "ready.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

struct ready {
	struct pollfd *pfds; /* the set, packed: pfds[0..n) */
	size_t n;            /* entries in use */
	size_t cap;          /* entries allocated */
	size_t *slot;        /* descriptor -> its index in pfds (SIZE_MAX: never watched) */
	size_t fd_cap;       /* entries of slot: descriptors below this have one */
};

/* Makes room for `entries` entries and for descriptor fd's index. */
static int grow(struct ready *r, size_t entries, int fd)
{
	if (entries > r->cap) {
		size_t cap = r->cap ? r->cap : entries;
		struct pollfd *p;

		while (cap < entries)
			cap *= 2;
		p = realloc(r->pfds, cap * sizeof(*p));
		if (p == NULL)
			return -1;
		r->pfds = p;
		r->cap = cap;
	}
	if ((size_t)fd >= r->fd_cap) {
		size_t cap = r->fd_cap ? r->fd_cap : (size_t)fd + 1, i;
		size_t *s;

		while (cap <= (size_t)fd)
			cap *= 2;
		s = realloc(r->slot, cap * sizeof(*s));
		if (s == NULL)
			return -1;
		for (i = r->fd_cap; i < cap; i++)
			s[i] = SIZE_MAX;
		r->slot = s;
		r->fd_cap = cap;
	}
	return 0;
}

struct ready *ready_new(size_t max)
{
	struct ready *r = calloc(1, sizeof(*r));

	if (r == NULL || grow(r, max ? max : 1, (int)(max + READY_FD_SLACK) - 1) < 0) {
		ready_free(r);
		return NULL;
	}
	return r;
}

void ready_free(struct ready *r)
{
	if (r == NULL)
		return;
	free(r->pfds);
	free(r->slot);
	free(r);
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
	r->pfds[r->n].fd = fd;
	r->pfds[r->n].events = events;
	r->pfds[r->n].revents = 0;
	r->slot[fd] = r->n++;
	return 0;
}

/* Whether fd is in the set. */
static int watched(const struct ready *r, int fd)
{
	size_t i;

	if (fd < 0 || (size_t)fd >= r->fd_cap)
		return 0;
	i = r->slot[fd];
	return i < r->n && r->pfds[i].fd == fd;
}

int ready_want(struct ready *r, int fd, short events)
{
	if (!watched(r, fd)) { /* checked in every build: slot[] is indexed by it */
		errno = EBADF;
		return -1;
	}
	r->pfds[r->slot[fd]].events = events;
	return 0;
}

void ready_del(struct ready *r, int fd)
{
	size_t i;

	if (!watched(r, fd))
		return; /* nothing to remove; slot[] is not indexed by a stranger */
	i = r->slot[fd];
	r->pfds[i] = r->pfds[--r->n];
	r->slot[r->pfds[i].fd] = i;
}

int ready_wait(struct ready *r, int timeout_ms)
{
	return poll(r->pfds, (nfds_t)r->n, timeout_ms);
}

short ready_revents(const struct ready *r, int fd)
{
	return watched(r, fd) ? r->pfds[r->slot[fd]].revents : 0;
}
