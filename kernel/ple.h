/*
 * ple.h: the pause-loop exits a KVM host would take for our spins, had it
 * its default settings. The nested KVM this project measures under (L0:
 * QEMU's emulated SVM) has no pause filter, so a guest that spins on PAUSE
 * takes no such exit there, while a real host takes one whenever a run of
 * PAUSEs outlasts its filter (issue 39, item 5). The kernel cannot see the
 * host's filter, so it models it, per CPU, from what each spin did: how
 * many PAUSEs (AMD counts them) over how many TSC cycles (Intel times them).
 *
 * AMD (kvm_amd): pause_filter_count 3000 PAUSEs, each within
 * pause_filter_thresh 128 cycles of the last; at each exit KVM doubles the
 * count (pause_filter_count_grow 2) up to pause_filter_count_max 65535.
 * Intel (kvm_intel): a PAUSE loop, PAUSEs within ple_gap 128 cycles, that
 * lasts ple_window 4096 cycles; at each exit the window doubles
 * (ple_window_grow 2) up to ple_window_max (UINT_MAX). On both, when the
 * vCPU's thread is scheduled in again, after it blocked on a HLT, the
 * limit shrinks back to its default (the shrink settings' default, 0).
 *
 * So the model: one spin is one loop (the gap between our PAUSEs is a few
 * loads of the ring, well under 128 cycles, and the work between two spins
 * is longer, which restarts the filter's count), each spin's exits come from
 * the limits as they stand, growing as they exit, and a park sets the
 * limits back. An upper bound where a look at the ring takes longer than
 * 128 cycles (a line the host just wrote) and resets the count: it is
 * stated beside the nested figures as what a host would add, no more.
 * Pure: tests/unit/test_ple.c.
 */
#ifndef PLE_H
#define PLE_H

#include <stdint.h>

#define PLE_AMD_COUNT      3000u       /* pause_filter_count */
#define PLE_AMD_COUNT_MAX  65535u      /* pause_filter_count_max */
#define PLE_INTEL_WINDOW   4096u       /* ple_window, cycles */
#define PLE_INTEL_WINDOW_MAX 0xffffffffu /* ple_window_max */
#define PLE_GROW           2u          /* both hosts' grow factor */

/* A CPU's filters as a host would have them now. */
struct ple_model {
	uint32_t amd_count;    /* PAUSEs to the next exit on AMD; 0: the default */
	uint32_t intel_window; /* cycles to the next exit on Intel; 0: the default */
};

/* The filters back at their defaults: the vCPU parked and was scheduled in. */
static inline void ple_reset(struct ple_model *m)
{
	m->amd_count = 0;
	m->intel_window = 0;
}

static inline uint32_t ple_grown(uint32_t limit, uint32_t max)
{
	return limit > max / PLE_GROW ? max : limit * PLE_GROW;
}

/* One spin of `pauses` PAUSEs over `cycles` TSC cycles: the exits an AMD
 * and an Intel host would have taken during it, the limits grown by each. */
static inline void ple_spin(struct ple_model *m, uint64_t pauses, uint64_t cycles,
			    uint64_t *amd_exits, uint64_t *intel_exits)
{
	uint32_t amd = m->amd_count ? m->amd_count : PLE_AMD_COUNT;
	uint32_t intel = m->intel_window ? m->intel_window : PLE_INTEL_WINDOW;
	uint64_t a = 0, i = 0;
	while (pauses >= amd) { /* ends: amd >= 3000 every turn */
		pauses -= amd;
		a++;
		amd = ple_grown(amd, PLE_AMD_COUNT_MAX);
	}
	while (cycles >= intel) {
		cycles -= intel;
		i++;
		intel = ple_grown(intel, PLE_INTEL_WINDOW_MAX);
	}
	m->amd_count = amd;
	m->intel_window = intel;
	*amd_exits = a;
	*intel_exits = i;
}

#endif
