/*
 * rename.h: forced into every file of the socket unit test (gcc -include), the
 * layer's POSIX entry points get a uk_ prefix on the host.
 *
 * Why: net/socket.c, kernel/poll.c and net/inet.c define socket(), read(),
 * poll(), send() ... exactly as the guest's libc would. Linked into a host
 * program those definitions would interpose glibc's and ASan's interceptors of
 * the same names, so glibc, cmocka or the sanitizer runtime could end up in our
 * code (or ours in theirs). Renaming at the preprocessor level keeps the
 * guest sources untouched and leaves no shared symbol. Every file of the test
 * (lwIP included) sees the same macros, so struct members that happen to share
 * a name (file_ops.read, tcp_pcb.poll) are renamed consistently too.
 */
#ifndef TEST_SOCKET_RENAME_H
#define TEST_SOCKET_RENAME_H

/* net/socket.c */
#define socket      uk_socket
#define bind        uk_bind
#define listen      uk_listen
#define accept      uk_accept
#define accept4     uk_accept4
#define connect     uk_connect
#define recv        uk_recv
#define recvfrom    uk_recvfrom
#define send        uk_send
#define sendto      uk_sendto
#define shutdown    uk_shutdown
#define getsockname uk_getsockname
#define getpeername uk_getpeername
#define setsockopt  uk_setsockopt
#define getsockopt  uk_getsockopt
/* kernel/poll.c, and read/write/close that the guest's syscalls.c provides
 * (here: tests/unit/socket/host.c) */
#define poll        uk_poll
#define fcntl       uk_fcntl
#define ioctl       uk_ioctl
#define readv       uk_readv
#define writev      uk_writev
#define read        uk_read
#define write       uk_write
#define close       uk_close
/* net/inet.c */
#define inet_pton   uk_inet_pton
#define inet_ntop   uk_inet_ntop
#define inet_addr   uk_inet_addr
#define inet_ntoa   uk_inet_ntoa

#endif
