/*
 * options.c: the table of kernel options (see options.h), the boot's check
 * of the command line against it, and the typed accessors. A default that
 * depends on the machine (the hypervisor, the CPU) is computed by the code
 * that reads the option; its entry says so in default_by, and the accessor
 * for a number makes the reader supply it (kopt_number_or), so the table
 * and the code cannot disagree about who decides.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cmdline.h"
#include "kernel.h"
#include "options.h"
#include "switches.h"

/* Bounds on the microsecond options: a second, and the transmit watchdog's
 * ten (it exists to be long). */
#define US_MAX          1000000
#define WATCHDOG_US_MAX 10000000
/* Fault injection: one in N, N at most this. */
#define ONE_IN_MAX      1000000

const struct kopt_spec kernel_options[KOPT_COUNT] = {
	[KOPT_VERBOSE] = {
		.name = "verbose", .kind = KOPT_FLAG,
		.doc = "at boot, print the PCI devices, RAM, heap limit, TSC rate and boot time, the "
		       "memory layout, the CPU's brand, hypervisor and features, and the executor's "
		       "spin and relax (the loader reads it too)",
		.read_in = "kernel/main.c, kernel/executor.c",
	},
	[KOPT_QUIET] = {
		.name = "quiet", .kind = KOPT_FLAG,
		.doc = "no counters at exit (Ctrl-T still prints them)",
		.read_in = "kernel/syscalls.c",
	},
	[KOPT_PV_EOI] = {
		.name = "pv_eoi", .kind = KOPT_NUMBER, .min = 0, .max = 1, .number_default = 1,
		.doc = "0 keeps the EOI register write where KVM offers its paravirtual EOI; "
		       "without KVM's offer the option changes nothing",
		.read_in = "kernel/lapic.c",
	},
	[KOPT_X2APIC] = {
		.name = "x2apic", .kind = KOPT_NUMBER, .min = 0, .max = 1, .number_default = 1,
		.doc = "under KVM, where the CPU has x2APIC, the local APIC is switched to x2APIC "
		       "mode (its registers become MSRs) after the command line; 0 keeps xAPIC "
		       "(MMIO). Never used under TCG",
		.read_in = "kernel/lapic.c",
	},
	[KOPT_SPIN_US] = {
		.name = "spin_us", .kind = KOPT_NUMBER, .min = 0, .max = US_MAX,
		.number_default = SPIN_NS_DEFAULT / 1000, .unit = "microseconds",
		.doc = "how long a waiting call spins on the device before it parks; 0 parks at "
		       "once. Only with `SW_SPIN_THEN_PARK` on (the naive wait backs off instead); "
		       "the default is the build's `SPIN_NS_DEFAULT`",
		.read_in = "kernel/executor.c",
	},
	[KOPT_SPIN_MAX_US] = {
		.name = "spin_max_us", .kind = KOPT_NUMBER, .min = 0, .max = US_MAX,
		.default_by = "2000 (`SPIN_MAX_NS_DEFAULT`), but `spin_us` under TCG",
		.unit = "microseconds",
		.doc = "what the spin may grow to: a wait the device ended within this bound "
		       "doubles the spin, a longer wait halves it back toward `spin_us` "
		       "(`kernel/spinwin.h`); at or below `spin_us` the spin is fixed",
		.read_in = "kernel/executor.c",
	},
	[KOPT_SPIN_RELAX] = {
		.name = "spin_relax", .kind = KOPT_WORD,
		.words = (const char *const[]){ "pause", "barrier", NULL },
		.default_by = "`barrier` under TCG, else `pause`",
		.doc = "what the spin does between two looks at the ring: PAUSE, or a compiler "
		       "barrier",
		.read_in = "kernel/executor.c",
	},
	[KOPT_IP] = {
		.name = "ip", .kind = KOPT_ADDRESS, .default_by = "none: DHCP",
		.doc = "a static address; without it the kernel asks DHCP and waits 10 s at most "
		       "for a lease, then says so",
		.read_in = "net/net.c",
	},
	[KOPT_MASK] = {
		.name = "mask", .kind = KOPT_ADDRESS, .text_default = "255.255.255.0",
		.doc = "the netmask of a static address",
		.read_in = "net/net.c",
	},
	[KOPT_GW] = {
		.name = "gw", .kind = KOPT_ADDRESS, .text_default = "0.0.0.0",
		.doc = "the default gateway of a static address (0.0.0.0: none)",
		.read_in = "net/net.c",
	},
	[KOPT_COPY] = {
		.name = "copy", .kind = KOPT_WORD,
		.words = (const char *const[]){ "words", "movsb", "libc", NULL },
		.default_by = "`words` under TCG; elsewhere `movsb` where the CPU has ERMS, else `words`",
		.doc = "the data path's byte copy (lwIP's copies and the send buffer's): 8-byte "
		       "moves with an overlapping last one, one `rep movsb`, or newlib's memcpy",
		.read_in = "net/copy.c",
	},
	[KOPT_ACK_MERGE] = {
		.name = "ack_merge", .kind = KOPT_NUMBER, .min = 0, .max = 1, .number_default = 1,
		.doc = "1: pure ACKs made while a burst is taken in leave merged, one per "
		       "connection, and wait for room where the ring is full; 0: each leaves as "
		       "made, and a full ring drops it",
		.read_in = "net/netif_ack.c",
	},
	[KOPT_VNET_OFFLOAD] = {
		.name = "vnet_offload", .kind = KOPT_WORD,
		.words = (const char *const[]){ "all", "csum", "0", NULL }, .text_default = "all",
		.doc = "which offloads the driver takes of those the device offers: all, the "
		       "checksums but no TSO, or none",
		.read_in = "drivers/virtio/virtio_net.c",
	},
	[KOPT_VNET_TX_BATCH] = {
		/* The range is VNET_TX_BATCH_NONE..VNET_TX_BATCH_HOLD (drivers/virtio/virtio.h). */
		.name = "vnet_tx_batch", .kind = KOPT_NUMBER, .min = 0, .max = 3, .number_default = 3,
		.doc = "which polls publish their frames with one notify decision: 0 none, 1 every "
		       "poll, 2 polls that begin with a burst, 3 bursts and the notify hold",
		.read_in = "drivers/virtio/virtio_net.c, vnet_tx.c",
	},
	[KOPT_VNET_REPAIR] = {
		.name = "vnet_repair", .kind = KOPT_NUMBER, .min = 0, .max = 1, .number_default = 1,
		.doc = "0 turns off the repair of notifications the rings show are owed, and the "
		       "register read before a park (the counters stay)",
		.read_in = "drivers/virtio/virtio_net.c",
	},
	[KOPT_VNET_BARRIER] = {
		.name = "vnet_barrier", .kind = KOPT_WORD,
		.words = (const char *const[]){ "read", "fence", NULL },
		.default_by = "`read` under TCG, else `fence`",
		.doc = "how the last look at the receive ring before a park is ordered after the "
		       "interrupt is turned on: a fence and a device register read, or the fence "
		       "alone. Only with `vnet_repair` on",
		.read_in = "drivers/virtio/virtio_net.c",
	},
	[KOPT_VNET_TX_HOLD_US] = {
		.name = "vnet_tx_hold_us", .kind = KOPT_NUMBER, .min = -1, .max = US_MAX,
		.default_by = "0 (off) under TCG, else -1 (the executor's spin window)",
		.unit = "microseconds",
		.doc = "how long a poll's reply may hold its notify for the next poll's reply to "
		       "join it (one notify for both); a hold nothing joined makes the next 1, 2, "
		       "4 ... 1024 replies decide at once; 0 off, -1 the spin window",
		.read_in = "drivers/virtio/virtio_net.c, vnet_tx.c",
	},
	[KOPT_VNET_TX_WATCHDOG_US] = {
		.name = "vnet_tx_watchdog_us", .kind = KOPT_NUMBER, .min = 0, .max = WATCHDOG_US_MAX,
		.default_by = "2000 under TCG, else 50000", .unit = "microseconds",
		.doc = "how long the transmit ring may stand still with frames outstanding before "
		       "the driver notifies the device again; also bounds a park while frames are "
		       "outstanding; 0 means 2000",
		.read_in = "drivers/virtio/virtio_net.c",
	},
	[KOPT_VNET_RX_LEND] = {
		.name = "vnet_rx_lend", .kind = KOPT_NUMBER, .min = 0, .max = 1, .number_default = 1,
		.doc = "0 makes the stack copy every received frame into pool pbufs instead of "
		       "borrowing the driver's buffers (and allocates no reserve)",
		.read_in = "drivers/virtio/virtio_net.c, vnet_rx.c, net/netif.c",
	},
	[KOPT_VNET_DROP_KICKS] = {
		.name = "vnet_drop_kicks", .kind = KOPT_NUMBER, .min = 0, .max = ONE_IN_MAX,
		.number_default = 0,
		.doc = "fault injection: leave one in N notifications unsent, as a lost one (counted "
		       "`kicks dropped`); 0 off",
		.read_in = "drivers/virtio/virtio_net.c",
	},
	[KOPT_VNET_DROP_RX] = {
		.name = "vnet_drop_rx", .kind = KOPT_NUMBER, .min = 0, .max = ONE_IN_MAX,
		.number_default = 0,
		.doc = "fault injection: drop one in N received frames (counted `injected`); 0 off",
		.read_in = "drivers/virtio/virtio_net.c, vnet_rx.c",
	},
	[KOPT_VNET_DROP_TX] = {
		.name = "vnet_drop_tx", .kind = KOPT_NUMBER, .min = 0, .max = ONE_IN_MAX,
		.number_default = 0,
		.doc = "fault injection: drop one in N frames to send (counted `injected`); 0 off",
		.read_in = "drivers/virtio/virtio_net.c, vnet_tx.c",
	},
	[KOPT_CLOCK] = {
		/* The words are clock_sources.c's names, in its order, after auto. */
		.name = "clock", .kind = KOPT_WORD,
		.words = (const char *const[]){ "auto", "cpuid", "hypervisor", "kvmclock", "lapic",
						"pit", "hpet", "pmtimer", "pit0", NULL },
		.text_default = "auto",
		.doc = "where the TSC's rate comes from: `auto` takes the first of the others, in "
		       "their order, that gives one: CPUID leaf 0x15, the hypervisor leaf "
		       "0x40000010, kvmclock, then a calibration against the local APIC's timer "
		       "(under QEMU's TCG only), PIT channel 2, the HPET, the ACPI PM timer, PIT channel 0. A source named here "
		       "that the machine lacks refuses the boot (status 71), as does `auto` when "
		       "none answers",
		.read_in = "kernel/clock.c",
	},
	[KOPT_BOOT_TIME] = {
		.name = "boot_time", .kind = KOPT_FLAG,
		.doc = "when a socket first listens, print `kernel: listening N ns after the first "
		       "instruction`: the guest's own boot time by its TSC, from the loader's first "
		       "instruction (the kernel's under PVH) to the app's listen (make bench-boot)",
		.read_in = "net/socket.c",
	},
	[KOPT_SMP] = {
		/* The bound is percpu.h's SMP_MAX_CPUS. */
		.name = "smp", .kind = KOPT_NUMBER, .min = 0, .max = 64, .number_default = 1,
		.unit = "CPUs",
		.doc = "how many CPUs to run: the boot CPU and the first N-1 others the firmware's MADT "
		       "(else its MP table) lists, each started and parked, nothing ticking, until "
		       "work or an interrupt comes; 0 takes every CPU listed. 1, the default, reads no "
		       "table and starts none: no design uses a second CPU yet (docs/design/smp.md). "
		       "With `verbose`, one line says how many run and their APIC IDs",
		.read_in = "kernel/smp.c",
	},
};

