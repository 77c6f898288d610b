/*
 * floor.h: what the files of the floor share (apps/floor; floor.c says what
 * the floor is). floor.c starts the device, waits and prints the counters;
 * link.c takes frames in (Ethernet, ARP, IPv4) and sends replies from its
 * transmit slots; tcp.c answers TCP segments without connection state;
 * answer.c makes the answer to a request with httpd's own parser and
 * response builder (apps/httpd/http.c).
 */
#ifndef FLOOR_FLOOR_H
#define FLOOR_FLOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "drivers/virtio/virtio.h"

/* The most bytes one answer may have: its head and body go in one segment,
 * which must fit a 1500-byte MTU with room to spare (a client announcing an
 * MSS below this gets no answer longer than it: none of ours is). */
#define FLOOR_ANSWER_MAX 1024

/* What the floor serves, set once at start. */
struct floor_config {
	uint8_t mac[6];      /* the device's station address */
	uint32_t ip;         /* our IPv4 address, host byte order */
	uint16_t port;       /* the TCP port answered (-p) */
	bool allow_shutdown; /* -s: GET /__shutdown stops the floor */
	bool offload_csum;   /* the device completes the TCP checksums we send */
};
extern struct floor_config floor_cfg;

/* Set once the answer to GET /__shutdown has been handed to the device:
 * the wait in floor.c ends, and main returns 0. */
extern bool floor_stop;

/* What became of the frames (floor_counters_print). */
struct floor_counters {
	uint64_t frames_in;       /* frames the driver delivered */
	uint64_t frames_out;      /* frames handed to the device */
	uint64_t arp_replies;     /* ARP requests for our address, answered */
	uint64_t syn_acks;        /* SYNs answered with a SYN-ACK */
	uint64_t answers;         /* requests answered (one segment each) */
	uint64_t answers_closing; /*   of them with our FIN in the same segment */
	uint64_t fin_acks;        /* FINs without data, answered with FIN-ACK */
	uint64_t acks;            /* ACKs without data or FIN: nothing to do */
	uint64_t resets_in;       /* RSTs received: nothing to do */
	uint64_t resets_out;      /* RSTs sent: a refused request */
	uint64_t refused_split;   /* a segment with no whole request head (split, or
	                           * larger than a segment): reset */
	uint64_t refused_extra;   /* a request followed by more bytes in its segment (a
	                           * body, a pipelined request): reset */
	uint64_t refused_body;    /* a request announcing a body: reset */
	uint64_t refused_long;    /* an answer longer than FLOOR_ANSWER_MAX: reset */
	uint64_t drop_multi;      /* a frame in several receive buffers (only a segment
	                           * the host merged, GUEST_TSO4, spans them) */
	uint64_t drop_short;      /* shorter than its Ethernet and ARP or IPv4 header */
	uint64_t drop_ethertype;  /* neither IPv4 nor ARP */
	uint64_t drop_arp;        /* ARP other than an Ethernet/IPv4 request for us */
	uint64_t drop_ip_header;  /* version, header length, total length or header checksum */
	uint64_t drop_fragment;   /* an IPv4 fragment */
	uint64_t drop_not_ours;   /* to another IPv4 address */
	uint64_t drop_not_tcp;    /* IPv4, not TCP */
	uint64_t drop_tcp_header; /* TCP header length out of the packet */
	uint64_t drop_checksum;   /* a TCP checksum that does not add up */
	uint64_t drop_options;    /* TCP options that do not parse */
	uint64_t drop_port;       /* to another TCP port */
	uint64_t drop_flags;      /* flags no client sends: SYN with ACK, FIN or RST; no ACK */
	uint64_t drop_stale_ack;  /* an ACK not of our sequence space for that 4-tuple */
	uint64_t drop_tx_full;    /* a reply not sent: no slot, or the ring was full */
};
extern struct floor_counters floor_counters;
void floor_counters_print(void);

/* A received IPv4 TCP packet for us, checked up to its TCP header's start. */
struct seg_in {
	const uint8_t *frame; /* the Ethernet frame (its source MAC is where replies go) */
	uint32_t src;         /* IPv4 source address, host byte order */
	const uint8_t *tcp;   /* the TCP header, then options and payload */
	size_t tcp_len;       /* bytes from it to the end of the IPv4 packet */
	bool csum_ok;         /* the device vouched for the TCP checksum */
};

/* A reply being built in a transmit slot (link.c). */
struct tx_frame {
	uint8_t *frame; /* the slot: Ethernet header, IPv4 header, then TCP */
	uint8_t *tcp;   /* where the TCP header goes (frame + 34) */
};

/* ---- link.c ---------------------------------------------------------------- */
/* Start the transmit slots and tell the driver where finished frames go;
 * announce our address once (a gratuitous ARP request, as lwIP does at
 * start), so a switch or passt learns it before the first client. */
void link_init(void);
/* The driver's deliver callback: one received frame. */
void link_input(void *ctx, const struct vnet_frame *fr);
/* A slot for a reply to `in`, its Ethernet and IPv4 headers written
 * (addresses swapped); false when none is free (counted). */
bool link_reply_begin(const struct seg_in *in, struct tx_frame *tx);
/* Complete the reply's IPv4 header and TCP checksum (`payload_sum`: the
 * ones' complement sum of the payload, csum_partial()) for `tcp_len` bytes
 * of TCP header and payload, and hand it to the device; false when the
 * device's ring was full (counted). */
bool link_reply_send(struct tx_frame *tx, size_t tcp_len, uint32_t payload_sum);

/* Ones' complement sum of buf[0..len) as big-endian 16-bit words (a last odd
 * byte is the high half of a word), added to `sum`; csum_fold() the total. */
uint32_t csum_partial(const void *buf, size_t len, uint32_t sum);
/* The 16-bit sum of a csum_partial() total, not complemented. */
uint16_t csum_fold(uint32_t sum);

static inline unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }
static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* ---- tcp.c ----------------------------------------------------------------- */
/* Draw the key of the initial sequence numbers (start). */
void floor_tcp_init(void);
/* One received segment (link.c has checked it up to its TCP header). */
void floor_tcp_input(const struct seg_in *in);

/* ---- answer.c -------------------------------------------------------------- */
/* What a request segment's payload gets. */
enum answer_kind {
	ANSWER_SEND,    /* an answer: the bytes and whether the connection closes after it */
	ANSWER_SPLIT,   /* no whole request head in it: refused */
	ANSWER_EXTRA,   /* bytes after the head (a body, a pipelined request): refused */
	ANSWER_BODY,    /* the head announces a body: refused */
	ANSWER_TOO_LONG, /* the answer would not fit one segment: refused */
};
struct answer {
	const uint8_t *bytes; /* head and body, valid until the next answer_for() */
	size_t len;           /* their length */
	uint32_t sum;         /* csum_partial() of them */
	bool close;           /* send our FIN with them */
	bool shutdown;        /* GET /__shutdown: the floor stops once it is sent */
};
/* Make the three answers to GET / (HTTP/1.1, HTTP/1.0 kept alive, closing)
 * once, with their sums. */
void answer_init(void);
/* The answer to the request in payload[0..len). */
enum answer_kind answer_for(const uint8_t *payload, size_t len, struct answer *a);

#endif
