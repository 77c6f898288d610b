/*
 * clock.c: time. The TSC's rate is learnt once at boot from the best source
 * the machine has (clock_sources.c: what the CPU or hypervisor states, else
 * a calibration against the local APIC's timer under TCG, the PIT, the
 * HPET or the ACPI PM timer), or the one the kernel option `clock` names,
 * and the boot says which on one line; a machine with none is refused with
 * KERNEL_NO_CLOCK_STATUS. clock_ns() scales TSC ticks since the loader
 * started into nanoseconds. Wall-clock time is KVM's wall clock where
 * kvmclock gave the rate, else the CMOS RTC read at boot, plus monotonic
 * time since (1970 where there is no RTC). Also newlib's
 * clock_gettime, nanosleep and usleep. The kernel's own timer is the local
 * APIC's (timer.c); the PIT's channel 0, which the BIOS left ticking, is
 * stopped here.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include "arch.h"
#include "clock.h"
#include "clock_sources.h"
#include "kernel.h"
#include "options.h"

#define RTC_UPDATE_TRIES 1000000

static uint64_t tsc_boot; /* TSC at loader entry: clock_ns() == 0 there */
static uint64_t tsc_hz;
static uint64_t ns_mult;  /* ns = ticks * ns_mult >> 32 */
static uint64_t realtime_at_boot_ns;
static enum clock_source source; /* where tsc_hz came from */
static const char *source_remark; /* how, where the source said more (or NULL) */

uint64_t clock_tsc_hz(void) { return tsc_hz; }
const char *clock_source_used(void) { return clock_source_name(source); }
bool clock_rate_given(void) { return source == CLOCK_CPUID || source == CLOCK_HYPERVISOR || source == CLOCK_KVMCLOCK; }
bool clock_rate_from_lapic(void) { return source == CLOCK_LAPIC; }

uint64_t clock_ns(void)
{
	return (uint64_t)(((unsigned __int128)(rdtsc() - tsc_boot) * ns_mult) >> 32);
}

uint64_t clock_tsc_at(uint64_t ns)
{
	if (ns == UINT64_MAX)
		return UINT64_MAX;
	unsigned __int128 ticks = (unsigned __int128)ns * tsc_hz / NSEC_PER_SEC + tsc_boot;
	return ticks > UINT64_MAX ? UINT64_MAX : (uint64_t)ticks;
}

uint64_t clock_realtime_ns(void)
{
	return realtime_at_boot_ns + clock_ns();
}

/*
 * The BIOS leaves PIT channel 0 as an 18.2 Hz rate generator. Its interrupt
 * is masked here, but the emulated PIT still runs a host timer for every
 * edge of its output: under QEMU that woke the main loop 18 times a second
 * with the guest parked, a host CPU cost for nothing. Mode 0 with the longest count fires once, 55 ms
 * from now, and then holds its output: no more edges, no more host timers.
 * Where there is no PIT the writes go nowhere.
 */
static void stop_pit_channel0(void)
{
	outb(0x43, 0x30); /* channel 0, lo/hi byte, mode 0 (interrupt on terminal count) */
	outb(0x40, 0);
	outb(0x40, 0);    /* a count of 0 is 65,536 */
}

static uint8_t cmos(uint8_t reg)
{
	outb(0x70, reg);
	return inb(0x71);
}

static uint64_t days_from_civil(int y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (uint64_t)(era * 146097 + (int)doe - 719468);
}

static uint8_t from_bcd(uint8_t x)
{
	return (uint8_t)((x & 0x0f) + (x >> 4) * 10);
}

/* The RTC's time in ns since 1970, or -1 with why: no RTC answers (its
 * ports read all ones, as on a machine without one), it stays in its
 * update, or it holds no valid date. */
static int read_rtc_ns(uint64_t *ns, const char **why)
{
	if (cmos(0x0a) == 0xff && cmos(0x0b) == 0xff) {
		*why = "no CMOS RTC answers (its registers read 0xff)";
		return -1;
	}
	int tries = 0;
	while (tries < RTC_UPDATE_TRIES && (cmos(0x0a) & 0x80)) { /* update in progress */
		cpu_relax();
		tries++;
	}
	if (tries == RTC_UPDATE_TRIES) {
		*why = "the CMOS RTC never leaves its update";
		return -1;
	}
	uint8_t sec = cmos(0x00), min = cmos(0x02), hour = cmos(0x04);
	uint8_t day = cmos(0x07), mon = cmos(0x08), year = cmos(0x09), b = cmos(0x0b);
	if (!(b & 0x04)) { /* BCD */
		sec = from_bcd(sec);
		min = from_bcd(min);
		hour = (uint8_t)(from_bcd(hour & 0x7f) | (hour & 0x80));
		day = from_bcd(day);
		mon = from_bcd(mon);
		year = from_bcd(year);
	}
	if (!(b & 0x02) && (hour & 0x80)) /* 12-hour clock, PM */
		hour = (uint8_t)(((hour & 0x7f) + 12) % 24);
	if (sec > 59 || min > 59 || hour > 23 || day < 1 || day > 31 || mon < 1 || mon > 12 ||
	    year > 99) {
		*why = "the CMOS RTC holds no valid date";
		return -1;
	}
	uint64_t days = days_from_civil(2000 + year, mon, day);
	*ns = ((days * 24 + hour) * 60 + min) * 60 * NSEC_PER_SEC + sec * NSEC_PER_SEC;
	return 0;
}

