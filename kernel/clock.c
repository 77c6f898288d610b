/*
 * clock.c: time. The TSC is calibrated once at boot against the PIT (channel
 * 2, which needs no interrupt); clock_ns() scales TSC ticks since the loader
 * started into nanoseconds. Wall-clock time is the CMOS RTC read at boot plus
 * monotonic time since. Also newlib's clock_gettime, nanosleep and usleep.
 * The kernel's own timer is the local APIC's (timer.c); the PIT's channel 0,
 * which the BIOS left ticking, is stopped here.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include "arch.h"
#include "clock.h"
#include "kernel.h"

#define PIT_HZ 1193182ULL
#define CALIBRATE_MS 5
/* Rounds of calibration; the fastest wins. Under emulation the vCPU can be
 * descheduled, or wait for QEMU's lock on a port read, between the PIT's
 * terminal count and our RDTSC: that only ever adds TSC ticks, so one round
 * could read the TSC 40% fast (seen: 3,432 MHz on a 2,445 MHz host, every
 * guest timer stretched alike) and the least of several is the truest. */
#define CALIBRATE_ROUNDS 5

static uint64_t tsc_boot; /* TSC at loader entry: clock_ns() == 0 there */
static uint64_t tsc_hz;
static uint64_t ns_mult;  /* ns = ticks * ns_mult >> 32 */
static uint64_t realtime_at_boot_ns;

uint64_t clock_tsc_hz(void) { return tsc_hz; }

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

/* TSC ticks during CALIBRATE_MS of PIT channel 2 counting down in mode 0. */
static uint64_t calibrate_tsc(void)
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
	while (!(inb(0x61) & 0x20)) /* OUT2 goes high at terminal count */
		cpu_relax();
	return (rdtsc() - t0) * 1000 / CALIBRATE_MS;
}

/*
 * The BIOS leaves PIT channel 0 as an 18.2 Hz rate generator. Its interrupt
 * is masked here, but the emulated PIT still runs a host timer for every
 * edge of its output: under QEMU that woke the main loop 18 times a second
 * with the guest parked, a host CPU cost for nothing. Mode 0 with the longest count fires once, 55 ms
 * from now, and then holds its output: no more edges, no more host timers.
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

static uint64_t read_rtc_ns(void)
{
	for (int tries = 0; tries < 1000000 && (cmos(0x0a) & 0x80); tries++)
		cpu_relax(); /* update in progress */
	uint8_t sec = cmos(0x00), min = cmos(0x02), hour = cmos(0x04);
	uint8_t day = cmos(0x07), mon = cmos(0x08), year = cmos(0x09), b = cmos(0x0b);
	if (!(b & 0x04)) { /* BCD */
#define BCD(x) (uint8_t)(((x) & 0x0f) + ((x) >> 4) * 10)
		sec = BCD(sec);
		min = BCD(min);
		hour = (uint8_t)(BCD(hour & 0x7f) | (hour & 0x80));
		day = BCD(day);
		mon = BCD(mon);
		year = BCD(year);
	}
	if (!(b & 0x02) && (hour & 0x80)) /* 12-hour clock, PM */
		hour = (uint8_t)(((hour & 0x7f) + 12) % 24);
	uint64_t days = days_from_civil(2000 + year, mon, day);
	return ((days * 24 + hour) * 60 + min) * 60 * NSEC_PER_SEC + sec * NSEC_PER_SEC;
}

void clock_init(uint64_t tsc_at_boot)
{
	tsc_boot = tsc_at_boot ? tsc_at_boot : rdtsc();
	tsc_hz = calibrate_tsc();
	for (int i = 1; i < CALIBRATE_ROUNDS; i++) {
		uint64_t hz = calibrate_tsc();
		if (hz < tsc_hz)
			tsc_hz = hz;
	}
	if (tsc_hz < 1000000)
		panic("TSC calibration failed (%lu Hz)", tsc_hz);
	ns_mult = (uint64_t)(((unsigned __int128)NSEC_PER_SEC << 32) / tsc_hz);
	stop_pit_channel0();
	realtime_at_boot_ns = read_rtc_ns() - clock_ns();
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
