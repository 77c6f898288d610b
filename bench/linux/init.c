/*
 * init.c: PID 1 of the Linux guest. It makes a Debian kernel behave like the
 * unikernel from the outside, so the benchmark treats both alike:
 *
 *   - the same command line: `ip=A gw=G mask=M -- APP-ARGS` (key=value kernel
 *     options before `--`, the app's argv after it), read from /proc/cmdline;
 *   - loads the virtio modules listed in /lib/modules/load-order (in Debian's
 *     kernel virtio is modular), waits for eth0 and configures it statically;
 *   - with `boot_time` among the options (make bench-boot), says when the
 *     app first listens, by the kernel's clock;
 *   - with `busy_poll=US` among the options (the benchmark's linux-tuned
 *     guest), writes US to net.core.busy_poll and net.core.busy_read, so
 *     poll() and reads spin on the device's queue that long before sleeping,
 *     and prints what it reads back;
 *   - runs /bin/httpd (or /bin/NAME with the option app=NAME: httpd-epoll,
 *     httpd with epoll behind its loop; iperf, our iperf3 server; iperf3,
 *     Debian's; nginx-run, Debian's nginx run as httpd is, bench/nginx) with
 *     APP-ARGS and, when it exits with status N, prints
 *     the exit line "init: exit status N" last on the console and ends QEMU
 *     through the isa-debug-exit device (port 0xf4), which makes QEMU exit
 *     with 2N+1, as the unikernel does, so tools/qemu-run returns N (it takes
 *     the code only with the line that confirms it; a panic or a power-off
 *     ends QEMU with 0 and no such line, which it reports as no status).
 *
 * Whatever fails, it reports on the console and ends QEMU (status 100 and
 * up): a broken guest never hangs the caller. No busybox, no shell.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define APP_DIR "/bin/"
#define APP_DEFAULT "httpd"
#define MODULE_DIR "/lib/modules"
#define IFACE "eth0"
#define MAX_ARGS 64

/* Exit statuses of init's own failures (the app's are below 100). */
enum {
	EXIT_NO_CMDLINE = 100, /* /proc/cmdline unreadable or malformed */
	EXIT_MODULE = 101,     /* a module failed to load */
	EXIT_NO_NIC = 102,     /* eth0 never appeared */
	EXIT_NET = 103,        /* the address or route was refused */
	EXIT_EXEC = 104,       /* the app could not be started */
	EXIT_SYSCTL = 105,     /* busy_poll= malformed, or its sysctls refused */
};

/* The network settings and the app's argv, from the kernel command line. */
struct boot_config {
	const char *ip;            /* ip= : the guest's IPv4 address */
	const char *gw;            /* gw= : default gateway (optional) */
	const char *mask;          /* mask= : netmask (default 255.255.255.0) */
	const char *busy_poll;     /* busy_poll= : microseconds of socket busy polling (optional) */
	int boot_time;             /* boot_time : say when the app first listens */
	char app[64];              /* app= : the program, APP_DIR + name (default httpd) */
	char *argv[MAX_ARGS + 2];  /* app, then the words after `--` */
};

