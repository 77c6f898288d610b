#!/usr/bin/env python3
"""seeds.py: writes the netrx harness's seed corpus (tests/fuzz/corpus/netrx).

    python3 tests/fuzz/netrx/seeds.py tests/fuzz/corpus/netrx

Each seed is what tests/fuzz/fuzz_netrx.c reads: a configuration byte, a
device byte (DEV_MISS_* of tests/fuzz/netrx/netrx.h; 0: notifications as QEMU
handles them), then records of ctl (1 byte), len (2 bytes, little-endian) and the bytes a device
writes into a receive buffer: the 12-byte virtio_net_hdr (num_buffers 1),
then an Ethernet frame. The peer is 10.0.0.1 (52:54:00:ab:cd:ef); the guest
is 10.0.0.2 (52:54:00:12:34:56), TCP port 80 and UDP port 7 listening.

Segments of a connection carry sequence numbers relative to it (ctl 0x02,
offsets from our rcv_nxt and snd_nxt) with checksums fixed by the harness
(0x01), since our ISN is not known here; everything else is a valid frame as
it stands, checksums included, so mutations start from frames that get in.
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


def tcp(sport, dport, seq, ack, flags, payload=b"", window=65535, mss=None):
    opts = struct.pack("!BBH", 2, 4, mss) if mss else b""
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


def seeds():
    s = {}
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


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/corpus/netrx"
    os.makedirs(out, exist_ok=True)
    for name, data in sorted(seeds().items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
