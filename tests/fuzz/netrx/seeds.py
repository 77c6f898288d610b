#!/usr/bin/env python3
"""seeds.py: writes the netrx harness's seed corpus (tests/fuzz/corpus/netrx),
or with --regress the regression inputs it generates (tests/fuzz/regress/netrx;
the README there says what each was).

    python3 tests/fuzz/netrx/seeds.py tests/fuzz/corpus/netrx
    python3 tests/fuzz/netrx/seeds.py --regress tests/fuzz/regress/netrx

Each seed is what tests/fuzz/fuzz_netrx.c reads (its header comment is the
format's reference): a configuration byte, a device byte (DEV_MISS_* of
tests/fuzz/netrx/netrx.h; 0: notifications as QEMU handles them; 0x80: the
records are extended), then records of ctl (1 byte), len (2 bytes,
little-endian) and the bytes a device writes into a receive buffer: the
12-byte virtio_net_hdr (num_buffers 1), then an Ethernet frame. An extended
record has two more bytes after ctl: xctl (the edges of the window the
numbers count from, the app's reading, how repetitions spread and pass time)
and repeat (how many times the frame is delivered). The peer is 10.0.0.1
(52:54:00:ab:cd:ef); the guest is 10.0.0.2 (52:54:00:12:34:56), TCP port 80
and UDP port 7 listening.

Segments of a connection carry sequence numbers relative to it (ctl 0x02,
offsets from our rcv_nxt and snd_nxt, or the edges xctl names) with
checksums fixed by the harness (0x01), since our ISN is not known here;
everything else is a valid frame as it stands, checksums included, so
mutations start from frames that get in.

Three seeds are issue 36's bugs and crashed the code before its fixes
(5cf3145, 3387b91): ooseq_beyond_window and ooseq_beyond_window_scaled
(lwIP's "tcp_receive: ooseq tcplen > rcv_wnd"), tiny_segments_no_read (the
harness's bound on the pbufs one socket holds, RX_PBUFS_PER_SOCKET_MAX).
"""
import os
import struct
import sys

GUEST_MAC = bytes.fromhex("525400123456")
PEER_MAC = bytes.fromhex("525400abcdef")
GUEST_IP = bytes([10, 0, 0, 2])
PEER_IP = bytes([10, 0, 0, 1])
BROADCAST = b"\xff" * 6

FIX_CSUM, REL_SEQ, BATCH = 0x01, 0x02, 0x04
EXT_RECORDS = 0x80  # in the device byte
SEQ_BASE = {"rcv_nxt": 0, "rcv_wnd_edge": 1, "ann_wnd_edge": 2, "ann_right_edge": 3}
ACK_BASE = {"snd_nxt": 0, "lastack": 1, "snd_wnd_edge": 2, "snd_lbb": 3}
READING = {None: 0, "stop": 1, "resume": 2, "one_byte": 3}
SPREAD, TIME_ONCE = 0x40, 0x80
MISS_TX, MISS_RX, MISS_IRQ, MISS_ALTERNATE = 0x01, 0x02, 0x04, 0x08
ACT = {"none": 0, "close": 1, "shut_wr": 2, "shut_rd": 3, "write_big": 4, "connect": 5,
       "query": 6, "relisten": 7}
TIME = {0: 0x00, 10: 0x40, 300: 0x80, 4000: 0xC0}
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def vnet_hdr(num_buffers=1, flags=0, gso_type=0, hdr_len=0, gso_size=0, csum_start=0, csum_offset=0):
    return struct.pack("<BBHHHHH", flags, gso_type, hdr_len, gso_size, csum_start, csum_offset, num_buffers)


NEEDS_CSUM, DATA_VALID, GSO_TCPV4 = 1, 2, 1


def eth(dst, ethertype, payload):
    return dst + PEER_MAC + struct.pack("!H", ethertype) + payload


def ipv4(proto, payload, src=PEER_IP, dst=GUEST_IP, ident=1, frag=0, more=False):
    flags_frag = (0x2000 if more else 0) | (frag // 8)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, flags_frag, 64, proto, 0,
                      src, dst)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def l4_csum(proto, seg, src=PEER_IP, dst=GUEST_IP):
    return csum(src + dst + struct.pack("!BBH", 0, proto, len(seg)) + seg)


def tcp(sport, dport, seq, ack, flags, payload=b"", window=65535, mss=None, wscale=None):
    opts = struct.pack("!BBH", 2, 4, mss) if mss else b""
    if wscale is not None:
        opts += struct.pack("!BBBB", 1, 3, 3, wscale)  # a NOP, then the option
    off = (20 + len(opts)) // 4
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, off << 4, flags,
                      window, 0, 0) + opts
    seg = hdr + payload
    c = l4_csum(6, seg)
    return eth(GUEST_MAC, 0x0800, ipv4(6, seg[:16] + struct.pack("!H", c) + seg[18:]))


