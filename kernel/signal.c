/*
 * signal.c: sigaction() over newlib's signal table, and signals the kernel
 * posts. One task and no other process: a signal arrives through
 * raise()/kill() on ourselves, which newlib's raise() dispatches to the
 * handler set here, or from the kernel: the console's interrupt key (Ctrl-C,
 * as a terminal's line discipline turns it into SIGINT) posts SIGINT from
 * the UART's interrupt handler. A posted signal is delivered at the next turn
 * of a wait loop (signal_service, from executor_poll), so its handler runs
 * in the task's context, never inside an interrupt; a poll() it interrupts
 * returns EINTR, as handlers installed without SA_RESTART expect.
 *
 * The console's status key (Ctrl-T) is posted the same way, as a request
 * to the kernel (console_status_requested, served by stats_service), so
 * signal_pending() counts it: a wait loop's spin and park end for either
 * rather than sleep until their next deadline.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include "kernel.h"
#include "percpu.h"
#include "switches.h"

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) {
		errno = EINVAL;
		return -1;
	}
	void (*prev)(int);
	if (act) {
		prev = signal(sig, act->sa_handler);
	} else {
		prev = signal(sig, SIG_DFL);
		signal(sig, prev);
	}
	if (prev == SIG_ERR)
		return -1;
	if (old) {
		memset(old, 0, sizeof *old);
		old->sa_handler = prev;
	}
	return 0;
}

/* Posted and not yet delivered, one bit per signal. Interrupt handlers set
 * bits; the task takes them all at once with an exchange, which no interrupt
 * can split. */
static volatile uint32_t pending;

void signal_post(int sig)
{
	if (sig > 0 && sig < NSIG && sig < 32)
		__atomic_fetch_or(&pending, 1u << sig, __ATOMIC_SEQ_CST);
}

bool signal_pending(void)
{
	return pending != 0 || console_status_requested;
}

#if SMP_DESIGN
/* The signals are the app's: with the network on a CPU of its own, only the
 * app's CPU delivers them, and not while it waits for a call the network's
 * CPU runs for it (handoff.c relays them there, and they are delivered once
 * the answer is back); the status key it serves in any wait. */
bool signal_pending_here(void)
{
	if (!on_boot_cpu())
		return false;
	if (this_cpu()->signals_held)
		return console_status_requested;
	return signal_pending();
}

bool signal_service_here(void)
{
	if (!on_boot_cpu() || this_cpu()->signals_held)
		return false;
	return signal_service();
}
#endif

bool signal_posted(void)
{
	return pending != 0;
}

/* An ignored signal is dropped and interrupts nothing; one left at its
 * default action ends the kernel through kill() (a fatal signal, status 70),
 * counters printed. */
bool signal_service(void)
{
	if (!pending)
		return false;
	uint32_t set = __atomic_exchange_n(&pending, 0, __ATOMIC_SEQ_CST);
	bool ran = false;
	for (int sig = 1; sig < NSIG && sig < 32; sig++) {
		if (!(set & (1u << sig)))
			continue;
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) < 0 || sa.sa_handler == SIG_IGN)
			continue;
		raise(sig);
		ran = true;
	}
	return ran;
}
