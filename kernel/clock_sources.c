/*
 * clock_sources.c: the ways to learn the TSC's rate (see clock_sources.h).
 *
 * The exact sources read what the CPU or the hypervisor states: CPUID leaf
 * 0x15's ratio and crystal, the hypervisor leaf 0x40000010's kHz, KVM's
 * pvclock scale. The calibrations count TSC ticks while a reference of
 * known rate counts its own, over CALIBRATE_MS (1 ms for the local APIC's
 * nanosecond timer), CALIBRATE_ROUNDS times.
 * PIT channel 2 keeps the least rate: it times a count with RDTSCs on
 * either side, and under emulation the vCPU can be descheduled, or wait
 * for QEMU's lock on a port read, between the terminal count and the last
 * RDTSC, which only ever adds TSC ticks (seen: 3,432 MHz on a 2,445 MHz
 * host in one round, every guest timer stretched alike), so the least of
 * several is the truest. The counters (the local APIC's timer under TCG,
 * HPET, PM timer, PIT channel 0) are
 * read at both ends of a round alike, the quickest of a few reads each
 * timed by RDTSCs on either side, so the time a read takes (an exit to the
 * VMM under KVM, tens of microseconds nested) cancels out and a read the
 * vCPU was descheduled in is not used; the median of the rounds is kept.
 *
 * Each source checks that its device is there and behaves (the port gate
 * answers, the counter moves forward, at a sane step) and says why not; the
 * arithmetic is tsc_rate.c's, tested on the host.
 */
#include "acpi.h"
#include "arch.h"
#include "clock.h"
#include "clock_sources.h"
#include "kernel.h"
#include "tsc_rate.h"

#define PIT_HZ 1193182ULL
#define CALIBRATE_MS 5
#define CALIBRATE_ROUNDS 5
/* The local APIC's timer counts nanoseconds: a round a fifth as long as the
 * PIT's measures as finely. */
#define LAPIC_TCG_HZ   1000000000ULL
#define LAPIC_ROUND_US 1000
/* TSC ticks a reference may stand still before it is called absent: 20 ms
 * at the fastest TSC accepted (100 GHz), where every reference here moves
 * within 5 ms (PIT channel 2's whole count; the others tick every 0.84 us
 * at the slowest). A device that is not there (a port reading a constant)
 * is given up on in under a second at any real TSC rate, however slow each
 * read: under KVM a read of an unhandled port is an exit to the VMM. */
#define STALL_TSC_TICKS 2000000000ULL
/* Timed reads at each end of a counter's round; the quickest is used. */
#define SAMPLE_READS 8
/* Rounds tried in all for CALIBRATE_ROUNDS good ones. A round whose counter
 * seemed to jump is one the vCPU lost the CPU in for longer than half the
 * counter's range (27 ms of the PIT's 16 bits): a busy host, not a broken
 * counter, unless it happens round after round. */
#define CALIBRATE_TRIES (4 * CALIBRATE_ROUNDS)

#define CPUID_HYPERVISOR_BIT (1u << 31) /* CPUID.1:ECX: running under a hypervisor */
#define KVM_FEATURE_CLOCKSOURCE  0  /* kvmclock at MSR 0x12 */
#define KVM_FEATURE_CLOCKSOURCE2 3  /* kvmclock at MSR 0x4b564d01 */
#define MSR_KVM_SYSTEM_TIME      0x12
#define MSR_KVM_SYSTEM_TIME_NEW  0x4b564d01
#define PVCLOCK_READ_TRIES       1000

#define HPET_GCAP_ID       0x000 /* bits 63:32: the counter's period in fs */
#define HPET_GCAP_64BIT    (1ULL << 13)
#define HPET_CONFIG        0x010
#define HPET_CONFIG_ENABLE 1ULL
#define HPET_COUNTER       0x0f0
#define HPET_PERIOD_MAX_FS 100000000ULL /* the specification's bound: 100 ns */

