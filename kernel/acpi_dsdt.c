/*
 * acpi_dsdt.c: the virtio-mmio devices a VMM describes in its DSDT (see
 * acpi.h), read from the table's AML without running any of it.
 *
 * Such a device is a Device object whose _HID is the string "LNRO0005",
 * with a _UID and a _CRS: a resource template (a Buffer) holding one
 * Memory32Fixed descriptor, its register window, and one Extended Interrupt
 * descriptor, its I/O APIC input. QEMU's microvm (with ACPI) and Firecracker
 * write exactly that, as Name objects with constant values, inside
 * Scope(\_SB).
 *
 * How the AML is walked. Structurally, term by term, as far as it can be
 * done without an interpreter: a term list is a sequence of terms, and a
 * term's length is known only by parsing it. The walk knows the terms a
 * VMM's DSDT is made of at the top of a scope or a device body: Scope and
 * Device (whose bodies it walks in turn), Name with a constant value
 * (integers, strings, buffers, packages), and the terms it can step over
 * whole because they carry their own package length (Method, If, Else,
 * While, Field, IndexField, BankField, Processor, PowerResource,
 * ThermalZone), or have a fixed shape (OperationRegion with constant
 * operands, Mutex, Event, Alias, External). Those cover every byte of
 * QEMU's and Firecracker's DSDTs. Where a term list holds an opcode it does
 * not know, the rest of that list (whose end is still known, from the
 * enclosing package length) is scanned byte by byte for a DeviceOp, and each
 * candidate is parsed as a Device like any other: a device after AML the
 * walk does not follow is still found, and a false candidate (the two bytes
 * 5B 82 inside some other term) would have to parse as a Device with a
 * LNRO0005 _HID and a sound _CRS to be taken. A pure scan for the _HID
 * string was not chosen: it cannot tell a device's own names from a nested
 * device's, nor where the device that owns them ends.
 *
 * Every length is checked against what remains of its enclosing package (or
 * of the table) before it is used: a package length, a name's segments, an
 * integer's bytes, a string's terminator, a buffer's size (acpi_aml.c) and
 * each resource descriptor's length (acpi_crs.c). Nesting is bounded (AML_DEPTH_MAX), so a hostile
 * table cannot exhaust the stack. Malformed AML stops the walk of the list
 * it is in (what follows it there cannot be located) and is noted; the
 * enclosing lists go on after their own packages.
 *
 * A LNRO0005 device is refused, with a reason, when its body is malformed,
 * when its _CRS is missing, a method or not a buffer, when its resource
 * template does not give one window and one level-triggered, active-high
 * interrupt (acpi_crs.c: the driver routes the line so, as QEMU describes
 * it; Firecracker describes its lines as edge-triggered, but also writes
 * virtio_mmio.device= entries, which the kernel uses first), when its window
 * fails the bounds of a register window (mmio_window_check), or when it
 * overlaps an earlier device's. Pure: built for the host too.
 */
#include <limits.h>
#include <string.h>
#include "acpi.h"
#include "acpi_aml.h"

#define AML_DEPTH_MAX 16 /* scopes and devices nested deeper are not read */

/* What a Device's body says of it. */
struct aml_device {
	char name[5];          /* the Device's last NameSeg */
	int hids;              /* _HID objects */
	bool hid_match;        /* a _HID is the string "LNRO0005" */
	bool uid_ok;           /* a _UID is an integer in 0..INT_MAX */
	long uid;              /* it, when uid_ok */
	int crss;              /* _CRS objects (names and methods) */
	bool crs_buffer;       /* the _CRS is a buffer whose bytes are crs_at.. */
	size_t crs_at, crs_len; /* its bytes within the table */
	const char *crs_why;   /* the _CRS is there but cannot be read: why */
	bool unfollowed;       /* its body holds AML the walk does not follow */
	const char *bad_why;   /* its body is malformed: the first reason */
	size_t bad_at;         /* and where */
};