/* The source `clock=` names, or CLOCK_SOURCES for auto. */
static enum clock_source forced_source(void)
{
	for (int s = 0; s < CLOCK_SOURCES; s++)
		if (kopt_is(KOPT_CLOCK, clock_source_name((enum clock_source)s)))
			return (enum clock_source)s;
	return CLOCK_SOURCES;
}

/* The TSC's rate from the forced source, or the first source that gives
 * one; a machine with none (or without the one forced) is refused. */
static void choose_source(uint64_t ebda)
{
	enum clock_source forced = forced_source();
	if (forced != CLOCK_SOURCES) {
		struct clock_reading r = clock_source_measure(forced, ebda);
		if (!r.hz) {
			kprintf("kernel: clock=%s: no TSC rate from %s: %s\n", clock_source_name(forced),
				clock_source_what(forced), r.why);
			kernel_exit(KERNEL_NO_CLOCK_STATUS);
		}
		source = forced, tsc_hz = r.hz, source_remark = r.why;
		return;
	}
	const char *why[CLOCK_SOURCES];
	for (int s = 0; s < CLOCK_SOURCES; s++) {
		struct clock_reading r = clock_source_measure((enum clock_source)s, ebda);
		if (r.hz) {
			source = (enum clock_source)s, tsc_hz = r.hz, source_remark = r.why;
			return;
		}
		why[s] = r.why;
	}
	kprintf("kernel: no clock: no source gives the TSC's rate (docs/running.md, \"The clock\"):\n");
	for (int s = 0; s < CLOCK_SOURCES; s++)
		kprintf("kernel:   %s (%s): %s\n", clock_source_name((enum clock_source)s),
			clock_source_what((enum clock_source)s), why[s]);
	kernel_exit(KERNEL_NO_CLOCK_STATUS);
}

void clock_init(uint64_t tsc_at_boot, uint64_t ebda)
{
	tsc_boot = tsc_at_boot ? tsc_at_boot : rdtsc();
	choose_source(ebda);
	ns_mult = (uint64_t)(((unsigned __int128)NSEC_PER_SEC << 32) / tsc_hz);
	stop_pit_channel0();
	kprintf("kernel: clock: TSC %lu.%03lu MHz from %s (%s%s%s)\n", tsc_hz / 1000000,
		tsc_hz / 1000 % 1000, clock_source_name(source), clock_source_what(source),
		source_remark ? "; " : "", source_remark ? source_remark : "");
	/* Where the source told real time (kvmclock), the RTC is not asked:
	 * under KVM its 18 port accesses are as many exits to the VMM. */
	struct clock_realtime rt = clock_source_realtime();
	if (rt.valid && source == CLOCK_KVMCLOCK) {
		bool after = rt.tsc >= tsc_boot; /* KVM stamps the record at our MSR write */
		uint64_t ticks = after ? rt.tsc - tsc_boot : tsc_boot - rt.tsc;
		uint64_t apart = (uint64_t)(((unsigned __int128)ticks * ns_mult) >> 32);
		realtime_at_boot_ns = after ? rt.ns - apart : rt.ns + apart;
		return;
	}
	uint64_t rtc_ns;
	const char *why;
	if (read_rtc_ns(&rtc_ns, &why) < 0) {
		kprintf("kernel: %s: wall-clock time starts at 1970-01-01 00:00:00\n", why);
		realtime_at_boot_ns = 0;
		return;
	}
	realtime_at_boot_ns = rtc_ns - clock_ns();
}

/* ---- the POSIX clock interface newlib's headers declare ------------------ */

int clock_gettime(clockid_t id, struct timespec *ts)
{
	uint64_t ns;
	if (id == CLOCK_MONOTONIC)
		ns = clock_ns();
	else if (id == CLOCK_REALTIME)
		ns = clock_realtime_ns();
	else {
		errno = EINVAL;
		return -1;
	}
	if (!ts) {
		errno = EFAULT;
		return -1;
	}
	ts->tv_sec = (time_t)(ns / NSEC_PER_SEC);
	ts->tv_nsec = (long)(ns % NSEC_PER_SEC);
	return 0;
}

int clock_getres(clockid_t id, struct timespec *ts)
{
	if (id != CLOCK_MONOTONIC && id != CLOCK_REALTIME) {
		errno = EINVAL;
		return -1;
	}
	if (ts) {
		ts->tv_sec = 0;
		ts->tv_nsec = 1;
	}
	return 0;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (!req || req->tv_nsec < 0 || req->tv_nsec >= (long)NSEC_PER_SEC || req->tv_sec < 0) {
		errno = EINVAL;
		return -1;
	}
	sleep_until(clock_ns() + (uint64_t)req->tv_sec * NSEC_PER_SEC + (uint64_t)req->tv_nsec);
	if (rem)
		rem->tv_sec = 0, rem->tv_nsec = 0;
	return 0;
}

int usleep(useconds_t us)
{
	sleep_until(clock_ns() + (uint64_t)us * 1000);
	return 0;
}

unsigned sleep(unsigned s)
{
	sleep_until(clock_ns() + (uint64_t)s * NSEC_PER_SEC);
	return 0;
}
