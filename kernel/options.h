/*
 * options.h: the kernel options, declared once. Every option the kernel
 * reads has an entry in kernel_options[] (options.c): its name, the kind
 * of value it takes, its range or allowed words, its default and a line of
 * documentation, from which docs/kernel-options.md is generated
 * (tools/kernel-options, make kernel-options-doc).
 *
 * At boot, kernel_options_check() holds every option on the command line
 * against the table; an unknown name or a value outside what the entry
 * allows stops the boot (kernel/main.c). Readers then ask for a value by
 * its id through the typed accessors below, which return the value given
 * or the table's default and never fall back silently: asking for a value
 * the wrong way (a number of a flag, the table's default of an option whose
 * default the reader computes) is a panic. Pure: built for the host too.
 */
#ifndef KERNEL_OPTIONS_H
#define KERNEL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

struct cmdline;

/* One id per option: kernel_options[id] describes it. */
enum kopt {
	KOPT_VERBOSE,
	KOPT_QUIET,
	KOPT_PV_EOI,
	KOPT_X2APIC,
	KOPT_SPIN_US,
	KOPT_SPIN_MAX_US,
	KOPT_SPIN_RELAX,
	KOPT_IP,
	KOPT_MASK,
	KOPT_GW,
	KOPT_COPY,
	KOPT_ACK_MERGE,
	KOPT_VNET_OFFLOAD,
	KOPT_VNET_TX_BATCH,
	KOPT_VNET_REPAIR,
	KOPT_VNET_BARRIER,
	KOPT_VNET_TX_HOLD_US,
	KOPT_VNET_TX_WATCHDOG_US,
	KOPT_VNET_RX_LEND,
	KOPT_VNET_DROP_KICKS,
	KOPT_VNET_DROP_RX,
	KOPT_VNET_DROP_TX,
	KOPT_CLOCK,
	KOPT_BOOT_TIME,
	KOPT_SMP,
	KOPT_COUNT,
};

/* The kinds of value an option takes. */
enum kopt_kind {
	KOPT_FLAG,    /* a bare word: given or not; `name=...` is refused */
	KOPT_NUMBER,  /* a decimal integer in [min, max] */
	KOPT_WORD,    /* one of the entry's words */
	KOPT_ADDRESS, /* an IPv4 address, four decimal bytes: 192.0.2.1 */
};

struct kopt_spec {
	const char *name;          /* as written on the command line */
	enum kopt_kind kind;       /* what its value may be */
	long min, max;             /* KOPT_NUMBER: the range allowed, inclusive */
	long number_default;       /* KOPT_NUMBER: the value when absent (unless default_by) */
	const char *const *words;  /* KOPT_WORD: the values allowed, NULL-terminated */
	const char *text_default;  /* KOPT_WORD, KOPT_ADDRESS: the value when absent, or NULL */
	const char *default_by;    /* non-NULL: the reader decides what absence means (often by
				    * hypervisor); the documentation's words for it */
	const char *unit;          /* KOPT_NUMBER: what it counts ("microseconds"), or NULL */
	const char *doc;           /* what it does, for the documentation */
	const char *read_in;       /* the files that read it, for the documentation */
};

extern const struct kopt_spec kernel_options[KOPT_COUNT];

/* The value given for the option named key on the command line ("" for a
 * bare word), or NULL: the table's source, which kernel/main.c answers from
 * the parsed command line (host tests stand in for it). Readers use the
 * accessors below instead. */
const char *kernel_option(const char *key);

/* Holds every option of c against the table. 0, or -1 with a one-line
 * reason in why (naming the option and pointing at the documentation). */
int kernel_options_check(const struct cmdline *c, char *why, size_t why_size);

/* Whether one value is what the entry allows: 0, or -1 with the reason
 * (without the option's name) in why. */
int kopt_value_check(const struct kopt_spec *spec, const char *value, char *why, size_t why_size);

/* ---- the accessors: each panics when the entry is not of its kind ---------- */
bool kopt_flag(enum kopt id);                       /* KOPT_FLAG: given? */
long kopt_number(enum kopt id);                     /* KOPT_NUMBER with a table default */
long kopt_number_or(enum kopt id, long computed);   /* KOPT_NUMBER whose reader decides */
/* KOPT_WORD, KOPT_ADDRESS: the value given, else the table's default, else
 * NULL (the reader decides, or there is no value: `ip`, DHCP). */
const char *kopt_text(enum kopt id);
/* KOPT_WORD: kopt_text(id) is word; word must be one of the entry's. */
bool kopt_is(enum kopt id, const char *word);

#endif
