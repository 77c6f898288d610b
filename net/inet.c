/*
 * inet.c: IPv4 address text conversion (arpa/inet.h), strict like glibc's:
 * four decimal parts of 0-255, nothing else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int inet_pton(int af, const char *src, void *dst)
{
	if (af != AF_INET) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	uint8_t out[4];
	for (int part = 0; part < 4; part++) {
		unsigned v = 0;
		int digits = 0;
		for (; *src >= '0' && *src <= '9'; src++, digits++) {
			v = v * 10 + (unsigned)(*src - '0');
			if (v > 255 || digits == 3)
				return 0;
		}
		if (digits == 0)
			return 0;
		out[part] = (uint8_t)v;
		if (part < 3 && *src++ != '.')
			return 0;
	}
	if (*src)
		return 0;
	memcpy(dst, out, 4);
	return 1;
}

const char *inet_ntop(int af, const void *src, char *dst, socklen_t size)
{
	const uint8_t *a = src;
	char buf[INET_ADDRSTRLEN];
	if (af != AF_INET) {
		errno = EAFNOSUPPORT;
		return NULL;
	}
	int n = snprintf(buf, sizeof buf, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
	if ((socklen_t)n >= size) {
		errno = ENOSPC;
		return NULL;
	}
	memcpy(dst, buf, (size_t)n + 1);
	return dst;
}

in_addr_t inet_addr(const char *cp)
{
	struct in_addr a;
	return inet_pton(AF_INET, cp, &a) == 1 ? a.s_addr : INADDR_NONE;
}

char *inet_ntoa(struct in_addr in)
{
	static char buf[INET_ADDRSTRLEN];
	return (char *)inet_ntop(AF_INET, &in, buf, sizeof buf);
}
