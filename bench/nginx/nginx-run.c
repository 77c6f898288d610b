/*
 * nginx-run.c: runs Debian's nginx the way the benchmark runs httpd: the
 * same options, the same shutdown request, one exit status that says how it
 * ended. The linux-nginx guest's program (init's app=nginx-run) and the
 * native-nginx guest's.
 *
 *   nginx-run [-a ADDR] [-p PORT] [-s] [-q] [-n NGINX] [-C]
 *     -a ADDR   IPv4 address to listen on (default 0.0.0.0)
 *     -p PORT   TCP port, 1-65535 (default 8080)
 *     -s        GET /__shutdown stops nginx, as it stops httpd -s
 *     -q        quiet: print only errors
 *     -n NGINX  the nginx program (default /usr/sbin/nginx)
 *     -C        print the configuration nginx would be given, and exit
 *
 * It makes a directory of its own (mkdtemp, under $TMPDIR or /tmp), writes
 * there nginx's configuration (bench/nginx/nginx.conf, built in, with
 * @ADDR@, @PORT@ and @DIR@ filled in and the lines that begin `#s ` kept,
 * without those three characters, only with -s), and runs `nginx -c
 * DIR/nginx.conf` as its child, in the foreground (daemon off). nginx gets
 * SIGTERM should nginx-run die (PR_SET_PDEATHSIG): no nginx outlives it.
 *
 * The shutdown request: nginx cannot stop itself on a request, but it can
 * log one. Its /__shutdown location answers "shutting down" and then writes
 * its access-log line to DIR/shutdown.log, the one log it keeps; nginx-run
 * watches that file (inotify: no timer wakes an idle guest) and, once it
 * holds a line, sends nginx SIGQUIT: nginx's graceful shutdown, which
 * closes idle keep-alive connections, lets requests under way finish and
 * exits 0. SIGTERM or SIGINT to nginx-run does the same. A shutdown that
 * takes longer than STOP_GRACE_MS (a client that does not read its answer)
 * becomes a fast one (SIGTERM), which nginx also ends with 0.
 *
 * Exit status (in the guest, init reports it as it reports httpd's):
 *   0  nginx stopped when asked (the request, SIGTERM or SIGINT) and exited 0
 *   1  nginx ended unasked, or exited non-zero, or was killed (nginx says
 *      why on stderr: its error log)
 *   2  bad options
 *   3  nginx-run's own set-up failed (directory, configuration, inotify,
 *      signals, fork or exec of nginx)
 * Its directory is removed on the way out.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "apps/common/common.h"

/* bench/nginx/nginx.conf as one string (made by bench.mk). */
static const char conf_template[] =
#include "nginx-conf.inc"
	;

#define NGINX_DEFAULT "/usr/sbin/nginx"
#define SHUTDOWN_LOG "shutdown.log"
/* How long a graceful stop may take before it is made a fast one. */
#define STOP_GRACE_MS 5000

/* Exit statuses (see the header). */
enum {
	EXIT_STOPPED = 0,  /* stopped when asked */
	EXIT_NGINX = 1,    /* nginx failed or ended unasked */
	EXIT_USAGE = 2,    /* bad options */
	EXIT_SETUP = 3,    /* our own set-up failed */
};

/* What this run of nginx is given. */
struct run_opts {
	const char *addr;    /* -a */
	long port;           /* -p */
	bool shutdown;       /* -s: the /__shutdown location */
	bool quiet;          /* -q */
	const char *nginx;   /* -n */
	char dir[256];       /* the run's directory (configuration, pid, logs) */
};

static void usage(void)
{
	fprintf(stderr, "usage: nginx-run [-a ADDR] [-p PORT] [-s] [-q] [-n NGINX] [-C]\n");
}

/* Writes line [p, p + n) to f with @ADDR@, @PORT@ and @DIR@ filled in. */
static void put_line(FILE *f, const char *p, size_t n, const struct run_opts *o)
{
	static const char *const names[] = { "@ADDR@", "@PORT@", "@DIR@" };
	const char *end = p + n;

	while (p < end) {
		size_t i, len = 0;

		for (i = 0; i < 3; i++) {
			len = strlen(names[i]);
			if ((size_t)(end - p) >= len && memcmp(p, names[i], len) == 0)
				break;
		}
		if (i == 3) {
			fputc(*p++, f);
			continue;
		}
		if (i == 0)
			fputs(o->addr, f);
		else if (i == 1)
			fprintf(f, "%ld", o->port);
		else
			fputs(o->dir, f);
		p += len;
	}
}

