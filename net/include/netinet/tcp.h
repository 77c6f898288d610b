/*
 * netinet/tcp.h: TCP socket options (Linux's values).
 */
#ifndef _NETINET_TCP_H
#define _NETINET_TCP_H

#define TCP_NODELAY   1 /* Nagle off: send small segments at once */
#define TCP_KEEPIDLE  4
#define TCP_KEEPINTVL 5
#define TCP_KEEPCNT   6

#endif