/* The walk's state (every position is an offset into aml, every read
 * bounded by the end of the package being read, itself within the table). */
struct aml_reader {
	const uint8_t *aml;            /* the whole table */
	struct acpi_mmio_found *found; /* what is found goes here */
};

/* The first malformed place in the table, for the kernel's message. */
static void note_bad(struct aml_reader *r, size_t at, const char *why)
{
	if (!r->found->bad_why) {
		r->found->bad_why = why;
		r->found->bad_at = at;
	}
}

static void walk(struct aml_reader *r, size_t p, size_t end, int depth, struct aml_device *owner);

/* A package length then a name, as Scope, Device and Method begin. */
static enum aml_step named_package(const struct aml_reader *r, size_t *q, size_t end, size_t *pkg_end,
				   struct aml_name *n, const char **why)
{
	if (aml_pkg_length(r->aml, q, end, pkg_end, why) != AML_OK)
		return AML_BAD;
	return aml_name_string(r->aml, q, *pkg_end, n, why);
}

/* A malformed place: in a device's body it is the device's (judged with the
 * device), elsewhere the table's. */
static void bad_at(struct aml_reader *r, struct aml_device *owner, size_t at, const char *why)
{
	if (owner && !owner->bad_why) {
		owner->bad_why = why;
		owner->bad_at = at;
	} else if (!owner) {
		note_bad(r, at, why);
	}
}

static bool is_virtio_hid(const struct aml_reader *r, const struct aml_value *v)
{
	static const char hid[] = ACPI_VIRTIO_MMIO_HID;
	return v->kind == AML_VALUE_STRING && v->len == sizeof hid - 1 &&
	       memcmp(r->aml + v->at, hid, v->len) == 0;
}

/* A Name object in a device's body: the ones that describe the device. */
static void device_name(struct aml_reader *r, struct aml_device *d, const struct aml_name *n,
			const struct aml_value *v)
{
	if (!n->plain)
		return;
	if (!memcmp(n->last, "_HID", 5)) {
		d->hids++;
		d->hid_match |= is_virtio_hid(r, v);
	} else if (!memcmp(n->last, "_UID", 5)) {
		d->uid_ok = v->kind == AML_VALUE_INTEGER && v->integer <= INT_MAX;
		d->uid = d->uid_ok ? (long)v->integer : -1;
	} else if (!memcmp(n->last, "_CRS", 5)) {
		d->crss++;
		d->crs_buffer = v->kind == AML_VALUE_BUFFER;
		d->crs_at = v->at;
		d->crs_len = v->len;
		d->crs_why = v->why ? v->why : "its _CRS is not a buffer";
	}
}

static void refuse(struct acpi_mmio_found *f, const char *name, const char *why)
{
	if (f->nrefused < ACPI_DSDT_REFUSED_MAX) {
		memcpy(f->refused[f->nrefused].name, name, 5);
		f->refused[f->nrefused].why = why;
	}
	f->nrefused++;
}

/* Whether a Device's body made it a virtio-mmio device, and which window. */
static void judge(struct aml_reader *r, const struct aml_device *d)
{
	struct acpi_mmio_found *f = r->found;
	if (!d->hid_match) {
		if (d->bad_why)
			note_bad(r, d->bad_at, d->bad_why);
		return;
	}
	struct mmio_window w = { .id = d->uid_ok ? d->uid : -1 };
	const char *why = NULL;
	if (d->bad_why)
		why = d->bad_why;
	else if (d->hids > 1)
		why = "more than one _HID";
	else if (d->crss == 0)
		why = d->unfollowed ? "no _CRS before AML the reader does not follow" : "no _CRS";
	else if (d->crss > 1)
		why = "more than one _CRS";
	else if (!d->crs_buffer)
		why = d->crs_why;
	else
		why = acpi_crs_mmio_window(r->aml + d->crs_at, d->crs_len, &w);
	if (!why)
		why = mmio_window_check(&w);
	for (int i = 0; !why && i < f->count; i++)
		if (mmio_windows_overlap(&w, &f->windows[i]))
			why = "its window overlaps an earlier device's";
	if (why) {
		refuse(f, d->name, why);
	} else if (f->count < MMIO_WINDOWS_MAX) {
		f->windows[f->count] = w;
		memcpy(f->names[f->count], d->name, 5);
		f->count++;
	} else {
		f->beyond_max++;
	}
}

