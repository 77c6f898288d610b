/*
 * insncount.c: a QEMU TCG plugin that counts the instructions the guest
 * executes, split by where they lie, and writes the totals when asked. It
 * offers the benchmark an exact cost per request where the host's clock
 * cannot rank builds (docs/instruction-counts.md).
 *
 *   -plugin insncount.so,out=FILE[,ctl=FIFO][,region=NAME:START-END...][,split=half]
 *
 *   out=FILE     where the counts go (appended)
 *   ctl=FIFO     each line LABEL written to FIFO appends the counts so far
 *                to FILE as "LABEL: total N, NAME N, ..." (a mark)
 *   region=NAME:START-END   instructions at guest addresses [START, END)
 *                (hex) count as NAME; ranges of one NAME add up
 *   split=half   instructions in no region count as `kernel` (addresses in
 *                the upper half) or `user`; without it, as `other`
 * At exit FILE gets an "exit: ..." line too. Its first line lists the regions.
 * With more than one vCPU, each mark's line comes after a line per vCPU,
 * "LABEL.vcpuK: total N, NAME N, ...", that vCPU's own counts (the mark's
 * line is their sum), so a benchmark can give each CPU's share.
 *
 * Counting is inline: when QEMU translates a block, the plugin classes the
 * block's instructions by address and has the block add each class's count
 * to that class's counter every time it starts (one add for most blocks, two
 * for one that crosses a region's edge). No callback runs per block or per
 * instruction. A block that a fault cuts short (a page fault in it) still
 * counts whole; interrupts are taken between blocks, so they cut none.
 *
 * Marks come from the host, not the guest: the benchmark writes a label
 * before and after each load, so any guest can be counted as it is (the
 * Linux guest has no Ctrl-T), and a mark costs the guest nothing. A thread
 * of the plugin reads the FIFO and sums the counters the vCPU adds to (it
 * reads 64-bit words the vCPU writes whole; a mark is the count at some
 * instant between the label's write and the line's).
 *
 * Built against the qemu-plugin.h of the QEMU that loads it (QEMU refuses a
 * plugin of another API version): 9.0 and later (version 2 on) add inline
 * to a per-vCPU scoreboard. 7.2's version 1 has only a plain counter for an
 * inline add, which MTTCG's vCPU threads would race on (lost adds), so 7.2
 * adds inline only for a guest of one vCPU; with more, each block calls the
 * plugin, which adds to the calling vCPU's own counters: exact, and split
 * per vCPU, at the cost of a call per block (the benchmark's counted runs
 * are not its timed ones).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_CLASSES 16 /* named regions, then other (or kernel and user) */
#define MAX_VCPUS   64 /* vCPUs given counts of their own (7.2 with more than one) */
#define MAX_RANGES  64 /* address ranges over all regions */
#define NAME_MAX_LEN 32
#define LABEL_MAX_LEN 64

/* One address range and the class its instructions count in. */
struct range {
	uint64_t start; /* first address */
	uint64_t end;   /* one past the last */
	int cls;        /* index into class_names */
};

/* The counters, one per class, in one per-vCPU record. */
struct counts {
	uint64_t n[MAX_CLASSES]; /* instructions executed in each class */
};

static struct range ranges[MAX_RANGES];
static int nranges;
static char class_names[MAX_CLASSES][NAME_MAX_LEN]; /* the regions', then the rest's */
static int nclasses;
static int class_other = -1;  /* no split: every instruction in no region */
static int class_kernel = -1; /* split=half: the upper half's, in no region */
static int class_user = -1;   /* split=half: the lower half's, in no region */

static FILE *out;                                      /* out=FILE */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER; /* marks and exit share it */

#if QEMU_PLUGIN_VERSION >= 2
static struct qemu_plugin_scoreboard *board; /* a struct counts per vCPU */

static qemu_plugin_u64 counter(int cls)
{
	return qemu_plugin_scoreboard_u64_in_struct(board, struct counts, n[cls]);
}

static void add_count(struct qemu_plugin_tb *tb, int cls, uint64_t n)
{
	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, counter(cls), n);
}

static int vcpus_counted(void) { return qemu_plugin_num_vcpus(); }