def udp(sport, dport, payload):
    seg = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    c = l4_csum(17, seg) or 0xFFFF
    return eth(GUEST_MAC, 0x0800, ipv4(17, seg[:6] + struct.pack("!H", c) + seg[8:]))


def icmp_echo(ident, seqno, data):
    msg = struct.pack("!BBHHH", 8, 0, 0, ident, seqno) + data
    msg = msg[:2] + struct.pack("!H", csum(msg)) + msg[4:]
    return eth(GUEST_MAC, 0x0800, ipv4(1, msg))


def arp(op, dst_mac, target_mac, target_ip):
    body = struct.pack("!HHBBH", 1, 0x0800, 6, 4, op) + PEER_MAC + PEER_IP + target_mac + target_ip
    return eth(dst_mac, 0x0806, body)


def arp_request():
    return arp(1, BROADCAST, bytes(6), GUEST_IP)


def arp_reply():
    return arp(2, GUEST_MAC, GUEST_MAC, GUEST_IP)


def head(cfg=0, dev=0):
    """The configuration and device bytes every input starts with."""
    return bytes([cfg, dev])


def record(frame, ctl=0, action="none", time_ms=0, num_buffers=1, hdr=None):
    data = (hdr if hdr is not None else vnet_hdr(num_buffers)) + frame
    return struct.pack("<BH", ctl | (ACT[action] << 3) | TIME[time_ms], len(data)) + data


def repeat_byte(n):
    """The repeat byte that delivers a frame n times (fuzz_netrx.c's
    repeat_count: 1 to 128 exactly, then multiples of 128)."""
    if 1 <= n <= 128:
        return n - 1
    assert n % 128 == 0 and n <= 16384, n
    return 127 + n // 128


def xrecord(frame, ctl=0, action="none", time_ms=0, seq="rcv_nxt", ack="snd_nxt", reading=None,
            spread=False, time_once=False, repeat=1, num_buffers=1, hdr=None):
    """An extended record (the input's device byte has EXT_RECORDS)."""
    data = (hdr if hdr is not None else vnet_hdr(num_buffers)) + frame
    xctl = (SEQ_BASE[seq] | ACK_BASE[ack] << 2 | READING[reading] << 4 | (SPREAD if spread else 0) |
            (TIME_ONCE if time_once else 0))
    return struct.pack("<BBBH", ctl | (ACT[action] << 3) | TIME[time_ms], xctl, repeat_byte(repeat),
                       len(data)) + data


def rel(sport, dport, flags, payload=b"", seq=0, ack=0, **kw):
    """A segment of an existing connection, numbers relative to it."""
    return tcp(sport, dport, seq, ack, flags, payload, **kw)


GET = b"GET / HTTP/1.1\r\nHost: 10.0.0.2\r\n\r\n"
PEER_ISN = 1000


def handshake(sport):
    return [
        record(tcp(sport, 80, PEER_ISN, 0, SYN, mss=1460)),
        record(rel(sport, 80, ACK), FIX_CSUM | REL_SEQ),
    ]


def xhandshake(sport, mss=1460, wscale=None, window=65535):
    """A handshake in extended records."""
    return [
        xrecord(tcp(sport, 80, PEER_ISN, 0, SYN, mss=mss, wscale=wscale, window=window)),
        xrecord(rel(sport, 80, ACK, window=window), FIX_CSUM | REL_SEQ),
    ]


