/*
 * ready.h: the one wait of httpd's loop: which descriptors are ready.
 *
 * httpd.c tells it each descriptor it starts and stops watching and, every
 * loop turn, what each one waits for; ready_wait() sleeps until one is ready
 * or the timeout falls, and ready_revents() says what each got. Two
 * implementations, one linked into each build (httpd.mk):
 *
 *   ready_poll.c   poll() over every descriptor each turn: plain POSIX, the
 *                  unikernel's build, the native server's and the Linux
 *                  guest's `httpd`
 *   ready_epoll.c  Linux's epoll, level-triggered: the kernel keeps the set,
 *                  a turn makes a system call only for a descriptor whose
 *                  interest changed, and a wait hands back only the ready
 *                  ones (`httpd-epoll`, the linux-epoll guest)
 *
 * Both report what poll() reports: the events asked for that are ready, and
 * POLLERR and POLLHUP whether asked for or not (epoll's bits have poll's
 * values on Linux). The rest of httpd is the same source in both builds.
 */
#ifndef HTTPD_READY_H
#define HTTPD_READY_H

#include <poll.h>
#include <stddef.h>

/* Descriptors a server holds besides those it watches (standard streams,
 * epoll's own), for the room ready_new() makes by descriptor number. */
#define READY_FD_SLACK 16

struct ready;

/* An empty set with room, allocated now, for `max` descriptors watched at
 * once, numbered below max + READY_FD_SLACK; it grows past either only if
 * it must (so a server's memory after a flood is what it was before).
 * NULL when out of memory or the kernel refused one. */
struct ready *ready_new(size_t max);
/* Frees the set (its descriptors stay open). */
void ready_free(struct ready *r);
/* Watches fd for `events` from the next wait on. 0, or -1 with errno. */
int ready_add(struct ready *r, int fd, short events);
/* What fd waits for from the next wait on (0: only errors and hang-ups).
 * Cheap when unchanged. 0, or -1 with errno (EBADF: fd is not watched). */
int ready_want(struct ready *r, int fd, short events);
/* Stops watching fd; call it before closing fd. */
void ready_del(struct ready *r, int fd);
/* Waits up to timeout_ms (-1: for ever) for a watched descriptor to be
 * ready: how many are, 0 on timeout, -1 with errno (EINTR: a signal). */
int ready_wait(struct ready *r, int timeout_ms);
/* What fd got in the last wait (0: nothing, or not watched). */
short ready_revents(const struct ready *r, int fd);

#endif
