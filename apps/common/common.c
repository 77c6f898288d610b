/*
 * common.c: what the servers share (see common.h): option numbers,
 * non-blocking descriptors, the listening socket. No #ifdef for either
 * target: glibc on Linux, newlib and the unikernel's socket layer there.
 */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

long parse_number(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	return v;
}

int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL, 0);

	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* What perror would print with "prog: what" as its argument. */
static void say_error(const char *prog, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
}

int open_listener(const char *prog, const char *addr, int port, int backlog, bool quiet)
{
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	int fd, one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "%s: not an IPv4 address: %s\n", prog, addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		say_error(prog, "socket");
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		say_error(prog, "SO_REUSEADDR"); /* not fatal: only restarts suffer */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "%s: bind %s:%d: %s\n", prog, addr, port, strerror(errno));
		close(fd);
		return -1;
	}
	if (listen(fd, backlog) < 0 || set_nonblocking(fd) < 0) {
		say_error(prog, "listen");
		close(fd);
		return -1;
	}
	if (!quiet) {
		if (getsockname(fd, (struct sockaddr *)&sa, &salen) == 0)
			port = ntohs(sa.sin_port);
		printf("%s: listening on %s:%d\n", prog, addr, port);
		fflush(stdout);
	}
	return fd;
}