/* A vCPU's count of a class; vcpu < 0: every vCPU's. */
static uint64_t read_count(int vcpu, int cls)
{
	return vcpu < 0 ? qemu_plugin_u64_sum(counter(cls)) : qemu_plugin_u64_get(counter(cls), (unsigned)vcpu);
}

static void counts_init(const qemu_info_t *info)
{
	(void)info;
	board = qemu_plugin_scoreboard_new(sizeof(struct counts));
}
#else
/* A vCPU's counters, alone on its cache lines: its thread is their only writer. */
struct vcpu_counts {
	struct counts c;              /* its instructions, by class */
} __attribute__((aligned(64)));

static struct counts totals;                  /* the inline adds of a one-vCPU guest */
static struct vcpu_counts per_vcpu[MAX_VCPUS]; /* the calls' adds, with more vCPUs */
static int nvcpus = 1;                        /* the guest's vCPUs (at most MAX_VCPUS) */

/* A block ran on vcpu: udata holds its class and its count of them. */
static void block_ran(unsigned int vcpu, void *udata)
{
	uintptr_t word = (uintptr_t)udata;
	if (vcpu < MAX_VCPUS)
		per_vcpu[vcpu].c.n[word & 0xff] += word >> 8;
}

static void add_count(struct qemu_plugin_tb *tb, int cls, uint64_t n)
{
	if (nvcpus == 1)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &totals.n[cls], n);
	else
		qemu_plugin_register_vcpu_tb_exec_cb(tb, block_ran, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)((n << 8) | (unsigned)cls));
}

static int vcpus_counted(void) { return nvcpus; }

static uint64_t read_count(int vcpu, int cls)
{
	if (nvcpus == 1)
		return __atomic_load_n(&totals.n[cls], __ATOMIC_RELAXED);
	if (vcpu >= 0)
		return __atomic_load_n(&per_vcpu[vcpu].c.n[cls], __ATOMIC_RELAXED);
	uint64_t sum = 0;
	for (int v = 0; v < nvcpus; v++)
		sum += __atomic_load_n(&per_vcpu[v].c.n[cls], __ATOMIC_RELAXED);
	return sum;
}

static void counts_init(const qemu_info_t *info)
{
	int n = info->system_emulation ? info->system.smp_vcpus : 1;
	nvcpus = n < 1 ? 1 : n > MAX_VCPUS ? MAX_VCPUS : n;
	if (n > MAX_VCPUS)
		fprintf(stderr, "insncount: %d vCPUs; those past %d are not counted\n", n, MAX_VCPUS);
}
#endif

static int class_of(uint64_t vaddr)
{
	for (int i = 0; i < nranges; i++)
		if (vaddr >= ranges[i].start && vaddr < ranges[i].end)
			return ranges[i].cls;
	if (class_other >= 0)
		return class_other;
	return vaddr >> 63 ? class_kernel : class_user;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	uint64_t per_class[MAX_CLASSES] = { 0 };
	size_t n = qemu_plugin_tb_n_insns(tb);
	for (size_t i = 0; i < n; i++)
		per_class[class_of(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i)))]++;
	for (int c = 0; c < nclasses; c++)
		if (per_class[c])
			add_count(tb, c, per_class[c]);
}

/* "LABEL: total N, NAME N, ..." of one vCPU's counts (vcpu < 0: all, and
 * suffix ""), as they stand. */
static void write_counts(const char *label, const char *suffix, int vcpu)
{
	uint64_t v[MAX_CLASSES], total = 0;
	for (int c = 0; c < nclasses; c++) {
		v[c] = read_count(vcpu, c);
		total += v[c];
	}
	fprintf(out, "%s%s: total %" PRIu64, label, suffix, total);
	for (int c = 0; c < nclasses; c++)
		fprintf(out, ", %s %" PRIu64, class_names[c], v[c]);
	fputc('\n', out);
}

/* A mark: each vCPU's line first when there are several, then the sum's,
 * which a reader waits for. */
