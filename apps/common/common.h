/*
 * common.h: what the servers share (httpd, iperf, and bench/nginx's
 * nginx-run): a whole number from an option, a non-blocking descriptor and
 * a listening TCP socket. Plain POSIX, built into the unikernel images and
 * the Linux builds alike (common.c).
 */
#ifndef APPS_COMMON_H
#define APPS_COMMON_H

#include <stdbool.h>

/* A whole decimal number in [lo, hi], or -1 (also for anything else). */
long parse_number(const char *s, long lo, long hi);

/* Sets O_NONBLOCK on fd, keeping its other flags: 0, or -1 with errno. */
int set_nonblocking(int fd);

/*
 * A non-blocking TCP socket listening on IPv4 address addr (dotted quad),
 * port (0: one the system picks), with SO_REUSEADDR and the given backlog;
 * or -1 after a line on stderr that begins "prog: ". Unless quiet, prints
 * "prog: listening on ADDR:PORT" on stdout (the port bound, when 0 was
 * asked for) and flushes it.
 */
int open_listener(const char *prog, const char *addr, int port, int backlog, bool quiet);

#endif
