/*
 * fd.c: the file-descriptor table. Slots 0-2 hold the console at boot; the
 * socket layer installs its sockets in the same table, so read(), write(),
 * close() and poll() take any descriptor.
 *
 * A close takes the descriptor out of the table before the object's close
 * runs: a socket's close polls the network, which can free the socket and
 * run a signal handler, and for that time the table must not name the
 * object (a handler's close of the same descriptor finds it gone, and a
 * descriptor the poll installs may take its number).
 *
 * The table is the boot CPU's, as the app is (docs/design/smp.md), lent to
 * the network core while it runs a call the app handed it and waits for
 * (kernel/handoff.c): debug builds check that no other CPU enters it.
 */
#include <errno.h>
#include "kernel.h"
#include "percpu.h"

struct fd_slot {
	const struct file_ops *ops; /* NULL: slot free */
	void *obj;                  /* passed to every op */
};

static struct fd_slot table[FD_MAX];
static int nopen; /* slots in use */

int fd_install(const struct file_ops *ops, void *obj)
{
	KASSERT(acting_for_app());
	for (int fd = 0; fd < FD_MAX; fd++) {
		if (!table[fd].ops) {
			table[fd] = (struct fd_slot){ ops, obj };
			nopen++;
			return fd;
		}
	}
	return -EMFILE;
}

int fd_lookup(int fd, const struct file_ops **ops, void **obj)
{
	KASSERT(acting_for_app());
	if (fd < 0 || fd >= FD_MAX || !table[fd].ops)
		return -EBADF;
	*ops = table[fd].ops;
	*obj = table[fd].obj;
	return 0;
}

int fd_close(int fd)
{
	const struct file_ops *ops;
	void *obj;
	if (fd_lookup(fd, &ops, &obj) < 0)
		return -EBADF;
	fd_release(fd);
	return ops->close ? ops->close(obj) : 0;
}

void fd_release(int fd)
{
	KASSERT(acting_for_app());
	if (fd >= 0 && fd < FD_MAX && table[fd].ops) {
		table[fd] = (struct fd_slot){ 0, 0 };
		nopen--;
	}
}

int fd_count_open(void)
{
	return nopen;
}