/* A Device whose body is [body, end): its own names read, nested objects
 * walked, then judged. */
static void device(struct aml_reader *r, const struct aml_name *n, size_t body, size_t end, int depth)
{
	struct aml_device d = { .uid = -1 };
	memcpy(d.name, n->last, 5);
	walk(r, body, end, depth + 1, &d);
	judge(r, &d);
}

/* The rest of a term list [p, end) past an opcode the walk does not follow:
 * every DeviceOp in it that parses as a Device is read as one, and the scan
 * goes on after its package. */
static void scan(struct aml_reader *r, size_t p, size_t end, int depth)
{
	r->found->unfollowed++;
	while (end - p >= 2) {
		size_t q = p + 2, pkg_end;
		struct aml_name n;
		const char *why;
		if (r->aml[p] == AML_EXT_PREFIX && r->aml[p + 1] == AML_DEVICE_OP &&
		    named_package(r, &q, end, &pkg_end, &n, &why) == AML_OK) {
			device(r, &n, q, pkg_end, depth);
			p = pkg_end;
		} else {
			p++;
		}
	}
}

/* A term whose opcode is AML_EXT_PREFIX, op; *p is past both bytes. */
static enum aml_step ext_term(struct aml_reader *r, uint8_t op, size_t *p, size_t end, int depth,
			  const char **why)
{
	size_t q = *p, pkg_end;
	struct aml_name n;
	uint64_t ignored;
	enum aml_step s;
	switch (op) {
	case AML_DEVICE_OP:
		if (named_package(r, &q, end, &pkg_end, &n, why) != AML_OK)
			return AML_BAD;
		device(r, &n, q, pkg_end, depth);
		*p = pkg_end;
		return AML_OK;
	case AML_FIELD_OP:
	case AML_INDEX_FIELD_OP:
	case AML_BANK_FIELD_OP:
	case AML_PROCESSOR_OP:
	case AML_POWER_RES_OP:
	case AML_THERMAL_ZONE_OP:
		if (aml_pkg_length(r->aml, &q, end, &pkg_end, why) != AML_OK)
			return AML_BAD;
		*p = pkg_end;
		return AML_OK;
	case AML_REGION_OP: /* name, space, then offset and length: constants, or not followed */
		if (aml_name_string(r->aml, &q, end, &n, why) != AML_OK)
			return AML_BAD;
		if (q >= end) {
			*why = "an OperationRegion runs past its package";
			return AML_BAD;
		}
		q++;
		for (int i = 0; i < 2; i++)
			if ((s = aml_integer(r->aml, &q, end, &ignored, why)) != AML_OK)
				return s;
		*p = q;
		return AML_OK;
	case AML_MUTEX_OP: /* name, sync level */
		if (aml_name_string(r->aml, &q, end, &n, why) != AML_OK)
			return AML_BAD;
		if (q >= end) {
			*why = "a Mutex runs past its package";
			return AML_BAD;
		}
		*p = q + 1;
		return AML_OK;
	case AML_EVENT_OP:
		if (aml_name_string(r->aml, &q, end, &n, why) != AML_OK)
			return AML_BAD;
		*p = q;
		return AML_OK;
	default:
		return AML_UNKNOWN;
	}
}