def window_seeds():
    """Issue 36: segments at the edges of the windows, out of order and
    overlapping, zero windows both ways, an app that stops reading."""
    s = {}
    X = head(0, EXT_RECORDS)
    XNR = head(0x20, EXT_RECORDS)  # the app never reads
    REL = FIX_CSUM | REL_SEQ
    mss = bytes(range(256)) * 5 + bytes(range(180))  # 1460 bytes
    kb = bytes(range(250)) * 4
    # (a) An out-of-order segment of 1,000 bytes starting 10 short of the
    # right edge is queued whole; in-order segments then fill the gap (the
    # last is cut where the queued one starts) and lwIP adds the queued one
    # to a window 10 bytes wide: "tcp_receive: ooseq tcplen > rcv_wnd".
    s["ooseq_beyond_window"] = (XNR + xrecord(arp_request()) + b"".join(xhandshake(41000)) +
                                xrecord(rel(41000, 80, ACK, kb, seq=-10), REL, seq="rcv_wnd_edge") +
                                xrecord(rel(41000, 80, ACK, mss), REL, repeat=64))
    # The same with a scaled window (256 KiB), the app reading at first and
    # stopping by its action.
    s["ooseq_beyond_window_scaled"] = (X + xrecord(arp_request()) + b"".join(xhandshake(41001, wscale=7)) +
                                       xrecord(rel(41001, 80, PSH | ACK, GET), REL, time_ms=10, reading="stop") +
                                       xrecord(rel(41001, 80, ACK, kb, seq=-10), REL, seq="rcv_wnd_edge") +
                                       xrecord(rel(41001, 80, ACK, mss), REL, repeat=256))
    # (b) 1-byte segments, in order, to an app that does not read: each
    # holds a whole receive buffer (or pool pbuf) in the socket's queue.
    s["tiny_segments_no_read"] = (XNR + xrecord(arp_request()) + b"".join(xhandshake(41002)) +
                                  xrecord(rel(41002, 80, ACK, b"x"), REL, repeat=1024))
    # Stop, a few hundred tiny segments, read one byte, then read again:
    # the window closes, opens by one (not announced), then reopens.
    s["tiny_segments_resume"] = (X + xrecord(arp_request()) + b"".join(xhandshake(41003, wscale=2)) +
                                 xrecord(rel(41003, 80, PSH | ACK, GET), REL, reading="stop", time_ms=10) +
                                 xrecord(rel(41003, 80, ACK, b"y"), REL, repeat=128, reading="one_byte") +
                                 xrecord(rel(41003, 80, ACK, b"z"), REL, repeat=100, time_ms=300,
                                         reading="resume") +
                                 xrecord(rel(41003, 80, FIN | ACK), REL, time_ms=300))
    # Our window closes: the app stops reading and the peer fills the
    # window; its probes (a byte at rcv_nxt, and one at rcv_nxt - 1 as
    # Linux probes) come every 300 ms and are answered, not taken; the app
    # reads again, the window update goes out, and the probed byte is
    # taken when sent again.
    s["zero_window_probes_in"] = (XNR + xrecord(arp_request()) + b"".join(xhandshake(41004)) +
                                  xrecord(rel(41004, 80, ACK, mss), REL, repeat=48) +
                                  xrecord(rel(41004, 80, ACK, b"p"), REL, time_ms=300, repeat=4) +
                                  xrecord(rel(41004, 80, ACK, seq=-1), REL, time_ms=300, repeat=3) +
                                  xrecord(rel(41004, 80, ACK, b"p"), REL, time_ms=10, reading="resume") +
                                  xrecord(rel(41004, 80, ACK, b"p"), REL, time_ms=10) +
                                  xrecord(rel(41004, 80, RST), REL))
    # The peer's window closes: the app writes 64 KiB, the peer acknowledges
    # part with a zero window, our probes go out as time passes (acknowledged,
    # still zero), then the window opens and the rest flows.
    s["zero_window_probes_out"] = (X + xrecord(arp_request()) + b"".join(xhandshake(41005, wscale=0)) +
                                   xrecord(rel(41005, 80, PSH | ACK, GET), REL, action="write_big", time_ms=10) +
                                   xrecord(rel(41005, 80, ACK, window=0), REL, time_ms=4000) +
                                   xrecord(rel(41005, 80, ACK, window=0), REL, time_ms=4000, repeat=3) +
                                   xrecord(rel(41005, 80, ACK, window=0, ack=1), REL, ack="lastack", time_ms=300) +
                                   xrecord(rel(41005, 80, ACK, window=65535), REL, time_ms=10, repeat=16) +
                                   xrecord(rel(41005, 80, FIN | ACK), REL, ack="snd_lbb", time_ms=300))
    # Overlaps: a retransmission that starts 5 bytes back, an exact
    # duplicate, out-of-order pieces overlapping each other and one covering
    # two, 1-byte pieces with holes between them (more than lwIP's 16-pbuf
    # out-of-order limit), then in-order data over the first pieces up to
    # the 1-byte ones; three duplicate ACKs after the echo and a write (fast
    # retransmit), an ACK beyond snd_nxt, and segments that each repeat the
    # last 100 bytes taken.
    s["overlapping_retransmissions"] = (
        X + xrecord(arp_request()) + b"".join(xhandshake(41006)) +
        xrecord(rel(41006, 80, PSH | ACK, b"0123456789"), REL) +
        xrecord(rel(41006, 80, PSH | ACK, b"56789abcde", seq=-5), REL) +
        xrecord(rel(41006, 80, PSH | ACK, b"abcde", seq=-5), REL) +
        xrecord(rel(41006, 80, ACK, kb[:50], seq=100), REL) +
        xrecord(rel(41006, 80, ACK, kb[:50], seq=120), REL) +
        xrecord(rel(41006, 80, ACK, kb[:100], seq=90), REL) +
        xrecord(rel(41006, 80, ACK, b"h", seq=300), REL, spread=True, repeat=24) +
        xrecord(rel(41006, 80, ACK, kb[:300]), REL, action="write_big") +
        xrecord(rel(41006, 80, ACK), REL, ack="lastack", repeat=3, time_ms=10) +
        xrecord(rel(41006, 80, ACK, ack=1460), REL, ack="snd_wnd_edge", time_ms=300) +
        xrecord(rel(41006, 80, ACK, kb[:200], seq=-100), REL, time_ms=10, repeat=8))
    # FINs at and beyond the right edge, which lwIP must not take; one
    # out of order inside the window; then in-order data up to it.
    s["fin_beyond_window"] = (XNR + xrecord(arp_request()) + b"".join(xhandshake(41007)) +
                              xrecord(rel(41007, 80, FIN | ACK), REL, seq="rcv_wnd_edge") +
                              xrecord(rel(41007, 80, FIN | ACK, seq=1), REL, seq="ann_right_edge") +
                              xrecord(rel(41007, 80, FIN | ACK, kb[:100], seq=-50), REL, seq="rcv_wnd_edge") +
                              xrecord(rel(41007, 80, FIN | ACK, seq=2000), REL, time_ms=10) +
                              xrecord(rel(41007, 80, ACK, mss[:1000]), REL, repeat=2, time_ms=10) +
                              xrecord(rel(41007, 80, ACK, mss[:1000], seq=-1000), REL, seq="ann_wnd_edge",
                                      time_ms=300))
    # RSTs at the edges: at the right edge, one past it, one short of it
    # and one byte before rcv_nxt (each answered by an ACK or ignored),
    # then one at rcv_nxt, which ends the connection.
    s["rst_window_edges"] = (X + xrecord(arp_request()) + b"".join(xhandshake(41008, wscale=3)) +
                             xrecord(rel(41008, 80, PSH | ACK, GET), REL, time_ms=10) +
                             xrecord(rel(41008, 80, RST), REL, seq="rcv_wnd_edge") +
                             xrecord(rel(41008, 80, RST, seq=1), REL, seq="rcv_wnd_edge") +
                             xrecord(rel(41008, 80, RST, seq=-1), REL, seq="ann_right_edge") +
                             xrecord(rel(41008, 80, RST | ACK, seq=-1), REL, time_ms=10) +
                             xrecord(rel(41008, 80, RST), REL, time_ms=10))
    return s


