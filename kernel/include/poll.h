/*
 * poll.h: readiness of several descriptors at once (kernel/poll.c).
 */
#ifndef _POLL_H
#define _POLL_H

typedef unsigned long nfds_t;

struct pollfd {
	int fd;        /* negative: ignored */
	short events;  /* what the caller waits for */
	short revents; /* what is ready */
};

#define POLLIN   0x001
#define POLLPRI  0x002
#define POLLOUT  0x004
#define POLLERR  0x008
#define POLLHUP  0x010
#define POLLNVAL 0x020
#define POLLRDNORM 0x040
#define POLLWRNORM 0x100
#define POLLRDHUP 0x2000

int poll(struct pollfd *fds, nfds_t nfds, int timeout_ms);

#endif