/* ---- reading a value -------------------------------------------------------- */

/* A decimal integer, optionally negative, wholly: 0 with *n set, or -1 for
 * anything else (empty, other characters, beyond a long). */
static int parse_number(const char *s, long *n)
{
	bool negative = *s == '-';
	if (negative)
		s++;
	if (!*s)
		return -1;
	unsigned long magnitude = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		unsigned digit = (unsigned)(*s - '0');
		if (magnitude > ((unsigned long)LONG_MAX - digit) / 10)
			return -1;
		magnitude = magnitude * 10 + digit;
	}
	*n = negative ? -(long)magnitude : (long)magnitude;
	return 0;
}

/* Four decimal numbers 0..255 between dots, no more: 0 or -1. */
static int parse_address(const char *s)
{
	for (int part = 0; part < 4; part++) {
		if (part > 0 && *s++ != '.')
			return -1;
		int digits = 0, value = 0;
		for (; *s >= '0' && *s <= '9' && digits < 4; s++, digits++)
			value = value * 10 + (*s - '0');
		if (digits == 0 || digits > 3 || value > 255)
			return -1;
	}
	return *s ? -1 : 0;
}

static bool is_allowed_word(const struct kopt_spec *spec, const char *word)
{
	for (const char *const *w = spec->words; *w; w++)
		if (!strcmp(*w, word))
			return true;
	return false;
}