def seeds():
    s = window_seeds()
    s["syn"] = head(0) + record(tcp(40000, 80, PEER_ISN, 0, SYN, mss=1460))
    s["arp_request"] = head(0) + record(arp_request())
    s["udp_echo"] = head(0) + record(arp_request()) + record(udp(5353, 7, b"hello, echo\n"), time_ms=10)
    s["icmp_echo"] = head(0) + record(arp_request()) + record(icmp_echo(0x1234, 1, bytes(range(32))))
    # A request, its answer acknowledged, our FIN answered and acknowledged.
    s["http_get"] = (head(0) + record(arp_request()) + b"".join(handshake(40001)) +
                     record(rel(40001, 80, PSH | ACK, GET), FIX_CSUM | REL_SEQ, time_ms=10) +
                     record(rel(40001, 80, ACK), FIX_CSUM | REL_SEQ) +
                     record(rel(40001, 80, FIN | ACK), FIX_CSUM | REL_SEQ, time_ms=300) +
                     record(rel(40001, 80, ACK), FIX_CSUM | REL_SEQ, time_ms=4000))
    # The app never reads and pushes 64 KiB: windows close both ways; then a reset.
    s["no_read_big_write"] = (head(0x20 | 0x04) + record(arp_request()) + b"".join(handshake(40002)) +
                              record(rel(40002, 80, PSH | ACK, GET * 4), FIX_CSUM | REL_SEQ,
                                     action="write_big", time_ms=300) +
                              record(rel(40002, 80, ACK, window=0), FIX_CSUM | REL_SEQ, time_ms=4000) +
                              record(rel(40002, 80, RST | ACK), FIX_CSUM | REL_SEQ))
    # The app connects out; the peer answers the SYN, sends data, then a FIN.
    s["connect_out"] = (head(0) + record(arp_reply(), action="connect") +
                        record(tcp(8080, 40000, PEER_ISN, 0, SYN | ACK, mss=1460), FIX_CSUM | REL_SEQ) +
                        record(rel(8080, 40000, PSH | ACK, b"hello from the peer\n"), FIX_CSUM | REL_SEQ,
                               action="query") +
                        record(rel(8080, 40000, FIN | ACK), FIX_CSUM | REL_SEQ, time_ms=300))
    # Two SYNs in one batch, the first closed by the app mid-handshake; a
    # buffer claiming two merged buffers; a runt.
    s["batch_and_bad_headers"] = (head(0x80) + record(arp_request(), BATCH) +
                                  record(tcp(40003, 80, PEER_ISN, 0, SYN, mss=536), BATCH) +
                                  record(tcp(40004, 80, PEER_ISN, 0, SYN, mss=536)) +
                                  record(udp(1, 7, b"x"), num_buffers=2) +
                                  struct.pack("<BH", 0, 8) + bytes(8))
    # A UDP datagram in two fragments.
    payload = bytes(range(256)) * 4
    seg = struct.pack("!HHHH", 5000, 7, 8 + len(payload), 0) + payload
    seg = seg[:6] + struct.pack("!H", l4_csum(17, seg) or 0xFFFF) + seg[8:]
    s["udp_fragments"] = (head(0) + record(arp_request()) +
                          record(eth(GUEST_MAC, 0x0800, ipv4(17, seg[:512], ident=7, more=True))) +
                          record(eth(GUEST_MAC, 0x0800, ipv4(17, seg[512:], ident=7, frag=512))))
    # Out-of-order data, a half-close from our side, then the peer's reset.
    s["ooseq_shutdown"] = (head(0x10) + record(arp_request()) + b"".join(handshake(40005)) +
                           record(rel(40005, 80, PSH | ACK, b"world", seq=5), FIX_CSUM | REL_SEQ) +
                           record(rel(40005, 80, PSH | ACK, b"hello"), FIX_CSUM | REL_SEQ, action="shut_wr") +
                           record(rel(40005, 80, RST), FIX_CSUM | REL_SEQ, time_ms=10))
    # The device's notifications lost as issue 12's race loses them: a
    # request answered while the transmit side misses every publish after it
    # went back to waiting; a burst that uses every receive buffer while the
    # receive side misses the refill's notification; both, every other time.
    s["lost_tx_kick"] = head(0, MISS_TX) + s["http_get"][2:]
    # 32 batched datagrams fill every receive buffer; the 33rd finds none (the
    # device goes back to waiting) and the stack polls right after it.
    burst = (b"".join(record(udp(6000 + i, 7, b"burst %d" % i), BATCH) for i in range(32)) +
             record(udp(6032, 7, b"dropped: no buffer")))
    s["lost_rx_kick"] = (head(0, MISS_RX) + record(arp_request()) + burst +
                         record(udp(6100, 7, b"dropped: waits for the notification")) +
                         record(udp(6101, 7, b"after the repair"), time_ms=10))
    s["lost_both_alternate"] = (head(0x02, MISS_TX | MISS_RX | MISS_IRQ | MISS_ALTERNATE) +
                                s["http_get"][2:-len(record(rel(40001, 80, ACK), FIX_CSUM | REL_SEQ, time_ms=4000))] +
                                burst + record(udp(6100, 7, b"after the burst"), time_ms=4000))
    # Offloads (issue 14). The app writes 64 KiB to a peer that acknowledges
    # it: runs of full segments go out as frames the device must segment.
    acks = b"".join(record(rel(40006, 80, ACK), FIX_CSUM | REL_SEQ, time_ms=10) for k in range(12))
    s["tso_bulk_out"] = (head(0x02) + record(arp_request()) + b"".join(handshake(40006)) +
                         record(rel(40006, 80, PSH | ACK, GET), FIX_CSUM | REL_SEQ, action="write_big",
                                time_ms=10) + acks)
    # A 4,000-byte segment the host merged (GUEST_TSO4: two buffers, its
    # checksum partial), one whose good checksum the host vouches for, one
    # with a wrong checksum it vouches for (taken: the device is trusted).
    big = bytes(range(256)) * 16
    gso = vnet_hdr(flags=NEEDS_CSUM, gso_type=GSO_TCPV4, hdr_len=54, gso_size=1460, csum_start=34,
                   csum_offset=16)
    valid = vnet_hdr(flags=DATA_VALID)
    s["rx_offloads"] = (head(0) + record(arp_request()) + b"".join(handshake(40007)) +
                        record(rel(40007, 80, ACK, big[:4000]), FIX_CSUM | REL_SEQ, hdr=gso) +
                        record(rel(40007, 80, PSH | ACK, GET, seq=4000), FIX_CSUM | REL_SEQ, hdr=valid) +
                        record(rel(40007, 80, ACK, b"x" * 100, seq=4000 + len(GET)), REL_SEQ, hdr=valid,
                               time_ms=10))
    # Headers a device must not send: unknown flags, UDP segmentation, a
    # checksum offset that is not TCP's, NEEDS_CSUM on ARP, num_buffers 0
    # and far too many (the buffers after it are taken as its own and
    # dropped with it); each dropped and counted, and a good one taken.
    syn = tcp(40008, 80, PEER_ISN, 0, SYN, mss=1460)
    s["rx_bad_headers"] = (head(0) + record(arp_request(), hdr=vnet_hdr(flags=NEEDS_CSUM, csum_start=14,
                                                                         csum_offset=6)) +
                           record(syn, hdr=vnet_hdr(flags=4)) +
                           record(syn, hdr=vnet_hdr(gso_type=3, gso_size=1400)) +
                           record(syn, hdr=vnet_hdr(flags=NEEDS_CSUM, csum_start=34, csum_offset=6)) +
                           record(syn, hdr=vnet_hdr(gso_type=GSO_TCPV4, gso_size=0)) +
                           record(syn, num_buffers=0) +
                           record(syn, hdr=vnet_hdr(flags=NEEDS_CSUM, csum_start=34, csum_offset=16)) +
                           record(syn, num_buffers=999))
    return s