static void write_mark(const char *label)
{
	pthread_mutex_lock(&out_lock);
	int n = vcpus_counted();
	for (int v = 0; n > 1 && v < n; v++) {
		char suffix[16];
		snprintf(suffix, sizeof(suffix), ".vcpu%d", v);
		write_counts(label, suffix, v);
	}
	write_counts(label, "", -1);
	fflush(out);
	pthread_mutex_unlock(&out_lock);
}

static bool label_ok(const char *s)
{
	if (!*s || strlen(s) > LABEL_MAX_LEN)
		return false;
	for (; *s; s++)
		if (!(*s == '-' || *s == '_' || *s == '.' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return false;
	return true;
}

/* The ctl FIFO's reader: a mark per line, for as long as QEMU runs. Opened
 * read-write, so the open does not wait for a writer and the reads never
 * see end-of-file between two writers. */
static void *ctl_loop(void *arg)
{
	int fd = open((const char *)arg, O_RDWR | O_CLOEXEC);
	FILE *in = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!in) {
		fprintf(stderr, "insncount: cannot open ctl %s: %s\n", (const char *)arg, strerror(errno));
		return NULL;
	}
	char line[256];
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\r\n")] = '\0';
		write_mark(label_ok(line) ? line : "bad-label");
	}
	return NULL;
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	write_mark("exit");
}

static int add_class(const char *name, size_t len)
{
	for (int c = 0; c < nclasses; c++)
		if (strlen(class_names[c]) == len && !strncmp(class_names[c], name, len))
			return c;
	if (nclasses == MAX_CLASSES || len == 0 || len >= NAME_MAX_LEN)
		return -1;
	memcpy(class_names[nclasses], name, len);
	class_names[nclasses][len] = '\0';
	return nclasses++;
}

/* region=NAME:START-END */
static bool parse_region(const char *v)
{
	const char *colon = strchr(v, ':');
	char *dash, *end;
	if (!colon || nranges == MAX_RANGES)
		return false;
	uint64_t start = strtoull(colon + 1, &dash, 16);
	if (*dash != '-')
		return false;
	uint64_t stop = strtoull(dash + 1, &end, 16);
	int cls = add_class(v, (size_t)(colon - v));
	if (*end || stop <= start || cls < 0)
		return false;
	ranges[nranges++] = (struct range){ start, stop, cls };
	return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	const char *out_path = NULL, *ctl_path = NULL;
	bool split = false;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strncmp(a, "out=", 4)) {
			out_path = a + 4;
		} else if (!strncmp(a, "ctl=", 4)) {
			ctl_path = a + 4;
		} else if (!strncmp(a, "region=", 7)) {
			if (!parse_region(a + 7)) {
				fprintf(stderr, "insncount: bad region '%s' (NAME:START-END in hex, at most %d)\n", a + 7,
					MAX_RANGES);
				return -1;
			}
		} else if (!strcmp(a, "split=half")) {
			split = true;
		} else {
			fprintf(stderr, "insncount: unknown argument '%s'\n", a);
			return -1;
		}
	}
	if (!out_path) {
		fprintf(stderr, "insncount: out=FILE is needed\n");
		return -1;
	}
	if (split) {
		class_kernel = add_class("kernel", 6);
		class_user = add_class("user", 4);
	} else {
		class_other = add_class("other", 5);
	}
	if (class_other < 0 && (class_kernel < 0 || class_user < 0)) {
		fprintf(stderr, "insncount: too many regions (at most %d names)\n", MAX_CLASSES - 2);
		return -1;
	}
	out = fopen(out_path, "a");
	if (!out) {
		fprintf(stderr, "insncount: cannot open %s: %s\n", out_path, strerror(errno));
		return -1;
	}
	fprintf(out, "# regions:");
	for (int i = 0; i < nranges; i++)
		fprintf(out, " %s %#" PRIx64 "-%#" PRIx64, class_names[ranges[i].cls], ranges[i].start, ranges[i].end);
	fprintf(out, "%s\n", nranges ? "" : " none");
	fflush(out);
	counts_init(info);
	if (ctl_path) {
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		char *path = strdup(ctl_path); /* QEMU's argv need not outlive the install */
		if (!path || pthread_create(&t, &attr, ctl_loop, path) != 0) {
			fprintf(stderr, "insncount: no thread for the ctl FIFO\n");
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