static const char *const names[CLOCK_SOURCES] = {
	[CLOCK_CPUID] = "cpuid", [CLOCK_HYPERVISOR] = "hypervisor", [CLOCK_KVMCLOCK] = "kvmclock",
	[CLOCK_LAPIC] = "lapic", [CLOCK_PIT] = "pit", [CLOCK_HPET] = "hpet", [CLOCK_PMTIMER] = "pmtimer", [CLOCK_PIT0] = "pit0",
};
static const char *const whats[CLOCK_SOURCES] = {
	[CLOCK_CPUID] = "CPUID leaf 0x15",
	[CLOCK_HYPERVISOR] = "the hypervisor's CPUID leaf 0x40000010",
	[CLOCK_KVMCLOCK] = "KVM's pvclock scale",
	[CLOCK_LAPIC] = "local APIC timer calibration",
	[CLOCK_PIT] = "PIT channel 2 calibration",
	[CLOCK_HPET] = "HPET calibration",
	[CLOCK_PMTIMER] = "ACPI PM timer calibration",
	[CLOCK_PIT0] = "PIT channel 0 calibration",
};

const char *clock_source_name(enum clock_source s) { return (unsigned)s < CLOCK_SOURCES ? names[s] : "?"; }
const char *clock_source_what(enum clock_source s) { return (unsigned)s < CLOCK_SOURCES ? whats[s] : "?"; }

static struct clock_reading absent(const char *why)
{
	return (struct clock_reading){ 0, why };
}

/* ---- exact: what the CPU or the hypervisor states --------------------------- */

static struct clock_reading from_cpuid(void)
{
	uint32_t r[4], base_mhz = 0;
	cpuid(0, 0, r);
	uint32_t max_leaf = r[0];
	if (max_leaf < 0x15)
		return absent("the CPU has no leaf 0x15");
	if (max_leaf >= 0x16) {
		cpuid(0x16, 0, r);
		base_mhz = r[0] & 0xffff;
	}
	cpuid(0x15, 0, r);
	const char *why;
	int from_base;
	uint64_t hz = tsc_hz_from_cpuid15(r[0], r[1], r[2], base_mhz, &from_base, &why);
	if (!hz)
		return absent(why);
	return (struct clock_reading){ hz, from_base ? "no crystal rate: leaf 0x16's base, whole MHz" : NULL };
}

/* The highest hypervisor leaf, or 0 where no hypervisor says it runs us
 * (on bare metal leaf 0x40000000 repeats another leaf's values). */
static uint32_t hypervisor_max_leaf(void)
{
	uint32_t r[4];
	cpuid(1, 0, r);
	if (!(r[2] & CPUID_HYPERVISOR_BIT))
		return 0;
	cpuid(0x40000000, 0, r);
	return r[0] >= 0x40000000 && r[0] <= 0x400000ff ? r[0] : 0;
}

static struct clock_reading from_hypervisor(void)
{
	uint32_t r[4];
	if (hypervisor_max_leaf() < 0x40000010)
		return absent("no hypervisor leaf 0x40000010");
	cpuid(0x40000010, 0, r);
	const char *why;
	uint64_t hz = tsc_hz_from_khz(r[0], &why);
	return hz ? (struct clock_reading){ hz, NULL } : absent(why);
}

/* kvmclock's per-vCPU record, as KVM writes it (its layout is the ABI). */
struct pvclock_time_info {
	uint32_t version;           /* odd while KVM writes; read again if it changed */
	uint32_t pad0;              /* unused */
	uint64_t tsc_timestamp;     /* the TSC when system_time was taken */
	uint64_t system_time;       /* the host's nanoseconds at tsc_timestamp */
	uint32_t tsc_to_system_mul; /* ns = ((ticks << shift) * mul) >> 32 */
	int8_t tsc_shift;           /* negative: shift right */
	uint8_t flags;              /* bit 0: the TSC is stable across vCPUs */
	uint8_t pad[2];             /* unused */
} __attribute__((packed));

