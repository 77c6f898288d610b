/*
 * spinwin.c: the spin's window, grown toward the gaps the device's wakes show
 * and shrunk when the guest goes idle (the rule is in spinwin.h).
 */
#include "kernel/spinwin.h"

void spin_window_init(struct spin_window *w, uint64_t base_ns, uint64_t max_ns)
{
	w->ns = base_ns;
	w->base_ns = base_ns;
	/* No spin (spin_us=0) stays no spin: a zero window has nothing to double. */
	w->max_ns = base_ns && max_ns > base_ns ? max_ns : base_ns;
}

enum spin_window_change spin_window_update(struct spin_window *w, uint64_t waited_ns,
					   bool device_ended)
{
	if (waited_ns > w->max_ns) {
		if (w->ns == w->base_ns)
			return SPIN_WINDOW_KEPT;
		w->ns = w->ns / 2 > w->base_ns ? w->ns / 2 : w->base_ns;
		return SPIN_WINDOW_SHRANK;
	}
	if (!device_ended || w->ns == w->max_ns)
		return SPIN_WINDOW_KEPT;
	w->ns = w->ns * 2 < w->max_ns ? w->ns * 2 : w->max_ns;
	return SPIN_WINDOW_GREW;
}