static void vsay(const char *fmt, va_list ap)
{
	fputs("init: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/* syslog(2) actions: kernel messages off and on the console. */
#define KLOG_CONSOLE_OFF 6
#define KLOG_CONSOLE_ON  7

/*
 * Ends the machine: the exit line, then QEMU's isa-debug-exit, else a
 * power-off. The line must be the console's last (tools/qemu-run reads it),
 * so kernel messages stop going there first, and the UART sends it before
 * the port is written. 7 bits, as the port carries. Never returns.
 */
static void end_machine(int status)
{
	status &= 0x7f;
	sync();
	klogctl(KLOG_CONSOLE_OFF, NULL, 0);
	fprintf(stderr, "init: exit status %d\n", status);
	tcdrain(STDERR_FILENO);
	/* The kernel writes the port for us through /dev/port: a user-mode OUT
	 * after ioperm() faulted (#GP) in a guest under nested KVM on QEMU's
	 * emulated SVM. ioperm is the fallback where /dev/port is missing. */
	unsigned char code = (unsigned char)status;
	int written = 0;
	int port = open("/dev/port", O_WRONLY);
	if (port >= 0)
		written = pwrite(port, &code, 1, 0xf4) == 1;
	if (!written && ioperm(0xf4, 4, 1) == 0) {
		outb(code, 0xf4);
		written = 1;
	}
	int err = errno;
	/* QEMU ends the process on the write, but its vCPU may run on while it
	 * does: a line printed now could land after the exit line, which must
	 * stay the console's last. A port with no device takes the write too,
	 * so give the VMM time to end us before deciding there is none. */
	if (written)
		sleep(5);
	klogctl(KLOG_CONSOLE_ON, NULL, 0);
	say("isa-debug-exit unavailable (%s); powering off", written ? "no device took the write" : strerror(err));
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static void fail(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	end_machine(status);
}

static void mount_basics(void)
{
	int fd;

	mkdir("/proc", 0555);
	mkdir("/dev", 0755);
	mkdir("/sys", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	/* The initramfs has no /dev/console, so the kernel gave us no stdio. */
	fd = open("/dev/console", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static void read_cmdline(struct boot_config *cfg)
{
	static char line[4096];
	size_t n, argc = 1;
	char *tok, *save = NULL;
	int after_dashes = 0;
	FILE *f = fopen("/proc/cmdline", "r");

	if (f == NULL)
		fail(EXIT_NO_CMDLINE, "cannot read /proc/cmdline: %s", strerror(errno));
	n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';

	cfg->mask = "255.255.255.0";
	snprintf(cfg->app, sizeof(cfg->app), APP_DIR APP_DEFAULT);
	cfg->argv[0] = cfg->app;
	for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (after_dashes) {
			if (argc > MAX_ARGS)
				fail(EXIT_NO_CMDLINE, "more than %d app arguments", MAX_ARGS);
			cfg->argv[argc++] = tok;
		} else if (strcmp(tok, "--") == 0) {
			after_dashes = 1;
		} else if (strncmp(tok, "ip=", 3) == 0) {
			cfg->ip = tok + 3;
		} else if (strncmp(tok, "gw=", 3) == 0) {
			cfg->gw = tok + 3;
		} else if (strncmp(tok, "mask=", 5) == 0) {
			cfg->mask = tok + 5;
		} else if (strncmp(tok, "busy_poll=", 10) == 0) {
			cfg->busy_poll = tok + 10;
		} else if (strcmp(tok, "boot_time") == 0) {
			cfg->boot_time = 1;
		} else if (strncmp(tok, "app=", 4) == 0) {
			const char *name = tok + 4;
			size_t len = strlen(name);
			/* A name in /bin, never a path elsewhere. */
			if (len == 0 || len > 32 || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != len)
				fail(EXIT_NO_CMDLINE, "app=%s: not a program name", name);
			snprintf(cfg->app, sizeof(cfg->app), APP_DIR "%s", name);
		}
	}
	cfg->argv[argc] = NULL;
}

/* Loads the modules named in MODULE_DIR/load-order, one per line, in order.
 * A line "NAME PATH" loads NAME only where PATH exists: virtio_mmio where
 * the firmware's ACPI tables announce a virtio-mmio transport (QEMU's
 * microvm), so the PC machine's guest loads what it always did. */
static void load_modules(void)
{
	char name[256], path[512];
	FILE *order = fopen(MODULE_DIR "/load-order", "r");

	if (order == NULL)
		return; /* a kernel with virtio built in needs none */
	while (fgets(name, sizeof(name), order)) {
		char *only_if;
		int fd;

		name[strcspn(name, "\r\n")] = '\0';
		if (name[0] == '\0' || name[0] == '#')
			continue;
		only_if = strchr(name, ' ');
		if (only_if != NULL) {
			*only_if++ = '\0';
			if (access(only_if, F_OK) != 0)
				continue;
		}
		snprintf(path, sizeof(path), MODULE_DIR "/%s.ko", name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fail(EXIT_MODULE, "%s: %s", path, strerror(errno));
		if (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST)
			fail(EXIT_MODULE, "loading %s: %s", name, strerror(errno));
		close(fd);
	}
	fclose(order);
}

static void set_addr(int sock, unsigned long req, const char *ifname, const char *addr)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	sin->sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
		fail(EXIT_NET, "not an IPv4 address: %s", addr);
	if (ioctl(sock, req, &ifr) < 0)
		fail(EXIT_NET, "%s %s: %s", ifname, addr, strerror(errno));
}

static void link_up(int sock, const char *ifname)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0)
		fail(EXIT_NET, "%s flags: %s", ifname, strerror(errno));
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(sock, SIOCSIFFLAGS, &ifr) < 0)
		fail(EXIT_NET, "%s up: %s", ifname, strerror(errno));
}

static void set_default_route(int sock, const char *gw)
{
	struct rtentry rt;
	struct sockaddr_in *dst = (struct sockaddr_in *)&rt.rt_dst;
	struct sockaddr_in *mask = (struct sockaddr_in *)&rt.rt_genmask;
	struct sockaddr_in *gate = (struct sockaddr_in *)&rt.rt_gateway;

	memset(&rt, 0, sizeof(rt));
	dst->sin_family = mask->sin_family = gate->sin_family = AF_INET;
	if (inet_pton(AF_INET, gw, &gate->sin_addr) != 1)
		fail(EXIT_NET, "not an IPv4 gateway: %s", gw);
	rt.rt_flags = RTF_UP | RTF_GATEWAY;
	if (ioctl(sock, SIOCADDRT, &rt) < 0)
		fail(EXIT_NET, "default route via %s: %s", gw, strerror(errno));
}

static void configure_network(const struct boot_config *cfg)
{
	int tries, sock = socket(AF_INET, SOCK_DGRAM, 0);

	if (sock < 0)
		fail(EXIT_NET, "socket: %s", strerror(errno));
	link_up(sock, "lo"); /* the kernel gives lo 127.0.0.1 as it comes up */
	if (cfg->ip == NULL) {
		say("no ip= on the command line: " IFACE " left down");
		close(sock);
		return;
	}
	/* virtio_net probes as its module loads, but allow the device a moment. */
	for (tries = 0; if_nametoindex(IFACE) == 0; tries++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		if (tries == 250)
			fail(EXIT_NO_NIC, IFACE " did not appear (no virtio-net device?)");
		nanosleep(&ts, NULL);
	}
	set_addr(sock, SIOCSIFADDR, IFACE, cfg->ip);
	set_addr(sock, SIOCSIFNETMASK, IFACE, cfg->mask);
	link_up(sock, IFACE);
	if (cfg->gw)
		set_default_route(sock, cfg->gw);
	close(sock);
	say(IFACE " %s mask %s gw %s", cfg->ip, cfg->mask, cfg->gw ? cfg->gw : "-");
}

/* Writes VALUE to the sysctl file PATH and returns what it then holds. */
static long write_sysctl(const char *path, const char *value)
{
	char back[32];
	ssize_t n;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		fail(EXIT_SYSCTL, "%s: %s", path, strerror(errno));
	if (write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		fail(EXIT_SYSCTL, "writing %s to %s: %s", value, path, strerror(errno));
	if (lseek(fd, 0, SEEK_SET) != 0 || (n = read(fd, back, sizeof(back) - 1)) <= 0)
		fail(EXIT_SYSCTL, "reading %s back: %s", path, strerror(errno));
	back[n] = '\0';
	close(fd);
	return strtol(back, NULL, 10);
}

/* busy_poll=US: socket busy polling for poll() (busy_poll) and reads (busy_read). */
static void set_busy_poll(const char *us)
{
	long poll_us, read_us;

	if (us == NULL)
		return;
	if (us[0] == '\0' || strspn(us, "0123456789") != strlen(us) || strlen(us) > 6)
		fail(EXIT_SYSCTL, "busy_poll= wants microseconds (0-999999), not '%s'", us);
	poll_us = write_sysctl("/proc/sys/net/core/busy_poll", us);
	read_us = write_sysctl("/proc/sys/net/core/busy_read", us);
	if (poll_us != strtol(us, NULL, 10) || read_us != poll_us)
		fail(EXIT_SYSCTL, "busy polling: asked %s us, got busy_poll %ld busy_read %ld", us, poll_us, read_us);
	say("net.core.busy_poll=%ld net.core.busy_read=%ld", poll_us, read_us);
}

/* Whether /proc/net/tcp holds a listening socket (state 0A). */
static int tcp_listening(void)
{
	char line[256];
	int found = 0;
	FILE *f = fopen("/proc/net/tcp", "r");

	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned local_port, state;

		if (sscanf(line, " %*u: %*x:%x %*x:%*x %x", &local_port, &state) == 2 && state == 0x0A)
			found = 1;
	}
	fclose(f);
	return found;
}

/*
 * boot_time: the guest's boot time as Linux gives it, the way the
 * unikernel's boot_time option gives its own: the first look at
 * /proc/net/tcp that finds the app listening, by CLOCK_BOOTTIME (which
 * starts with the kernel's timekeeping, a little after its first
 * instruction). Looked at every 2 ms, so up to 2 ms late; gives up quietly
 * when the app ends first or after 60 s.
 */
static void report_first_listen(pid_t app)
{
	struct timespec now, pause_ts = { 0, 2 * 1000 * 1000 };
	siginfo_t ended;
	int looks;

	for (looks = 0; looks < 30000; looks++) {
		if (tcp_listening()) {
			clock_gettime(CLOCK_BOOTTIME, &now);
			say("listening %lld ns after the kernel's clock started",
			    (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
			return;
		}
		/* Ended? Looked at without reaping it: main's loop does that. */
		memset(&ended, 0, sizeof(ended));
		if (waitid(P_PID, (id_t)app, &ended, WEXITED | WNOHANG | WNOWAIT) != 0 || ended.si_pid != 0)
			return;
		nanosleep(&pause_ts, NULL);
	}
}

int main(void)
{
	struct boot_config cfg;
	pid_t app;
	int status;

	memset(&cfg, 0, sizeof(cfg));
	mount_basics();
	read_cmdline(&cfg);
	load_modules();
	configure_network(&cfg);
	set_busy_poll(cfg.busy_poll);

	app = fork();
	if (app < 0)
		fail(EXIT_EXEC, "fork: %s", strerror(errno));
	if (app == 0) {
		execv(cfg.app, cfg.argv);
		say("exec %s: %s", cfg.app, strerror(errno));
		_exit(127);
	}
	if (cfg.boot_time)
		report_first_listen(app);
	/* PID 1 reaps every orphan; only the app's end matters. */
	for (;;) {
		pid_t pid = waitpid(-1, &status, 0);

		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			fail(EXIT_EXEC, "waitpid: %s", strerror(errno));
		if (pid == app)
			break;
	}
	if (WIFEXITED(status)) {
		say("%s exited with status %d", cfg.app, WEXITSTATUS(status));
		end_machine(WEXITSTATUS(status) == 127 ? EXIT_EXEC : WEXITSTATUS(status));
	}
	say("%s killed by signal %d", cfg.app, WTERMSIG(status));
	end_machine(EXIT_EXEC);
	return 0;
}