/* One term at *p (its opcode's first byte). */
static enum aml_step term(struct aml_reader *r, size_t *p, size_t end, int depth,
			  struct aml_device *owner, const char **why)
{
	size_t q = *p + 1, pkg_end;
	struct aml_name n, n2;
	struct aml_value v;
	switch (r->aml[*p]) {
	case AML_SCOPE_OP: /* its objects are the scope's, not the owner's */
		if (named_package(r, &q, end, &pkg_end, &n, why) != AML_OK)
			return AML_BAD;
		walk(r, q, pkg_end, depth + 1, NULL);
		*p = pkg_end;
		return AML_OK;
	case AML_NAME_OP: {
		if (aml_name_string(r->aml, &q, end, &n, why) != AML_OK)
			return AML_BAD;
		enum aml_step s = aml_data_object(r->aml, &q, end, &v, why);
		if (s != AML_OK)
			return s;
		if (owner)
			device_name(r, owner, &n, &v);
		*p = q;
		return AML_OK;
	}
	case AML_METHOD_OP: /* a _CRS method cannot be read without running it */
		if (named_package(r, &q, end, &pkg_end, &n, why) != AML_OK)
			return AML_BAD;
		if (owner && n.plain && !memcmp(n.last, "_CRS", 5)) {
			owner->crss++;
			owner->crs_buffer = false;
			owner->crs_why = "its _CRS is a method (only a constant resource template is read)";
		}
		*p = pkg_end;
		return AML_OK;
	case AML_IF_OP:
	case AML_ELSE_OP:
	case AML_WHILE_OP:
	case AML_BUFFER_OP:
	case AML_PACKAGE_OP:
	case AML_VAR_PACKAGE_OP:
		if (aml_pkg_length(r->aml, &q, end, &pkg_end, why) != AML_OK)
			return AML_BAD;
		*p = pkg_end;
		return AML_OK;
	case AML_ALIAS_OP:
		if (aml_name_string(r->aml, &q, end, &n, why) != AML_OK ||
		    aml_name_string(r->aml, &q, end, &n2, why) != AML_OK)
			return AML_BAD;
		*p = q;
		return AML_OK;
	case AML_EXTERNAL_OP: /* name, object type, argument count */
		if (aml_name_string(r->aml, &q, end, &n, why) != AML_OK)
			return AML_BAD;
		if (end - q < 2) {
			*why = "an External runs past its package";
			return AML_BAD;
		}
		*p = q + 2;
		return AML_OK;
	case AML_EXT_PREFIX: {
		if (q >= end) {
			*why = "an extended opcode runs past its package";
			return AML_BAD;
		}
		uint8_t op = r->aml[q++];
		enum aml_step s = ext_term(r, op, &q, end, depth, why);
		if (s == AML_OK)
			*p = q;
		return s;
	}
	default:
		return AML_UNKNOWN;
	}
}

/* The term list [p, end), a scope's or (owner set) a device's body. */
static void walk(struct aml_reader *r, size_t p, size_t end, int depth, struct aml_device *owner)
{
	if (depth > AML_DEPTH_MAX) {
		bad_at(r, owner, p, "scopes and devices nested deeper than 16");
		return;
	}
	while (p < end) {
		const char *why = NULL;
		size_t at = p;
		enum aml_step s = term(r, &p, end, depth, owner, &why);
		if (s == AML_UNKNOWN) {
			if (owner)
				owner->unfollowed = true;
			scan(r, at, end, depth);
			return;
		}
		if (s == AML_BAD) {
			bad_at(r, owner, at, why);
			return;
		}
	}
}

int acpi_dsdt_virtio_mmio(const uint8_t *dsdt, size_t len, struct acpi_mmio_found *found)
{
	*found = (struct acpi_mmio_found){ 0 };
	if (len < ACPI_HEADER_LEN)
		return 0;
	struct aml_reader r = { .aml = dsdt, .found = found };
	walk(&r, ACPI_HEADER_LEN, len, 0, NULL);
	return found->count;
}
