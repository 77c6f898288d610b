/*
 * switches.h: the design's build-time switches, all in one place, in the order
 * of the reference write-up's commits. Each is 1 (the mechanism on) unless the
 * build defines it 0, which gives the naive counterpart a straightforward port
 * has; alternating builds measure what each is worth (make VARIANT=...,
 * mk/variants.mk). The naive side of every switch does the naive work for
 * real, and the counters count work done, never work skipped.
 */
#ifndef SWITCHES_H
#define SWITCHES_H

/* 1. A wait with a timeout parks until the earliest of its own deadline, the
 * network's next timer and any kernel timer. Naive, the write-up's two bugs:
 * the deadline is handed to the park as wall-clock time where a timeout from
 * now is expected (so it lies decades ahead), and the one-shot gets this
 * waiter's deadline even when an earlier one is queued (lwIP's, a kernel
 * timer's). A timed wait with no traffic then lasts until unrelated I/O. */
#ifndef SW_TIMED_WAIT
#define SW_TIMED_WAIT 1
#endif

/* 2. writev copies every iovec into the socket, then one output (the egress
 * pass of the app's next call into the network): head and body of a
 * response leave in one segment, with the FIN when a close follows. Naive:
 * one write, and one output, per iovec, each before the call returns. */
#ifndef SW_WRITEV_ONE_SEND
#define SW_WRITEV_ONE_SEND 1
#endif

/* 3. setsockopt(TCP_NODELAY, 1) turns Nagle off, and getsockopt reads it so.
 * Naive, the write-up's inversion: the option value is taken as "Nagle
 * enabled" both ways, so asking for NODELAY turns Nagle on. */
#ifndef SW_NODELAY
#define SW_NODELAY 1
#endif

/* 4. Poll the NIC and the stack only when a frame waits, egress is pending or a
 * stack timer has expired. Naive: poll on every turn of a wait loop. */
#ifndef SW_POLL_WHEN_DUE
#define SW_POLL_WHEN_DUE 1
#endif

/* 5. The egress pass follows a list of sockets that may have something to send.
 * Naive: visit every socket, a listener's backlog sockets included, and read
 * its state. */
#ifndef SW_EGRESS_LIST
#define SW_EGRESS_LIST 1
#endif

/* 6. A socket leaves the egress list once it has nothing to send now; its
 * timers (retransmission, delayed ACK, keep-alive, window probes) are lwIP's,
 * and on_sent or a write lists it again. Naive: a socket whose next deadline
 * is a time and not "nothing to do" stays listed and is dispatched
 * (tcp_output) at every pass, which also keeps the network due. */
#ifndef SW_EGRESS_DEADLINES
#define SW_EGRESS_DEADLINES 1
#endif

/* 7. Reading a socket's state or parking on it does not put it on the egress
 * list. Naive: every access marks the socket. */
#ifndef SW_READ_NO_MARK
#define SW_READ_NO_MARK 1
#endif

/* 8. A listener answers poll()/accept() readiness from a flag its accept
 * callback raises. Naive: walk the listener's backlog sockets and read each
 * one's state. */
#ifndef SW_LISTENER_FLAG
#define SW_LISTENER_FLAG 1
#endif

/* 9. A waiting call polls the device with its interrupt off for a bounded
 * spin, then re-arms it, re-checks the ring and parks. Naive, the write-up's:
 * the NIC interrupt stays on while the call backs off exponentially through
 * PAUSEs (about 2,000 of them), polling the network and the waited-on objects
 * at every turn, before it parks. */
#ifndef SW_SPIN_THEN_PARK
#define SW_SPIN_THEN_PARK 1
#endif
#ifndef SPIN_NS_DEFAULT
#define SPIN_NS_DEFAULT 250000 /* 250 us; kernel option spin_us= overrides */
#endif
/* What the spin may grow to where a park is dear (kernel/spinwin.h): not
 * under TCG, where it stays SPIN_NS_DEFAULT. Kernel option spin_max_us=. */
#ifndef SPIN_MAX_NS_DEFAULT
#define SPIN_MAX_NS_DEFAULT 2000000 /* 2 ms */
#endif

/* 10. The LAPIC one-shot timer is programmed only when the CPU parks, and not
 * rewritten with the deadline it holds, nor with a later one while an earlier
 * has yet to fire. Naive: every return from a wait arms
 * it with the network's next deadline, and every park programs it again. */
#ifndef SW_TIMER_NO_RELOAD
#define SW_TIMER_NO_RELOAD 1
#endif

/* ---- the write-up's ideas that were wrong (mk/variants.mk: idea-*) -----------
 * Off in every design build; each idea variant turns one on (or, for the
 * zero spin, the smaller backlog and the small buffers, overrides a size:
 * SPIN_NS_DEFAULT above, BACKLOG_MAX and SOCK_BUF_BYTES in net/sock.h). */

/* accept() and the naive backlog walk skip an empty backlog by a count of the
 * connections waiting in it. */
#ifndef IDEA_ACCEPT_SKIP
#define IDEA_ACCEPT_SKIP 0
#endif

/* A parked wait that the NIC's interrupt woke polls the network at once,
 * before it turns the interrupt off and before the loop's other checks. */
#ifndef IDEA_FAST_WAKE
#define IDEA_FAST_WAKE 0
#endif

/* ---- more than one CPU (issue 39): the designs, each off unless built in ------
 * The naive baseline other unikernels have: one global lock (net/net_lock.c)
 * around lwIP, the driver and the socket layer's shared state, taken by
 * whichever CPU enters, on every entry. With smp=2 or more, CPU 1 runs the
 * network's loop (the device's interrupt routed to it) and the boot CPU the
 * application; with one CPU the lock is still taken on every entry. Off (0)
 * nothing of it is compiled in. make VARIANT=smp-lock. */
#ifndef SW_SMP_GLOBAL_LOCK
#define SW_SMP_GLOBAL_LOCK 0
#endif

/* The network core: with smp=2 or more, CPU 1 owns lwIP, the driver and the
 * socket layer, and the application's CPU hands each socket call (and each
 * poll()) to it through single-producer single-consumer rings and waits for
 * the answer (kernel/handoff.c, net/net_core.c); no lock on the way. With
 * one CPU the calls run where they are made, as without it. Off (0) nothing
 * of it is compiled in. make VARIANT=smp-netcore. */
#ifndef SW_SMP_NET_CORE
#define SW_SMP_NET_CORE 0
#endif

#if SW_SMP_GLOBAL_LOCK && SW_SMP_NET_CORE
#error "one SMP design at a time: SW_SMP_GLOBAL_LOCK or SW_SMP_NET_CORE"
#endif
/* A design that puts the network on a CPU other than the application's:
 * newlib's heap is then shared (kernel/malloc_lock.c), and only the boot
 * CPU, which runs the application, delivers its signals. */
#define SMP_DESIGN (SW_SMP_GLOBAL_LOCK || SW_SMP_NET_CORE)

#endif
