/*
 * switches.h: the design's build-time switches, all in one place. Each is 1
 * (the mechanism on) unless the build defines it 0, which gives the naive
 * counterpart a straightforward port would have; alternating builds measure
 * what each is worth (make VARIANT=..., issue 6).
 */
#ifndef SWITCHES_H
#define SWITCHES_H

/* writev copies every iovec into the socket, then one output: head and body of
 * a response leave in one segment. Naive: one write, and one output, per iovec. */
#ifndef SW_WRITEV_ONE_SEND
#define SW_WRITEV_ONE_SEND 1
#endif

/* Poll the NIC and the stack only when a frame waits, egress is pending or a
 * stack timer has expired. Naive: poll on every turn of a wait loop. */
#ifndef SW_POLL_WHEN_DUE
#define SW_POLL_WHEN_DUE 1
#endif

/* The egress pass follows a list of sockets that may have something to send.
 * Naive: visit every socket, listeners included. */
#ifndef SW_EGRESS_LIST
#define SW_EGRESS_LIST 1
#endif

/* A listed socket that cannot send before some later event (the peer's window
 * or an ACK, which its sent callback reports) leaves the list instead of being
 * visited on every pass. Naive: it stays listed and is looked at each pass,
 * which also keeps the network "due" and the wait loop polling. */
#ifndef SW_EGRESS_DEADLINES
#define SW_EGRESS_DEADLINES 1
#endif

/* Reading a socket's state or parking on it does not put it on the egress
 * list. Naive: every access marks the socket. */
#ifndef SW_READ_NO_MARK
#define SW_READ_NO_MARK 1
#endif

/* A listener answers poll()/accept() readiness from a flag its accept callback
 * raises. Naive: walk the listener's backlog. */
#ifndef SW_LISTENER_FLAG
#define SW_LISTENER_FLAG 1
#endif

/* A waiting call polls the device with its interrupt off for a bounded spin,
 * then re-arms it, re-checks the ring and parks. Naive: park at once. */
#ifndef SW_SPIN_THEN_PARK
#define SW_SPIN_THEN_PARK 1
#endif
#define SPIN_NS_DEFAULT 250000 /* 250 us; kernel option spin_us= overrides */

/* The LAPIC one-shot timer is not rewritten with the deadline it holds.
 * Naive: reprogram it at every park. */
#ifndef SW_TIMER_NO_RELOAD
#define SW_TIMER_NO_RELOAD 1
#endif

#endif
