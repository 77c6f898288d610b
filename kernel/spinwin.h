/*
 * spinwin.h: how long the executor spins before it parks. Pure, so the same
 * code runs in the kernel and in host unit tests.
 *
 * A spin pays for itself when the next frame arrives before it ends: the
 * park's costs (under KVM an HLT exit, the wake's interrupt injection and
 * its end of interrupt) are not paid. A fixed spin covers the gaps shorter
 * than itself; where the peer's round trip is longer (a slow client, a
 * nested host), every gap ends in a park. The window follows the gaps, the
 * way KVM's halt polling does on the host's side:
 *
 * - a wait the device ended within max_ns of the spin's start (after a
 *   park, or right after the spin ran out) doubles the window, up to max_ns;
 * - a wait longer than max_ns (an idle guest, a client gone quiet) halves
 *   it, down to base_ns;
 * - a spin the device ended, or a wait a timer ended sooner, leaves it.
 *
 * With max_ns <= base_ns, or no spin at all (base_ns 0), the window is fixed
 * at base_ns.
 */
#ifndef SPINWIN_H
#define SPINWIN_H

#include <stdbool.h>
#include <stdint.h>

struct spin_window {
	uint64_t ns;      /* the next spin's length; base_ns <= ns <= max(base_ns, max_ns) */
	uint64_t base_ns; /* where it starts and what it shrinks back to (spin_us=) */
	uint64_t max_ns;  /* what it may grow to (spin_max_us=) */
};

enum spin_window_change {
	SPIN_WINDOW_KEPT,
	SPIN_WINDOW_GREW,
	SPIN_WINDOW_SHRANK,
};

void spin_window_init(struct spin_window *w, uint64_t base_ns, uint64_t max_ns);
/* After a spin that ran out: the wait lasted waited_ns from the spin's start
 * until the device or something else (a timer, a signal) ended it. */
enum spin_window_change spin_window_update(struct spin_window *w, uint64_t waited_ns,
					   bool device_ended);

#endif
