/*
 * sys/ioctl.h: the two ioctls sockets answer (Linux's numbers).
 */
#ifndef _SYS_IOCTL_H
#define _SYS_IOCTL_H

#define FIONREAD 0x541b /* bytes waiting to be read */
#define FIONBIO  0x5421 /* non-blocking on/off */

int ioctl(int fd, unsigned long request, ...);

#endif