# ---- regressions: lwIP's assertions a peer could reach (tests/fuzz/regress/netrx) ----
#
# One input per assertion that docs/lwip-assert-audit.draft.md found a peer
# (or the device) can reach, each named after it. Each crashed the code
# before 4d428f2 ("guards: every lwIP assertion a frame can reach is dropped
# or repaired") with the assertion its name gives, and passes with the guard
# that commit added (the counter on the 'net: guards:' line says which).

# A merged TCP segment (GUEST_TSO4), as QEMU hands one over: the only way a
# peer's single frame fills most of a 64 KiB window. In the harness lwIP's
# heap comes from malloc and has no size (lwip_stats.mem.avail is 0), so
# net_rx_memory_short() always holds and a socket whose app does not read
# takes at most SOCK_RX_BUFS_FAIR (16) buffers (sock_rx.c); lwIP then keeps
# the next piece as refused data and takes no more data behind it. So
# windows are filled with these rather than with many full segments.
GSO_HDR = vnet_hdr(flags=NEEDS_CSUM, gso_type=GSO_TCPV4, hdr_len=54, gso_size=1460, csum_start=34,
                   csum_offset=16)
# The most payload one record's merged segment carries (a record is at most
# 65535 bytes: header, Ethernet, IPv4 and TCP headers, payload).
GSO_PAYLOAD_MAX = 65535 - 12 - 54
TCP_MSS_PEER = 1460  # a full segment's payload
WND_UNSCALED = 65535  # our window to a peer that asks for no scaling
REL = FIX_CSUM | REL_SEQ