/* 32 bytes aligned to 32: within one page, as KVM requires. */
static volatile struct pvclock_time_info pvclock __attribute__((aligned(32)));

/* KVM's wall clock: the host's real time when kvmclock's system time was 0
 * (its layout is the ABI). */
struct pvclock_wall_clock {
	uint32_t version; /* odd while KVM writes */
	uint32_t sec;     /* seconds since 1970 */
	uint32_t nsec;    /* and nanoseconds */
} __attribute__((packed));

static volatile struct pvclock_wall_clock pvclock_wall __attribute__((aligned(16)));

/* What the kvmclock read left for the wall clock: real time at a TSC. */
static struct clock_realtime kvm_realtime;

struct clock_realtime clock_source_realtime(void) { return kvm_realtime; }

/*
 * The real time at the record's TSC from KVM's wall clock, one MSR write (an
 * exit KVM handles itself) where the CMOS RTC takes 18 port accesses, each
 * an exit to the VMM. Read like the record: an even version, the fields,
 * the same version; a time before 2000 is taken as no answer.
 */
#define MSR_KVM_WALL_CLOCK     0x11
#define MSR_KVM_WALL_CLOCK_NEW 0x4b564d00
#define WALL_CLOCK_EARLIEST    946684800ULL /* 2000-01-01 */

static void read_kvm_wall_clock(uint32_t msr, uint64_t system_time, uint64_t tsc)
{
	wrmsr(msr, (uint64_t)(uintptr_t)&pvclock_wall);
	for (int tries = 0; tries < PVCLOCK_READ_TRIES; tries++) {
		uint32_t version = pvclock_wall.version;
		__asm__ volatile("" ::: "memory");
		uint64_t sec = pvclock_wall.sec, nsec = pvclock_wall.nsec;
		__asm__ volatile("" ::: "memory");
		if (version & 1 || version != pvclock_wall.version) {
			cpu_relax();
			continue;
		}
		if (sec < WALL_CLOCK_EARLIEST || nsec >= NSEC_PER_SEC)
			return;
		kvm_realtime = (struct clock_realtime){
			.ns = sec * NSEC_PER_SEC + nsec + system_time, .tsc = tsc, .valid = true,
		};
		return;
	}
}

/*
 * kvmclock is asked for its scale once and stopped again: the kernel's
 * clock is the TSC alone (clock.c), so a record KVM kept updating would be
 * host writes into our memory, at each of its clock updates, that nobody
 * reads. The record is read the way its version field asks: an even
 * version, the fields, the same version again.
 */
static struct clock_reading from_kvmclock(void)
{
	if (cpu_hypervisor() != HYPERVISOR_KVM)
		return absent("not running under KVM");
	uint32_t features = cpu_kvm_features(), msr;
	if (features & (1u << KVM_FEATURE_CLOCKSOURCE2))
		msr = MSR_KVM_SYSTEM_TIME_NEW;
	else if (features & (1u << KVM_FEATURE_CLOCKSOURCE))
		msr = MSR_KVM_SYSTEM_TIME;
	else
		return absent("KVM does not offer kvmclock");
	wrmsr(msr, (uint64_t)(uintptr_t)&pvclock | 1); /* RAM is identity-mapped */
	uint32_t mul = 0, version = 0;
	uint64_t system_time = 0, tsc = 0;
	int8_t shift = 0;
	int tries;
	for (tries = 0; tries < PVCLOCK_READ_TRIES; tries++) {
		version = pvclock.version;
		__asm__ volatile("" ::: "memory"); /* x86 keeps loads in order; the compiler must too */
		mul = pvclock.tsc_to_system_mul;
		shift = pvclock.tsc_shift;
		system_time = pvclock.system_time;
		tsc = pvclock.tsc_timestamp;
		__asm__ volatile("" ::: "memory");
		if (version != 0 && !(version & 1) && version == pvclock.version)
			break;
		cpu_relax();
	}
	wrmsr(msr, 0);
	if (tries == PVCLOCK_READ_TRIES)
		return absent("KVM never left its record whole (version 0 or odd)");
	const char *why;
	uint64_t hz = tsc_hz_from_pvclock(mul, shift, &why);
	if (!hz)
		return absent(why);
	read_kvm_wall_clock(msr == MSR_KVM_SYSTEM_TIME_NEW ? MSR_KVM_WALL_CLOCK_NEW : MSR_KVM_WALL_CLOCK,
			    system_time, tsc);
	return (struct clock_reading){ hz, NULL };
}

