/*
 * netrx.h: what the parts of the netrx fuzz harness share: the host's
 * stand-ins for the kernel (host.c), the simulated virtio-net device behind
 * the real driver (device.c), and the harness proper (fuzz_netrx.c).
 */
#ifndef FUZZ_NETRX_H
#define FUZZ_NETRX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- host.c ------------------------------------------------------------------ */
/* clock_ns() returns this; only the harness moves it. */
extern uint64_t fake_now_ns;
/* Restart the "random" numbers (ISN key, ports), so an input sees the same
 * sequence whether it runs first in a process or after a million others. */
void host_random_reset(void);
/* kprintf and trace print only when NETRX_VERBOSE is set in the environment
 * (to see what a seed or a crash input does). */
extern bool host_verbose;
void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Stop with a message: an invariant of the stack or of the harness broke. */
__attribute__((noreturn, format(printf, 1, 2))) void harness_fail(const char *fmt, ...);

/* ---- device.c ----------------------------------------------------------------- */
/* The device's station address (the driver reads it from the config space). */
extern const uint8_t dev_mac[6];
/* Put `n` bytes (virtio-net header + frame) into the next receive buffer the
 * driver posted, or (more than one holds, with MRG_RXBUF) the next ones, and
 * report `claimed` bytes written (by the last buffer, beyond the others), as
 * a device may lie; with count_buffers the header's num_buffers becomes the
 * number used, else it stays as given. Bytes past `n` in a buffer are zeroed
 * (no stale data from an earlier input). False when the driver has not
 * posted enough buffers (the device drops, and waits for a notify). */
bool dev_rx(const uint8_t *bytes, size_t n, uint32_t claimed, bool count_buffers);
/* Take every frame the driver published on the transmit ring: read all its
 * bytes (so a buffer freed too early is a use after free), check the header
 * and the frame, and return the chain as used. */
void dev_tx_complete(void);
/* Frames the driver has published and the device has not completed. */
unsigned dev_tx_pending(void);
/* Receive buffers the driver has posted and the device has not filled (all
 * of the ring when the driver is idle: one missing is a buffer lost). */
unsigned dev_rx_posted(void);
/* The receive ring's size. */
unsigned dev_rx_ring_size(void);
/* The offloads the device offers from the next vnet_init on (feature bits:
 * CSUM 0, GUEST_CSUM 1, GUEST_TSO4 7, HOST_TSO4 11); QEMU on tap offers
 * these, user networking none. */
#define DEV_OFFER_TAP (1ULL << 0 | 1ULL << 1 | 1ULL << 7 | 1ULL << 11)
void dev_offer(uint64_t offloads);
/* Transmitted frames the device cut into segments, and frames that reached
 * the "wire" (segments counted one by one); dev_tap's function sees each of
 * the latter, after the checks. */
unsigned dev_tx_gso_frames(void);
unsigned dev_tx_wire_frames(void);
void dev_tap(void (*tap)(const uint8_t *frame, size_t len));
/* How the device handles notifications from now on (0: as QEMU does). */
#define DEV_MISS_TX        0x01 /* the transmit side, going back to waiting, misses the next publish */
#define DEV_MISS_RX        0x02 /* the receive side the same, once out of buffers */
#define DEV_MISS_IRQ       0x04 /* rx interrupt decisions read the previous used_event */
#define DEV_MISS_ALTERNATE 0x08 /* only every other wait misses */
void dev_set_mode(unsigned mode);
/* Both sides move on: the avail_event stores a miss mode held back land. */
void dev_settle(void);
/* NULL, or why the device waits, its wish visible to the driver, for a
 * notification of entries the driver has published (a lost notification
 * nobody repaired). */
const char *dev_owed(void);
/* Notifications received on queue qi (0 rx, 1 tx), and the driver's
 * virtio_barrier calls. */
unsigned dev_notifies(int qi);
unsigned dev_barriers(void);

/* ---- the Internet checksum (RFC 1071), for checking and fixing frames --------- */
static inline uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static inline uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The pseudo-header's part of a TCP or UDP checksum: addresses from the IPv4
 * header `ip`, the protocol, and the transport segment's length. */
static inline uint32_t csum_pseudo(const uint8_t *ip, uint8_t proto, uint16_t len)
{
	return csum_add(0, ip + 12, 8) + proto + len;
}

#endif
