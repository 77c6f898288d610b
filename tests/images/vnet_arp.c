/*
 * vnet_arp: a test image for the virtio-net driver alone, below any TCP/IP
 * stack. It starts the device, sends ARP requests for the gateway (QEMU's user
 * network answers for 10.0.2.2) and waits, parked with the receive interrupt
 * on, for the reply. It prints what it got and the driver's counters, and
 * exits 0 when a reply arrived, 1 when none did within the time limit.
 *
 *   vnet_arp [count]   send `count` requests, one per reply (default 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/virtio/virtio.h"
#include "kernel/kernel.h"

static const uint8_t my_ip[4] = { 10, 0, 2, 15 }, gw_ip[4] = { 10, 0, 2, 2 };
static int replies, tx_done_count;

static void on_frame(void *ctx, const struct vnet_frame *fr)
{
	const uint8_t *f = fr->piece[0].base;
	size_t len = fr->piece[0].len; /* an ARP reply fits in one buffer */
	(void)ctx;
	/* Ethernet type ARP, opcode reply, sender = the gateway. */
	if (len >= 42 && f[12] == 0x08 && f[13] == 0x06 && f[20] == 0 && f[21] == 2 &&
	    memcmp(f + 28, gw_ip, 4) == 0) {
		printf("arp reply: 10.0.2.2 is at %02x:%02x:%02x:%02x:%02x:%02x\n", f[22], f[23], f[24], f[25],
		       f[26], f[27]);
		replies++;
	}
}

static void on_tx_done(void *cookie)
{
	(void)cookie;
	tx_done_count++;
}

static void send_request(const uint8_t mac[6])
{
	static uint8_t head[14], body[28];
	memset(head, 0xff, 6); /* broadcast */
	memcpy(head + 6, mac, 6);
	head[12] = 0x08, head[13] = 0x06;
	const uint8_t arp[8] = { 0, 1, 8, 0, 6, 4, 0, 1 }; /* Ethernet/IPv4 request */
	memcpy(body, arp, 8);
	memcpy(body + 8, mac, 6);
	memcpy(body + 14, my_ip, 4);
	memset(body + 18, 0, 6);
	memcpy(body + 24, gw_ip, 4);
	/* Two pieces: the driver chains them with its header, no copy. */
	struct vnet_seg seg[2] = { { head, sizeof head }, { body, sizeof body } };
	int r = vnet_tx(seg, 2, head, NULL);
	if (r < 0)
		printf("vnet_tx failed: %d\n", r);
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 3;
	if (vnet_init() < 0)
		return 2;
	vnet_set_tx_done(on_tx_done);
	uint8_t mac[6];
	vnet_mac(mac);
	printf("vnet: mac %02x:%02x:%02x:%02x:%02x:%02x link %s\n", mac[0], mac[1], mac[2], mac[3], mac[4],
	       mac[5], vnet_link_up() ? "up" : "down");

	uint64_t deadline = clock_ns() + 5 * NSEC_PER_SEC;
	for (int sent = 0; sent < count && clock_ns() < deadline; sent++) {
		int want = replies + 1;
		send_request(mac);
		while (replies < want && clock_ns() < deadline) {
			vnet_rx(on_frame, NULL, 64);
			vnet_tx_reclaim();
			if (replies >= want)
				break;
			/* Park: interrupt on, re-check the ring, halt until it fires. */
			vnet_wake = false;
			if (vnet_rx_irq_enable(true)) {
				vnet_rx_irq_enable(false);
				continue;
			}
			cpu_park(deadline, &vnet_wake);
			vnet_rx_irq_enable(false);
		}
	}
	vnet_tx_reclaim();
	printf("replies %d of %d, tx done %d\n", replies, count, tx_done_count);
	vnet_stats_print();
	return replies == count ? 0 : 1;
}