/* ---- calibrations -------------------------------------------------------- */

/*
 * TSC ticks during CALIBRATE_MS of PIT channel 2 counting down in mode 0,
 * or 0 where the gate does not answer: OUT2 already high at the first read
 * (a port that reads all ones, as on microvm and Firecracker, which have
 * no speaker gate), or never high at all.
 */
static uint64_t pit2_round(void)
{
	uint16_t count = (uint16_t)(PIT_HZ * CALIBRATE_MS / 1000);
	uint8_t gate = inb(0x61);
	outb(0x61, (gate & ~0x02) | 0x01); /* speaker off, gate on */
	outb(0x43, 0xb0);                  /* channel 2, lo/hi byte, mode 0 */
	outb(0x42, count & 0xff);
	outb(0x42, count >> 8);
	gate = inb(0x61) & ~0x01;
	outb(0x61, gate); /* a rising gate edge restarts the count */
	outb(0x61, gate | 0x01);
	uint64_t t0 = rdtsc();
	unsigned long reads = 0;
	while (!(inb(0x61) & 0x20)) { /* OUT2 goes high at terminal count */
		/* The TSC looked at every 1024 reads only: the loop's pace, and so
		 * the rate measured, stays what it has always been. */
		if (!(++reads & 1023) && rdtsc() - t0 > STALL_TSC_TICKS)
			return 0;
		cpu_relax();
	}
	if (reads == 0)
		return 0;
	return (rdtsc() - t0) * 1000 / CALIBRATE_MS;
}

static struct clock_reading from_pit2(void)
{
	uint64_t hz = pit2_round();
	if (!hz)
		return absent("the speaker gate (port 0x61) does not answer");
	for (int i = 1; i < CALIBRATE_ROUNDS; i++) {
		uint64_t round = pit2_round();
		if (!round)
			return absent("the speaker gate (port 0x61) stopped answering");
		if (round < hz)
			hz = round;
	}
	if (hz < TSC_HZ_MIN || hz > TSC_HZ_MAX)
		return absent("it gives a rate outside 1 MHz..100 GHz");
	return (struct clock_reading){ hz, NULL };
}

/* A reference counter: read() gives its value, mask its width; it counts
 * down when down is set. */
struct counter {
	uint64_t (*read)(const struct counter *c); /* the counter's value now */
	uint64_t mask;      /* its width: values wrap at mask + 1 */
	bool down;          /* it counts down (the PIT) rather than up */
	uint64_t hz;        /* its rate, or 0 when period_fs gives it */
	uint64_t period_fs; /* its tick in femtoseconds (the HPET), or 0 */
	uint32_t round_us;  /* one round's length; 0: CALIBRATE_MS */
	uint16_t port;      /* the PM timer's I/O port */
	volatile uint8_t *regs; /* the HPET's registers */
};

/* A read of c timed by the TSC: the counter's value, with *tsc the TSC at
 * the read's middle and *width the TSC ticks the read took. */
static uint64_t timed_read(const struct counter *c, uint64_t *tsc, uint64_t *width)
{
	uint64_t before = rdtsc();
	uint64_t value = c->read(c);
	uint64_t after = rdtsc();
	*tsc = before + (after - before) / 2;
	*width = after - before;
	return value;
}

/* The quickest of SAMPLE_READS timed reads: its value and TSC. A read the
 * vCPU was descheduled in, or waited on a lock in, is a wide one, and its
 * value's moment is uncertain by its width; the quickest is certain to
 * within a few hundred TSC ticks. */