int kopt_value_check(const struct kopt_spec *spec, const char *value, char *why, size_t why_size)
{
	long n;
	switch (spec->kind) {
	case KOPT_FLAG:
		if (*value) {
			snprintf(why, why_size, "a flag, given without a value");
			return -1;
		}
		return 0;
	case KOPT_NUMBER:
		if (parse_number(value, &n) < 0) {
			snprintf(why, why_size, "not a decimal number");
			return -1;
		}
		if (n < spec->min || n > spec->max) {
			snprintf(why, why_size, "not in %ld..%ld", spec->min, spec->max);
			return -1;
		}
		return 0;
	case KOPT_WORD:
		if (!is_allowed_word(spec, value)) {
			size_t len = (size_t)snprintf(why, why_size, "not one of");
			for (const char *const *w = spec->words; *w && len < why_size; w++)
				len += (size_t)snprintf(why + len, why_size - len, "%s %s",
							w == spec->words ? "" : ",", *w);
			return -1;
		}
		return 0;
	case KOPT_ADDRESS:
		if (parse_address(value) < 0) {
			snprintf(why, why_size, "not an IPv4 address (four numbers 0..255 between dots)");
			return -1;
		}
		return 0;
	}
	snprintf(why, why_size, "an entry of no known kind");
	return -1;
}

