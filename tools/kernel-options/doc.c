/*
 * doc.c: docs/kernel-options.md from the kernel's table of options
 * (kernel/options.c): the rules of the command line, one row per option
 * (its values, default, what it does, which files read it), and where each
 * is explained. The table is the one source; the prose around it is here.
 */
#include <string.h>
#include "kernel/options.h"
#include "tools/kernel-options/doc.h"

static const char *const head[] = {
	"# Kernel options",
	"",
	"<!-- Generated from the table in kernel/options.c by tools/kernel-options",
	"     (make kernel-options-doc): edit the table, not this file. -->",
	"",
	"The kernel command line (QEMU's `-append`, `tools/qemu-run --append`) is",
	"kernel options before `--` and the application's argv after it:",
	"",
	"    tools/qemu-run --append 'ip=192.0.2.2 mask=255.255.255.0 gw=192.0.2.1 verbose -- -p 80 -s' \\",
	"        build/loader/loader.elf build/apps/httpd.elf",
	"",
	"An option is `key=value` or a bare `flag`; double quotes group a word",
	"(`\"key=a value\"`), and inside them `\\\"` and `\\\\` escape. When a key is",
	"given twice the last one counts. A line longer than 4,096 bytes, more than",
	"64 options or 64 arguments, an unterminated quote or an option with an",
	"empty name ends the boot with status 64 and a `kernel: bad command line:`",
	"line (`kernel/cmdline.c`).",
	"",
	"Every option is declared once, in the table in `kernel/options.c`, and the",
	"boot holds each one given against it: an unknown name, a flag given a",
	"value, a number that is not decimal or lies outside its range, a word",
	"not in its list or a malformed address ends the boot with status 64",
	"(`EX_USAGE`) and one line that names it, before anything reads an option:",
	"",
	"    kernel: unknown option \"vnet_tx_hold_uss\" (docs/kernel-options.md lists them)",
	"    kernel: option spin_us=-5: not in 0..1000000 (docs/kernel-options.md)",
	"",
	"Numbers are decimal, negative only where the range says so. Where a",
	"default depends on the hypervisor (TCG, or KVM and hardware) or the CPU,",
	"the code that reads the option computes it, as the table says; see",
	"[kvm.md](kvm.md#what-the-kernel-does-differently-under-kvm).",
	"",
	"This file is generated from the table (`make kernel-options-doc`, which",
	"runs `tools/kernel-options`); `make test-unit` fails when they differ.",
	"",
	"| option | values | default | what it does | read in |",
	"|---|---|---|---|---|",
	NULL,
};

static const char *const tail[] = {
	"",
	"Where each is explained:",
	"",
	"- `spin_us`, `spin_max_us`, `spin_relax`, `pv_eoi`, `x2apic`: [design/executor.md](design/executor.md),",
	"  [kvm.md](kvm.md#what-the-kernel-does-differently-under-kvm).",
	"- `vnet_tx_batch`, `vnet_tx_hold_us`, `vnet_repair`, `vnet_barrier`, `vnet_tx_watchdog_us`,",
	"  `vnet_drop_kicks`: [design/virtio-net.md](design/virtio-net.md#batching-and-holding-notifies),",
	"  [the lost notifications](design/virtio-net.md#lost-notifications).",
	"- `vnet_offload`, `vnet_drop_rx`, `vnet_drop_tx`:",
	"  [design/virtio-net.md](design/virtio-net.md#checksum-and-segmentation-offloads-tap).",
	"- `vnet_rx_lend`, `copy`: [design/virtio-net.md](design/virtio-net.md#receive-buffers-lent-to-the-stack).",
	"- `ip`, `mask`, `gw`: passt and QEMU's user networking give 10.0.2.15/24",
	"  with gateway 10.0.2.2 by DHCP; the benchmark's tap namespace puts the",
	"  guest at 192.0.2.2 ([running.md](running.md#network-back-ends)).",
	"",
	"The fault-injection and `vnet_repair=0` settings exist for the tests",
	"(15, 17, 19) and the experiments; a guest spec of the benchmark can carry",
	"any option (`NAME=uk:IMAGE+OPTION`, [benchmarks.md](benchmarks.md)).",
	"",
	"**Build-time switches are not options.** The design's switches",
	"(`SW_*` in `kernel/switches.h`) and the ideas' sizes (`SPIN_NS_DEFAULT`,",
	"`BACKLOG_MAX`, `SOCK_BUF_BYTES`) are compile-time: `make VARIANT=NAME`",
	"builds them ([writeup.md](writeup.md)).",
	"",
	"**The Linux guest** reads its own options from the same kind of command",
	"line: the kernel's (`console=ttyS0 quiet panic=-1`, and `idle=poll",
	"mitigations=off` for linux-tuned) and its init's (`ip=`, `gw=`, `mask=`,",
	"`app=NAME`, `busy_poll=US`); see [linux-guests.md](linux-guests.md).",
	NULL,
};

