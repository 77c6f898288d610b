/*
 * mmio_windows.c: the virtio-mmio windows announced on the command line or
 * found in the ACPI DSDT (see mmio_windows.h). Each number is read with its
 * overflow checked before the arithmetic that grows it, and each window,
 * wherever it came from, is held to the bounds of a register window
 * (mmio_window_check) before anything maps it.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include "mmio_windows.h"

static struct mmio_window windows[MMIO_WINDOWS_MAX];
static int nwindows;

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* An unsigned number at *s: 0x and hex digits, or decimal digits (with
 * `hex_ok` false, decimal only). A leading 0 before more digits is refused:
 * Linux would read it as octal, we would not, and the two must agree. 0 with
 * *s moved past it, or -1 with the reason. */
static int parse_number(const char **s, uint64_t *v, bool hex_ok, const char **why)
{
	const char *p = *s;
	unsigned base = 10;
	if (hex_ok && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	uint64_t n = 0;
	const char *first = p;
	for (int d; (d = hex_digit(*p)) >= 0 && (unsigned)d < base; p++) {
		if (n > (UINT64_MAX - (uint64_t)d) / base) {
			*why = "a number too large";
			return -1;
		}
		n = n * base + (uint64_t)d;
	}
	if (p == first) {
		*why = "a number is missing";
		return -1;
	}
	if (base == 10 && first[0] == '0' && p - first > 1) {
		*why = "a number with a leading 0 (octal is not accepted)";
		return -1;
	}
	*s = p;
	*v = n;
	return 0;
}

const char *mmio_window_check(const struct mmio_window *w)
{
	if (w->size < MMIO_WINDOW_MIN || w->size > MMIO_WINDOW_MAX)
		return "a size outside 0x100..0x100000";
	if (w->base < MMIO_WINDOW_LOWEST || w->base > MMIO_WINDOW_LIMIT - w->size)
		return "an address outside 1 MiB..2^46";
	if (w->base % 4)
		return "an address not 4-byte aligned (the registers are 32-bit)";
	if (w->irq == 0 || w->irq > MMIO_IRQ_MAX)
		return "an IRQ outside 1..255";
	if (w->id < -1 || w->id > INT_MAX)
		return "an ID too large";
	return NULL;
}

bool mmio_windows_overlap(const struct mmio_window *a, const struct mmio_window *b)
{
	/* Both checked: they end below 2^46, so the sums cannot wrap. */
	return a->base < b->base + b->size && b->base < a->base + a->size;
}

int mmio_window_parse(const char *value, struct mmio_window *w, char *why, size_t why_size)
{
	const char *s = value, *reason = NULL;
	uint64_t size, base, irq, id = 0;
	bool has_id = false;
	if (parse_number(&s, &size, true, &reason) < 0)
		goto refuse;
	unsigned shift = 0;
	if (*s == 'K' || *s == 'k')
		shift = 10;
	else if (*s == 'M' || *s == 'm')
		shift = 20;
	else if (*s == 'G' || *s == 'g')
		shift = 30;
	if (shift)
		s++;
	if (size > (UINT64_MAX >> shift)) {
		reason = "a size too large";
		goto refuse;
	}
	size <<= shift;
	if (*s++ != '@') {
		reason = "no '@' after the size";
		goto refuse;
	}
	if (parse_number(&s, &base, true, &reason) < 0)
		goto refuse;
	if (*s++ != ':') {
		reason = "no ':' after the address";
		goto refuse;
	}
	if (parse_number(&s, &irq, false, &reason) < 0)
		goto refuse;
	if (*s == ':') {
		s++;
		if (parse_number(&s, &id, false, &reason) < 0)
			goto refuse;
		has_id = true;
	}
	if (*s) {
		reason = "characters after the entry";
		goto refuse;
	}
	if (id > INT_MAX) {
		reason = "an ID too large";
		goto refuse;
	}
	/* The IRQ is held to 1..255 before it is narrowed. */
	if (irq == 0 || irq > MMIO_IRQ_MAX) {
		reason = "an IRQ outside 1..255";
		goto refuse;
	}
	struct mmio_window parsed = {
		.base = base, .size = size, .irq = (unsigned)irq, .id = has_id ? (long)id : -1,
	};
	if ((reason = mmio_window_check(&parsed)) != NULL)
		goto refuse;
	*w = parsed;
	return 0;
refuse:
	snprintf(why, why_size, "%s", reason);
	return -1;
}

int mmio_windows_set(const char *const *values, int n, char *why, size_t why_size)
{
	struct mmio_window w[MMIO_WINDOWS_MAX];
	nwindows = 0;
	if (n < 0 || n > MMIO_WINDOWS_MAX) {
		snprintf(why, why_size, "more than %d virtio_mmio.device entries", MMIO_WINDOWS_MAX);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char reason[96];
		if (mmio_window_parse(values[i], &w[i], reason, sizeof reason) < 0) {
			snprintf(why, why_size, "virtio_mmio.device=%s: %s (expected SIZE@ADDR:IRQ[:ID])",
				 values[i], reason);
			return -1;
		}
		for (int j = 0; j < i; j++) {
			if (mmio_windows_overlap(&w[i], &w[j])) {
				snprintf(why, why_size, "virtio_mmio.device=%s: overlaps virtio_mmio.device=%s",
					 values[i], values[j]);
				return -1;
			}
		}
	}
	for (int i = 0; i < n; i++)
		windows[i] = w[i];
	nwindows = n;
	return 0;
}

int mmio_windows_use(const struct mmio_window *found, int n, char *why, size_t why_size)
{
	nwindows = 0;
	if (n < 0 || n > MMIO_WINDOWS_MAX) {
		snprintf(why, why_size, "more than %d virtio-mmio windows", MMIO_WINDOWS_MAX);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const char *reason = mmio_window_check(&found[i]);
		for (int j = 0; j < i && !reason; j++)
			if (mmio_windows_overlap(&found[i], &found[j]))
				reason = "overlaps an earlier window";
		if (reason) {
			snprintf(why, why_size, "virtio-mmio window 0x%llx (%llu bytes, IRQ %u): %s",
				 (unsigned long long)found[i].base, (unsigned long long)found[i].size,
				 found[i].irq, reason);
			return -1;
		}
	}
	for (int i = 0; i < n; i++)
		windows[i] = found[i];
	nwindows = n;
	return 0;
}

int mmio_window_count(void) { return nwindows; }

const struct mmio_window *mmio_window_get(int i)
{
	return i >= 0 && i < nwindows ? &windows[i] : NULL;
}