def pattern(n):
    return (bytes(range(251)) * (n // 251 + 1))[:n]


def assert_ooseq_tcplen_gt_rcv_wnd():
    """"tcp_receive: ooseq tcplen > rcv_wnd" (tcp_in.c:1580) by FIN
    inheritance: B (5 bytes and FIN, 15 short of the right edge E) is queued
    out of order; C (20 bytes ending exactly at E, which the old
    out-of-order guard let in) covers it and takes its FIN, so C ends at
    E + 1. In-order data then reaches C with a window of 20 and lwIP takes
    C's 21. Guard: past fin (C reaches past the queued FIN)."""
    port = 42100
    return (head(0x20, EXT_RECORDS) + xrecord(arp_request()) + b"".join(xhandshake(port)) +
            xrecord(rel(port, 80, FIN | ACK, b"B" * 5, seq=-15), REL, seq="rcv_wnd_edge") +
            xrecord(rel(port, 80, ACK, b"C" * 20, seq=-20), REL, seq="rcv_wnd_edge") +
            xrecord(rel(port, 80, ACK, pattern(TCP_MSS_PEER)), REL) +
            xrecord(rel(port, 80, ACK, pattern(WND_UNSCALED - 20 - TCP_MSS_PEER)), REL, hdr=GSO_HDR))


def assert_tcplen_gt_rcv_wnd():
    """"tcp_receive: tcplen > rcv_wnd" (tcp_in.c:1544), FIN inheritance on
    the in-order path: one segment leaves a window W (64,075); B (5 bytes
    and FIN at rcv_nxt + 10) is queued; then a merged segment of exactly W
    bytes from rcv_nxt covers B and takes its FIN: W + 1. Guard: past fin
    (its data ends past B's FIN)."""
    port = 42101
    return (head(0x20, EXT_RECORDS) + xrecord(arp_request()) + b"".join(xhandshake(port)) +
            xrecord(rel(port, 80, ACK, pattern(TCP_MSS_PEER)), REL) +
            xrecord(rel(port, 80, FIN | ACK, b"B" * 5, seq=10), REL) +
            xrecord(rel(port, 80, ACK, pattern(WND_UNSCALED - TCP_MSS_PEER)), REL, hdr=GSO_HDR))


def assert_mss_local_too_small_mss_option():
    """"mss_local is too small" (tcp_out.c:486) from an MSS option on a
    segment without SYN: the app writes 64 KiB, lwIP holds 1460-byte
    segments unsent (cwnd), and the peer's next data segment carries MSS
    300; the app echoes it and tcp_write finds the last unsent segment
    larger than its new segment size. Guard: mss not on syn."""
    port = 42102
    return (head(0, EXT_RECORDS) + xrecord(arp_request()) + b"".join(xhandshake(port)) +
            xrecord(rel(port, 80, PSH | ACK, GET), REL, action="write_big", time_ms=10) +
            xrecord(rel(port, 80, PSH | ACK, b"x", mss=300), REL, time_ms=10))


def assert_mss_local_too_small_syn_window():
    """"mss_local is too small" (tcp_out.c:486) from a SYN's window of 1: the
    socket hands lwIP 3 bytes (one window and two "segments" of 1), which
    wait unsent as one segment; a window of 2 then makes tcp_write's
    segment size 1 (half the largest window) when the app writes again.
    Guard: wnd max floor (a repair)."""
    port = 42103
    return (head(0, EXT_RECORDS) + xrecord(arp_request()) +
            xrecord(tcp(port, 80, PEER_ISN, 0, SYN, mss=1460, window=1)) +
            xrecord(rel(port, 80, ACK, window=1), REL) +
            xrecord(rel(port, 80, PSH | ACK, GET, window=1), REL, action="write_big", time_ms=10) +
            xrecord(rel(port, 80, PSH | ACK, b"x", window=2), REL, time_ms=10))


def assert_split_le_mss():
    """"split <= mss" (tcp_out.c:859): the app writes 64 KiB; the peer
    acknowledges what was sent with a window of 100 and MSS 50, so persist
    starts with a 1460-byte head, and 1.5 s later lwIP splits it at 100,
    more than the MSS. Guard: mss not on syn."""
    port = 42104
    return (head(0, EXT_RECORDS) + xrecord(arp_request()) + b"".join(xhandshake(port)) +
            xrecord(rel(port, 80, PSH | ACK, GET), REL, action="write_big", time_ms=10) +
            xrecord(rel(port, 80, ACK, window=100, mss=50), REL, time_ms=4000))


def assert_split_into_length_0():
    """"Can't split segment into length 0" (tcp_out.c:851): a SYN with MSS 1
    and window scale 1 leaves cwnd at 4; an ACK with MSS 1460 raises the
    MSS, so the app's 64 KiB go into 1460-byte segments; a window of 4
    (field 2) is cwnd's size, so persist starts; a window of 65536 then
    (field 32768; a byte of data makes lwIP take it) still leaves cwnd too
    small, and at the persist tick lwIP splits at (u16_t)65536 = 0. Guard:
    mss not on syn."""
    port = 42105
    return (head(0x20, EXT_RECORDS) + xrecord(arp_request()) +
            xrecord(tcp(port, 80, PEER_ISN, 0, SYN, mss=1, wscale=1)) +
            xrecord(rel(port, 80, ACK, window=2), REL) +
            xrecord(rel(port, 80, ACK, window=2, mss=1460), REL, action="write_big", time_ms=10) +
            xrecord(rel(port, 80, ACK, b"x", window=32768), REL, time_ms=4000))


def assert_persist_empty_send_buffer():
    """"tcp_slowtimr: persist ticking with empty send buffer" (tcp.c:1238):
    the handshake's ACK shuts the window, the app echoes one byte, which
    waits under persist; the zero-window probe carries it and the peer
    acknowledges it, window still 0: unsent is empty, persist runs on, and
    the next slow tick asserts. Guard: persist stopped (a repair)."""
    port = 42106
    return (head(0, EXT_RECORDS) + xrecord(arp_request()) +
            xrecord(tcp(port, 80, PEER_ISN, 0, SYN, mss=1460)) +
            xrecord(rel(port, 80, ACK, window=0), REL) +
            xrecord(rel(port, 80, PSH | ACK, b"x", window=0), REL, time_ms=4000) +
            xrecord(rel(port, 80, ACK, window=0), REL, time_ms=4000))


def assert_no_packet_queues():
    """"no packet queues allowed!" (etharp.c:1017): an ICMP echo request in
    two fragments, the second carrying nothing, from 10.0.0.9 (on the link,
    never ARPed). Reassembly ends the chain with an empty pbuf, the reply is
    built in place and queued for ARP, and etharp_query asserts on the
    chain. The first fragment must be copied (a lent one makes icmp copy the
    request, and pbuf_copy refuses the chain without asserting): three
    connections whose app does not read each hold a 32-buffer merged
    segment, the driver's whole reserve of 96, so every later frame is
    copied. Guard: empty fragment."""
    stranger = bytes([10, 0, 0, 9])
    echo = struct.pack("!BBHHH", 8, 0, 0, 0x4242, 1)
    echo = echo[:2] + struct.pack("!H", csum(echo)) + echo[4:]

    def fragment(payload, offset, more):
        return eth(GUEST_MAC, 0x0800, ipv4(1, payload, src=stranger, ident=0x77, frag=offset, more=more))

    data = head(0x20, EXT_RECORDS) + xrecord(arp_request())
    for port in (42107, 42108, 42109):
        data += (b"".join(xhandshake(port)) +
                 xrecord(rel(port, 80, ACK, pattern(GSO_PAYLOAD_MAX)), REL, hdr=GSO_HDR))
    return data + xrecord(fragment(echo, 0, True)) + xrecord(fragment(b"", 8, False), time_ms=10)


def assert_not_trimmed_to_ooseq_queue():
    """"tcp_receive: segment not trimmed correctly to ooseq queue"
    (tcp_in.c:1533), from a SYN|ACK in SYN_RCVD: with data and 5 bytes
    ahead of rcv_nxt, it completes the handshake and is queued out of order
    with its SYN, which counts one more sequence number than its data. A
    segment right after its data is queued behind it; when in-order data
    reaches the SYN segment, rcv_nxt passes that one's start by one, and
    the next in-order segment is "trimmed" to 65535 bytes. Guard: bad syn."""
    port = 42110
    return (head(0x20, EXT_RECORDS) + xrecord(arp_request()) +
            xrecord(tcp(port, 80, PEER_ISN, 0, SYN, mss=1460)) +
            xrecord(rel(port, 80, SYN | ACK, b"S" * 20, seq=5), REL) +
            xrecord(rel(port, 80, ACK, b"T" * 10, seq=25), REL) +
            xrecord(rel(port, 80, ACK, b"A" * 5), REL) +
            xrecord(rel(port, 80, ACK, b"U" * 3), REL, time_ms=10))


def check_handshake_scaling():
    """Not an assertion: the harness's check that a connection in SYN_RCVD
    scales windows only if our SYN-ACK offered it. The first SYN has no
    window scale, the SYN-ACK offers none; the same SYN again with window
    scale 7 made lwIP turn scaling on. Guard: bad syn."""
    port = 42111
    return (head(0x20, EXT_RECORDS) + xrecord(arp_request()) + xrecord(tcp(port, 80, PEER_ISN, 0, SYN, mss=1460)) +
            xrecord(tcp(port, 80, PEER_ISN, 0, SYN, mss=1460, wscale=7), time_ms=10))


def asan_short_arp():
    """Not an assertion: an ARP request cut after the sender's address (20
    of the 28 bytes of the ARP header): etharp_input reads the target's
    address past the frame, which the harness's device poisons for
    AddressSanitizer (use-after-poison). Guard: short arp."""
    return head(0) + record(arp_request()[:14 + 20], time_ms=10)


def regressions():
    """Input name: generator."""
    return {
        "ooseq-fin-inherited-past-window": assert_ooseq_tcplen_gt_rcv_wnd,
        "in-order-fin-inherited-past-window": assert_tcplen_gt_rcv_wnd,
        "mss-option-on-ack-under-queued-data": assert_mss_local_too_small_mss_option,
        "syn-window-1-then-window-2": assert_mss_local_too_small_syn_window,
        "persist-split-beyond-lowered-mss": assert_split_le_mss,
        "persist-split-at-window-65536": assert_split_into_length_0,
        "persist-probe-byte-acknowledged": assert_persist_empty_send_buffer,
        "echo-empty-last-fragment-unresolved": assert_no_packet_queues,
        "synack-in-synrcvd-queued-out-of-order": assert_not_trimmed_to_ooseq_queue,
        "syn-again-with-window-scale": check_handshake_scaling,
        "arp-shorter-than-header": asan_short_arp,
    }


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--regress":
        out = sys.argv[2] if len(sys.argv) > 2 else "tests/fuzz/regress/netrx"
        inputs = {name: gen() for name, gen in regressions().items()}
    else:
        out = sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/corpus/netrx"
        inputs = seeds()
    os.makedirs(out, exist_ok=True)
    for name, data in sorted(inputs.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