/* The configuration, made from the template, to f. */
static void write_conf(FILE *f, const struct run_opts *o)
{
	const char *p = conf_template;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);

		if (strncmp(p, "#s ", 3) != 0)
			put_line(f, p, n, o);
		else if (o->shutdown)
			put_line(f, p + 3, n - 3, o);
		p += n;
	}
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Removes the run's directory and what nginx left in it. */
static void remove_dir(const struct run_opts *o)
{
	if (o->dir[0])
		nftw(o->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup_failed(const struct run_opts *o, const char *what)
{
	fprintf(stderr, "nginx-run: %s: %s\n", what, strerror(errno));
	remove_dir(o);
	return EXIT_SETUP;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether the shutdown log holds a line yet. */
static bool shutdown_logged(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size > 0;
}

int main(int argc, char **argv)
{
	struct run_opts o = { .addr = "0.0.0.0", .port = 8080, .nginx = NGINX_DEFAULT };
	char conf[320], logpath[320];
	struct in_addr ia;
	sigset_t sigs, old;
	const char *tmp;
	bool print_only = false, asked = false, hurried = false;
	const char *why = "";
	int64_t stop_deadline = 0;
	int opt, fd, ino, sfd, status = 0;
	pid_t nginx, self = getpid();
	FILE *f;

	while ((opt = getopt(argc, argv, "a:p:sqn:Ch")) != -1) {
		switch (opt) {
		case 'a': o.addr = optarg; break;
		case 'p': o.port = parse_number(optarg, 1, 65535); break;
		case 's': o.shutdown = true; break;
		case 'q': o.quiet = true; break;
		case 'n': o.nginx = optarg; break;
		case 'C': print_only = true; break;
		case 'h': usage(); return 0;
		default: usage(); return EXIT_USAGE;
		}
		if (o.port < 0) {
			fprintf(stderr, "nginx-run: bad value for -%c: %s\n", opt, optarg);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage();
		return EXIT_USAGE;
	}
	if (inet_pton(AF_INET, o.addr, &ia) != 1) {
		fprintf(stderr, "nginx-run: not an IPv4 address: %s\n", o.addr);
		return EXIT_USAGE;
	}
	tmp = getenv("TMPDIR");
	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	if (print_only) {
		snprintf(o.dir, sizeof(o.dir), "%s/nginx-run.XXXXXX", tmp);
		write_conf(stdout, &o);
		return 0;
	}
	if (access(o.nginx, X_OK) != 0) {
		fprintf(stderr, "nginx-run: %s: %s\n", o.nginx, strerror(errno));
		return EXIT_SETUP;
	}

	if (snprintf(o.dir, sizeof(o.dir), "%s/nginx-run.XXXXXX", tmp) >= (int)sizeof(o.dir) ||
	    mkdtemp(o.dir) == NULL) {
		o.dir[0] = '\0';
		return setup_failed(&o, "mkdtemp");
	}
	/* nginx's worker (user nobody) creates nothing here, but may pass. */
	chmod(o.dir, 0711);
	snprintf(conf, sizeof(conf), "%s/nginx.conf", o.dir);
	snprintf(logpath, sizeof(logpath), "%s/" SHUTDOWN_LOG, o.dir);
	f = fopen(conf, "w");
	if (f == NULL)
		return setup_failed(&o, conf);
	write_conf(f, &o);
	if (fclose(f) != 0)
		return setup_failed(&o, conf);
	/* The log exists before nginx starts, so it can be watched now. */
	fd = open(logpath, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return setup_failed(&o, logpath);
	close(fd);
	ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ino < 0 || inotify_add_watch(ino, logpath, IN_MODIFY) < 0)
		return setup_failed(&o, "inotify");

	/* Signals arrive through a descriptor, beside the log's. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	if (sigprocmask(SIG_BLOCK, &sigs, &old) < 0)
		return setup_failed(&o, "sigprocmask");
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return setup_failed(&o, "signalfd");

	nginx = fork();
	if (nginx < 0)
		return setup_failed(&o, "fork");
	if (nginx == 0) {
		char *args[] = { (char *)o.nginx, "-c", conf, NULL };

		sigprocmask(SIG_SETMASK, &old, NULL);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != self)
			_exit(127); /* nginx-run died before the line above */
		execv(o.nginx, args);
		fprintf(stderr, "nginx-run: exec %s: %s\n", o.nginx, strerror(errno));
		_exit(127);
	}
	if (!o.quiet)
		printf("nginx-run: %s on %s:%ld (pid %d), configuration %s\n", o.nginx, o.addr, o.port,
		       (int)nginx, conf);
	fflush(stdout);

	for (;;) {
		struct pollfd pfd[2] = { { ino, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		int timeout = -1;

		if (asked) {
			int64_t left = stop_deadline - now_ms();
			timeout = left > 0 ? (int)left : 0;
		}
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			perror("nginx-run: poll");
			kill(nginx, SIGTERM);
			waitpid(nginx, &status, 0);
			remove_dir(&o);
			return EXIT_SETUP;
		}
		if (pfd[0].revents) {
			char buf[4096];

			while (read(ino, buf, sizeof(buf)) > 0)
				;
			if (!asked && o.shutdown && shutdown_logged(logpath)) {
				why = "shutdown request";
				asked = true;
				stop_deadline = now_ms() + STOP_GRACE_MS;
				kill(nginx, SIGQUIT);
			}
		}
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGCHLD || asked)
					continue;
				why = "signal";
				asked = true;
				stop_deadline = now_ms() + STOP_GRACE_MS;
				kill(nginx, SIGQUIT);
			}
			if (waitpid(nginx, &status, WNOHANG) == nginx)
				break;
		}
		if (asked && !hurried && now_ms() >= stop_deadline) {
			fprintf(stderr, "nginx-run: nginx still running %d ms after the stop: "
				"stopping it fast (SIGTERM)\n", STOP_GRACE_MS);
			kill(nginx, SIGTERM);
			hurried = true;
		}
	}
	remove_dir(&o);

	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return EXIT_SETUP; /* exec failed: said above */
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "nginx-run: nginx killed by signal %d\n", WTERMSIG(status));
		return EXIT_NGINX;
	}
	if (WEXITSTATUS(status) != 0) {
		fprintf(stderr, "nginx-run: nginx exited with status %d\n", WEXITSTATUS(status));
		return EXIT_NGINX;
	}
	if (!asked) {
		fprintf(stderr, "nginx-run: nginx exited (status 0) without being asked\n");
		return EXIT_NGINX;
	}
	if (!o.quiet)
		printf("nginx-run: stopped (%s)\n", why);
	return EXIT_STOPPED;
}
