/*
 * malloc_lock.c: newlib's heap under a lock, for the designs in which a CPU
 * other than the boot CPU frees or allocates (the network's CPU frees a
 * socket lwIP let go of, in the global-lock design and the network core's). newlib calls __malloc_lock and
 * __malloc_unlock around every heap operation, nested on one CPU (realloc
 * calls malloc); its own are empty in this build. Without such a design they
 * are not defined here, and the heap stays the boot CPU's alone, at no cost.
 */
#include "kernel.h"
#include "percpu.h"
#include "spinlock.h"
#include "switches.h"

#if SMP_DESIGN

struct _reent;

static struct spinlock heap_lock = SPINLOCK_INIT("heap");
/* How many times the holder has taken it: only the holder writes it. */
static uint32_t heap_depth;

bool malloc_lock_held(void)
{
	return heap_lock.locked && heap_lock.owner == cpu_id();
}

void __malloc_lock(struct _reent *r)
{
	(void)r;
	if (malloc_lock_held()) {
		heap_depth++;
		return;
	}
	spin_lock(&heap_lock);
	heap_depth = 1;
}

void __malloc_unlock(struct _reent *r)
{
	(void)r;
	KASSERT(malloc_lock_held() && heap_depth > 0);
	if (--heap_depth == 0) {
		heap_lock.owner = UINT32_MAX; /* not ours while another CPU takes it */
		spin_unlock(&heap_lock);
	}
}

#endif
