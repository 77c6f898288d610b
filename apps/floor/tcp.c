/*
 * tcp.c: the floor's TCP, without connection state (floor.c says what the
 * floor is). Each segment to our port is answered from what it carries alone:
 *
 *   SYN           -> SYN-ACK: our initial sequence number a keyed hash of the
 *                    client's address and port (ours are fixed), so a SYN
 *                    sent again gets the same one; an MSS option (1460) and a
 *                    65,535-byte window, no window scaling, no SACK, no
 *                    timestamps: the client then sends none of them.
 *   a request     -> ONE segment: the answer (answer.c), acknowledging the
 *                    request, at the sequence number the request acknowledges
 *                    (the client has taken everything we sent before it, as
 *                    it asks only after the previous answer), with our FIN
 *                    when the answer closes the connection or the request
 *                    came with the client's FIN. A lost answer leaves the
 *                    request unacknowledged: the client sends it again and
 *                    gets the same answer again.
 *   a FIN alone   -> FIN-ACK. Without state we cannot tell whether our FIN
 *                    went out already (with a closing answer); sending one
 *                    again is harmless: the client then is in LAST_ACK, and
 *                    the ACK in our segment ends its connection before the
 *                    FIN is looked at; otherwise (the client closed first)
 *                    it is the FIN it waits for.
 *   an ACK alone  -> nothing; an RST -> nothing.
 *   a request the floor cannot answer from one segment (split over several,
 *   more bytes after it, a body announced, an answer too long) -> RST,
 *   counted by reason.
 *
 * Checks, in order, each counted when it fails: header length within the
 * packet; our port; the checksum (unless the device vouched for it); the
 * options parse (each whole within the header, the known ones at their
 * lengths); the flags a client may send; and, for anything but a SYN, an
 * ACK in our sequence space for that client (at most 2^30 bytes past our
 * initial sequence number: a forged or stale segment is dropped, not
 * answered). No retransmission timers, no windows, no reassembly, no
 * pipelining: a client that sends its next request before it has the
 * answer to the last would get the second answer over the first.
 */
#include <string.h>
#include "kernel/kernel.h"
#include "floor.h"

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_HLEN 20

/* What the SYN-ACK announces. */
#define OUR_MSS 1460
#define OUR_WINDOW 65535
/* How far past our initial sequence number a client's ACK may lie: a
 * connection that sends more than this (a gigabyte of answers) is taken for
 * a stale one. */
#define SEQ_SPAN (1u << 30)

/* The key of the sequence-number hash, drawn at start. */
static uint64_t isn_key[2];

/* Who asked last, for the driver's timed hold (vnet_set_tx_hold_worth): a
 * hold pays only where another client may ask while this one waits for its
 * answer. The stack counts its open connections for that; the floor keeps
 * none, so it says yes when the last two requests came from two clients
 * (keep-alive clients taking turns, or new connections overlapping). One
 * client asking in turn never makes a hold; a lone client opening a
 * connection per request does, and the driver's backing off after each
 * hold that nothing joined makes those rare. */
static struct {
	uint32_t src;  /* the client's IPv4 address, host byte order */
	unsigned port; /* its TCP port */
	bool several;  /* the request before came from another client */
} last_asker;

static bool hold_worth(void) { return last_asker.several; }

static void asked_by(uint32_t src, unsigned port)
{
	last_asker.several = src != last_asker.src || port != last_asker.port;
	last_asker.src = src;
	last_asker.port = port;
}

void floor_tcp_init(void)
{
	/* The TSC and the wall clock at start: a benchmark's reference needs
	 * ISNs no peer can predict from another connection's, not a
	 * cryptographic key. */
	isn_key[0] = mix64(cpu_cycles());
	isn_key[1] = mix64(clock_realtime_ns() ^ isn_key[0]);
	vnet_set_tx_hold_worth(hold_worth);
}

/* Our initial sequence number for the client at `src`:`sport`. */
static uint32_t isn_of(uint32_t src, unsigned sport)
{
	return (uint32_t)mix64(mix64(isn_key[0] ^ ((uint64_t)src << 16 | sport)) ^ isn_key[1]);
}

/* Whether the segment's checksum adds up (pseudo-header included). */
static bool checksum_ok(const struct seg_in *in)
{
	uint8_t addr[8];
	put32(addr, in->src);
	put32(addr + 4, floor_cfg.ip);
	uint32_t sum = csum_partial(addr, sizeof addr, 6 + (uint32_t)in->tcp_len);
	return csum_fold(csum_partial(in->tcp, in->tcp_len, sum)) == 0xffff;
}

/* Whether the options opt[0..len) parse: each option whole inside the
 * field, and those with a fixed length (MSS, window scale, SACK permitted,
 * timestamps) at it, SACK blocks in whole pairs. */