static const struct kopt_spec *find_spec(const char *name)
{
	for (int i = 0; i < KOPT_COUNT; i++)
		if (!strcmp(kernel_options[i].name, name))
			return &kernel_options[i];
	return NULL;
}

int kernel_options_check(const struct cmdline *c, char *why, size_t why_size)
{
	for (int i = 0; i < c->nopts; i++) {
		const struct cmdline_opt *o = &c->opts[i];
		const struct kopt_spec *spec = find_spec(o->key);
		if (!spec) {
			snprintf(why, why_size, "unknown option \"%s\" (docs/kernel-options.md lists them)",
				 o->key);
			return -1;
		}
		char reason[128];
		if (kopt_value_check(spec, o->value, reason, sizeof reason) < 0) {
			if (*o->value)
				snprintf(why, why_size, "option %s=%s: %s (docs/kernel-options.md)", o->key,
					 o->value, reason);
			else
				snprintf(why, why_size, "option %s without a value: %s (docs/kernel-options.md)",
					 o->key, reason);
			return -1;
		}
	}
	return 0;
}

/* ---- the accessors ---------------------------------------------------------- */

static const struct kopt_spec *spec_of(enum kopt id)
{
	if ((unsigned)id >= KOPT_COUNT)
		panic("kernel option id %d: not in the table", (int)id);
	return &kernel_options[id];
}

/* The value given for spec's option, which must be of kind `kind`, or NULL
 * when absent; checked as at boot, so a reader never sees a value the
 * table refuses, whoever answered kernel_option(). */
static const char *given(const struct kopt_spec *spec, enum kopt_kind kind)
{
	if (spec->kind != kind)
		panic("kernel option %s is read as another kind than the table gives it", spec->name);
	const char *value = kernel_option(spec->name);
	char why[128];
	if (value && kopt_value_check(spec, value, why, sizeof why) < 0)
		panic("kernel option %s=%s: %s", spec->name, value, why);
	return value;
}

bool kopt_flag(enum kopt id)
{
	return given(spec_of(id), KOPT_FLAG) != NULL;
}

long kopt_number(enum kopt id)
{
	const struct kopt_spec *spec = spec_of(id);
	const char *value = given(spec, KOPT_NUMBER);
	if (spec->default_by)
		panic("kernel option %s: its reader computes the default (kopt_number_or)", spec->name);
	long n = spec->number_default;
	if (value)
		parse_number(value, &n);
	return n;
}

long kopt_number_or(enum kopt id, long computed)
{
	const struct kopt_spec *spec = spec_of(id);
	const char *value = given(spec, KOPT_NUMBER);
	if (!spec->default_by)
		panic("kernel option %s: the table holds its default (kopt_number)", spec->name);
	long n = computed;
	if (value)
		parse_number(value, &n);
	return n;
}

const char *kopt_text(enum kopt id)
{
	const struct kopt_spec *spec = spec_of(id);
	const char *value = given(spec, spec->kind == KOPT_ADDRESS ? KOPT_ADDRESS : KOPT_WORD);
	return value ? value : spec->text_default;
}

bool kopt_is(enum kopt id, const char *word)
{
	const struct kopt_spec *spec = spec_of(id);
	const char *value = given(spec, KOPT_WORD);
	if (!is_allowed_word(spec, word))
		panic("kernel option %s: \"%s\" is not one of its words", spec->name, word);
	const char *text = value ? value : spec->text_default;
	return text && !strcmp(text, word);
}