static uint64_t sample(const struct counter *c, uint64_t *tsc)
{
	uint64_t best = 0, best_width = UINT64_MAX;
	for (int i = 0; i < SAMPLE_READS; i++) {
		uint64_t at, width, value = timed_read(c, &at, &width);
		if (width < best_width)
			best = value, best_width = width, *tsc = at;
	}
	return best;
}

/* The counter's step from prev to now, in ticks; a step of half its range
 * or more is a counter gone backward or skipping, not time passing. */
static bool counter_step(const struct counter *c, uint64_t prev, uint64_t now, uint64_t *step)
{
	*step = (c->down ? prev - now : now - prev) & c->mask;
	return *step <= c->mask / 2;
}

/* One round: the TSC's rate over CALIBRATE_MS of c, or 0 with why (and
 * *jumped set when the counter seemed to jump: worth another round). Both
 * ends are sampled alike (the quickest of a few timed reads), so the time
 * a read takes cancels out. */
static uint64_t counter_round(const struct counter *c, const char **why, bool *jumped)
{
	*jumped = false;
	uint64_t round_us = c->round_us ? c->round_us : CALIBRATE_MS * 1000;
	uint64_t target = c->hz ? c->hz * round_us / 1000000
				: 1000000000ULL * round_us / c->period_fs;
	uint64_t t0, t1, step, total = 0;
	uint64_t prev = sample(c, &t0), moved = rdtsc();
	while (total < target) {
		uint64_t now = c->read(c), at = rdtsc();
		if (!counter_step(c, prev, now, &step)) {
			*why = "its counter jumps (backward, or past half its range)";
			*jumped = true;
			return 0;
		}
		if (step)
			moved = at;
		else if (at - moved > STALL_TSC_TICKS) {
			*why = "its counter does not count";
			return 0;
		}
		total += step;
		prev = now;
	}
	uint64_t last = sample(c, &t1);
	if (!counter_step(c, prev, last, &step)) {
		*why = "its counter jumps (backward, or past half its range)";
		*jumped = true;
		return 0;
	}
	total += step;
	return c->hz ? tsc_hz_from_count(t1 - t0, total, c->hz, why)
		     : tsc_hz_from_period(t1 - t0, total, c->period_fs, why);
}

/* The median of CALIBRATE_ROUNDS good rounds. Absent when a round fails
 * other than by a jump, or when CALIBRATE_TRIES rounds did not give enough
 * good ones. */
static struct clock_reading calibrate(const struct counter *c)
{
	const char *why = NULL;
	uint64_t rounds[CALIBRATE_ROUNDS];
	int i = 0;
	for (int tries = 0; i < CALIBRATE_ROUNDS; tries++) {
		if (tries == CALIBRATE_TRIES)
			return absent(why);
		bool jumped;
		uint64_t hz = counter_round(c, &why, &jumped);
		if (!hz && jumped)
			continue;
		if (!hz)
			return absent(why);
		int j = i++; /* insertion: rounds[0..i) stay sorted */
		for (; j > 0 && rounds[j - 1] > hz; j--)
			rounds[j] = rounds[j - 1];
		rounds[j] = hz;
	}
	return (struct clock_reading){ rounds[CALIBRATE_ROUNDS / 2], NULL };
}

static uint64_t hpet_read(const struct counter *c)
{
	return *(volatile uint64_t *)(c->regs + HPET_COUNTER);
}