static bool options_parse(const uint8_t *opt, size_t len)
{
	size_t i = 0;
	while (i < len) {
		unsigned kind = opt[i];
		if (kind == 0)
			return true; /* end of the list: the rest is padding */
		if (kind == 1) {
			i++;
			continue;
		}
		if (len - i < 2)
			return false; /* no room for its length */
		size_t olen = opt[i + 1];
		if (olen < 2 || olen > len - i)
			return false;
		if ((kind == 2 && olen != 4) || (kind == 3 && olen != 3) || (kind == 4 && olen != 2) ||
		    (kind == 5 && (olen - 2) % 8 != 0) || (kind == 8 && olen != 10))
			return false;
		i += olen;
	}
	return true;
}

/* One segment back to `in`'s sender: `seq`, `ack`, `flags`, the MSS option
 * with a SYN, and the answer `a` as payload (NULL: none). True when the
 * device took it. */
static bool reply(const struct seg_in *in, uint32_t seq, uint32_t ack, unsigned flags, const struct answer *a)
{
	struct tx_frame tx;
	if (!link_reply_begin(in, &tx))
		return false;
	uint8_t *t = tx.tcp;
	size_t hlen = flags & TCP_SYN ? TCP_HLEN + 4 : TCP_HLEN;
	put16(t, floor_cfg.port);
	put16(t + 2, be16(in->tcp));
	put32(t + 4, seq);
	put32(t + 8, ack);
	t[12] = (uint8_t)(hlen / 4 << 4);
	t[13] = (uint8_t)flags;
	put16(t + 14, OUR_WINDOW);
	put16(t + 18, 0); /* no urgent data; the checksum is link.c's */
	if (flags & TCP_SYN) {
		t[20] = 2, t[21] = 4;
		put16(t + 22, OUR_MSS);
	}
	size_t plen = 0;
	uint32_t sum = 0;
	if (a) {
		memcpy(t + hlen, a->bytes, a->len);
		plen = a->len, sum = a->sum;
	}
	return link_reply_send(&tx, hlen + plen, sum);
}

/* A segment with data, seq..seq+len (and the client's FIN after it when
 * `fin`), acknowledging `ack` of ours: its answer, or a reset. */
static void request(const struct seg_in *in, uint32_t seq, uint32_t ack, const uint8_t *data, size_t len,
		    bool fin)
{
	struct answer a;
	uint32_t end = seq + (uint32_t)len + (fin ? 1 : 0);
	enum answer_kind k = answer_for(data, len, &a);
	if (k != ANSWER_SEND) {
		uint64_t *why = k == ANSWER_SPLIT ? &floor_counters.refused_split
			      : k == ANSWER_EXTRA ? &floor_counters.refused_extra
			      : k == ANSWER_BODY  ? &floor_counters.refused_body
						  : &floor_counters.refused_long;
		(*why)++;
		if (reply(in, ack, end, TCP_RST | TCP_ACK, NULL))
			floor_counters.resets_out++;
		return;
	}
	asked_by(in->src, be16(in->tcp));
	bool close = a.close || fin;
	if (!reply(in, ack, end, TCP_ACK | TCP_PSH | (close ? TCP_FIN : 0), &a))
		return; /* counted; the client sends the request again */
	floor_counters.answers++;
	floor_counters.answers_closing += close;
	if (a.shutdown)
		floor_stop = true;
}

void floor_tcp_input(const struct seg_in *in)
{
	const uint8_t *t = in->tcp;
	if (in->tcp_len < TCP_HLEN) {
		floor_counters.drop_tcp_header++;
		return;
	}
	size_t hlen = (size_t)(t[12] >> 4) * 4;
	if (hlen < TCP_HLEN || hlen > in->tcp_len) {
		floor_counters.drop_tcp_header++;
		return;
	}
	if (be16(t + 2) != floor_cfg.port) {
		floor_counters.drop_port++;
		return;
	}
	if (!in->csum_ok && !checksum_ok(in)) {
		floor_counters.drop_checksum++;
		return;
	}
	if (!options_parse(t + TCP_HLEN, hlen - TCP_HLEN)) {
		floor_counters.drop_options++;
		return;
	}
	unsigned flags = t[13];
	uint32_t seq = be32(t + 4), ack = be32(t + 8);
	if (flags & TCP_RST) {
		floor_counters.resets_in++;
		return;
	}
	if (flags & TCP_SYN) {
		if (flags & (TCP_ACK | TCP_FIN)) {
			floor_counters.drop_flags++;
			return;
		}
		/* Data on a SYN is not taken: the client sends it again. */
		if (reply(in, isn_of(in->src, be16(t)), seq + 1, TCP_SYN | TCP_ACK, NULL))
			floor_counters.syn_acks++;
		return;
	}
	if (!(flags & TCP_ACK)) {
		floor_counters.drop_flags++;
		return;
	}
	if (ack - (isn_of(in->src, be16(t)) + 1) > SEQ_SPAN) {
		floor_counters.drop_stale_ack++;
		return;
	}
	size_t len = in->tcp_len - hlen;
	if (len > 0) {
		request(in, seq, ack, t + hlen, len, flags & TCP_FIN);
	} else if (flags & TCP_FIN) {
		if (reply(in, ack, seq + 1, TCP_FIN | TCP_ACK, NULL))
			floor_counters.fin_acks++;
	} else {
		floor_counters.acks++;
	}
}
