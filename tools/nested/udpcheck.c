/*
 * udpcheck.c: the UDP echo peer of the nested-KVM scenarios (L1 carries no
 * Python). Sends one datagram of each SIZE to HOST:PORT, waits for it to come
 * back, and checks that it came back unchanged and from HOST:PORT.
 *
 *   udpcheck HOST PORT SIZE...
 *
 * Exit 0 when every datagram was echoed intact; 1 with a line saying which
 * was not; 2 on bad arguments. Built static (tools/nested/nested.mk), so it
 * runs in L1 without libraries.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_SIZE 1472 /* one Ethernet frame's UDP payload */

int main(int argc, char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET }, from;
	struct timeval wait = { .tv_sec = 5 };
	unsigned char msg[MAX_SIZE], got[MAX_SIZE + 1];
	int s;

	if (argc < 4 || inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
		fprintf(stderr, "usage: udpcheck HOST PORT SIZE...\n");
		return 2;
	}
	to.sin_port = htons((unsigned short)atoi(argv[2]));
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) < 0) {
		perror("udpcheck: socket");
		return 1;
	}
	for (int a = 3; a < argc; a++) {
		int size = atoi(argv[a]);
		socklen_t len = sizeof(from);
		ssize_t n;

		if (size < 1 || size > MAX_SIZE) {
			fprintf(stderr, "udpcheck: size %s not in 1-%d\n", argv[a], MAX_SIZE);
			return 2;
		}
		for (int i = 0; i < size; i++)
			msg[i] = (unsigned char)(i * 7 + size);
		if (sendto(s, msg, (size_t)size, 0, (struct sockaddr *)&to, sizeof(to)) != size) {
			perror("udpcheck: sendto");
			return 1;
		}
		n = recvfrom(s, got, sizeof(got), 0, (struct sockaddr *)&from, &len);
		if (n < 0) {
			printf("udpcheck: no echo of the %d-byte datagram within 5 s\n", size);
			return 1;
		}
		if (n != size || memcmp(got, msg, (size_t)size) != 0 ||
		    from.sin_addr.s_addr != to.sin_addr.s_addr || from.sin_port != to.sin_port) {
			printf("udpcheck: the %d-byte datagram came back different (%zd bytes)\n", size, n);
			return 1;
		}
		printf("udpcheck: %d-byte datagram echoed\n", size);
	}
	return 0;
}