static void lines(FILE *out, const char *const *text)
{
	for (; *text; text++)
		fprintf(out, "%s\n", *text);
}

/* Text in a table cell: a `|` would end the cell. */
static void cell(FILE *out, const char *text)
{
	fputs("| ", out);
	for (; *text; text++) {
		if (*text == '|')
			fputc('\\', out);
		fputc(*text, out);
	}
	fputc(' ', out);
}

static void values_cell(FILE *out, const struct kopt_spec *spec)
{
	char buf[256];
	size_t len = 0;
	switch (spec->kind) {
	case KOPT_FLAG:
		snprintf(buf, sizeof buf, "flag");
		break;
	case KOPT_NUMBER:
		if (spec->min == 0 && spec->max == 1)
			snprintf(buf, sizeof buf, "0 or 1");
		else
			snprintf(buf, sizeof buf, "%s, %ld to %ld", spec->unit ? spec->unit : "N",
				 spec->min, spec->max);
		break;
	case KOPT_WORD:
		buf[0] = 0;
		for (const char *const *w = spec->words; *w && len < sizeof buf; w++)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s`%s`",
						w == spec->words ? "" : ", ", *w);
		break;
	case KOPT_ADDRESS:
		snprintf(buf, sizeof buf, "IPv4 address");
		break;
	}
	cell(out, buf);
}

static void default_cell(FILE *out, const struct kopt_spec *spec)
{
	char buf[64];
	if (spec->default_by)
		cell(out, spec->default_by);
	else if (spec->kind == KOPT_FLAG)
		cell(out, "off");
	else if (spec->kind == KOPT_NUMBER) {
		snprintf(buf, sizeof buf, "%ld", spec->number_default);
		cell(out, buf);
	} else if (spec->text_default) {
		snprintf(buf, sizeof buf, "`%s`", spec->text_default);
		cell(out, buf);
	} else
		cell(out, "none");
}

/* `a, b` as "`a`, `b`". */
static void read_in_cell(FILE *out, const char *files)
{
	char buf[256];
	size_t len = 0;
	buf[len++] = '`';
	for (; *files && len + 4 < sizeof buf; files++) {
		if (files[0] == ',' && files[1] == ' ') {
			memcpy(buf + len, "`, `", 4);
			len += 4;
			files++;
		} else {
			buf[len++] = *files;
		}
	}
	buf[len++] = '`';
	buf[len] = 0;
	cell(out, buf);
}

void kernel_options_write_doc(FILE *out)
{
	lines(out, head);
	for (int i = 0; i < KOPT_COUNT; i++) {
		const struct kopt_spec *spec = &kernel_options[i];
		char name[64];
		snprintf(name, sizeof name, "`%s`", spec->name);
		cell(out, name);
		values_cell(out, spec);
		default_cell(out, spec);
		cell(out, spec->doc);
		read_in_cell(out, spec->read_in);
		fputs("|\n", out);
	}
	lines(out, tail);
}