static struct clock_reading from_hpet(uint64_t ebda)
{
	const char *why;
	const uint8_t *table = acpi_find_table("HPET", ebda, &why);
	uint64_t base;
	if (!table)
		return absent(why);
	if (acpi_hpet_base(table, &base, &why) < 0)
		return absent(why);
	if (base >= (1ULL << 46))
		return absent("the HPET lies beyond the kernel's map");
	volatile uint8_t *regs = mmio_map(base, 1024);
	uint64_t cap = *(volatile uint64_t *)(regs + HPET_GCAP_ID);
	uint64_t period = cap >> 32;
	if (period == 0 || period > HPET_PERIOD_MAX_FS)
		return absent("its period is 0 or longer than 100 ns (no HPET answers there)");
	struct counter c = {
		.read = hpet_read, .mask = (cap & HPET_GCAP_64BIT) ? ~0ULL : 0xffffffffULL,
		.period_fs = period, .regs = regs,
	};
	/* The main counter runs only while enabled; it is left as found. */
	volatile uint64_t *config = (volatile uint64_t *)(regs + HPET_CONFIG);
	uint64_t was = *config;
	if (!(was & HPET_CONFIG_ENABLE))
		*config = was | HPET_CONFIG_ENABLE;
	struct clock_reading r = calibrate(&c);
	if (!(was & HPET_CONFIG_ENABLE))
		*config = was;
	return r;
}

static uint64_t pm_timer_read(const struct counter *c)
{
	return inl(c->port) & c->mask;
}

static struct clock_reading from_pm_timer(uint64_t ebda)
{
	const char *why;
	const uint8_t *fadt = acpi_find_table("FACP", ebda, &why);
	struct acpi_pm_timer t;
	if (!fadt)
		return absent(why);
	if (acpi_fadt_pm_timer(fadt, &t, &why) < 0)
		return absent(why);
	struct counter c = {
		.read = pm_timer_read, .mask = t.wide ? 0xffffffffULL : 0xffffffULL,
		.hz = ACPI_PM_TIMER_HZ, .port = t.port,
	};
	return calibrate(&c);
}

static uint64_t lapic_read(const struct counter *c)
{
	(void)c;
	return lapic_reference_count();
}

/* QEMU's local APIC timer under TCG: 1 GHz undivided (see lapic.c). KVM's
 * runs at 1 GHz by default too, but a VMM may set another bus rate there,
 * and under KVM the exact sources answer first anyway. */
static struct clock_reading from_lapic(void)
{
	if (cpu_hypervisor() != HYPERVISOR_TCG)
		return absent("its rate is known only under QEMU's TCG");
	lapic_reference_start();
	struct counter c = {
		.read = lapic_read, .mask = 0xffffffff, .down = true, .hz = LAPIC_TCG_HZ,
		.round_us = LAPIC_ROUND_US,
	};
	struct clock_reading r = calibrate(&c);
	lapic_reference_stop();
	return r;
}

static uint64_t pit0_read(const struct counter *c)
{
	(void)c;
	outb(0x43, 0x00); /* latch channel 0's count */
	uint8_t lo = inb(0x40);
	return (uint64_t)lo | (uint64_t)inb(0x40) << 8;
}

/* Channel 0 as a rate generator over the longest count (mode 2 counts down
 * by one per tick and reloads); clock.c stops it again afterwards. */
static struct clock_reading from_pit0(void)
{
	outb(0x43, 0x34); /* channel 0, lo/hi byte, mode 2 */
	outb(0x40, 0);
	outb(0x40, 0);    /* a count of 0 is 65,536 */
	struct counter c = { .read = pit0_read, .mask = 0xffff, .down = true, .hz = PIT_HZ };
	return calibrate(&c);
}

struct clock_reading clock_source_measure(enum clock_source s, uint64_t ebda)
{
	switch (s) {
	case CLOCK_CPUID: return from_cpuid();
	case CLOCK_HYPERVISOR: return from_hypervisor();
	case CLOCK_KVMCLOCK: return from_kvmclock();
	case CLOCK_LAPIC: return from_lapic();
	case CLOCK_PIT: return from_pit2();
	case CLOCK_HPET: return from_hpet(ebda);
	case CLOCK_PMTIMER: return from_pm_timer(ebda);
	case CLOCK_PIT0: return from_pit0();
	case CLOCK_SOURCES: break;
	}
	return absent("no such source");
}
