/*
 * signal.c: sigaction() over newlib's signal table. One task and no other
 * process: a signal arrives only through raise()/kill() on ourselves, which
 * newlib's raise() dispatches to the handler set here.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) {
		errno = EINVAL;
		return -1;
	}
	_sig_func_ptr prev;
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
