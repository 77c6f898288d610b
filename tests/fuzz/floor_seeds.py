#!/usr/bin/env python3
"""floor_seeds.py: writes the seed corpus of fuzz_floor (tests/fuzz/corpus/floor).

    tests/fuzz/floor_seeds.py [DIR]

Each seed is what fuzz_floor.c reads: a control byte (bit 0: the device
completes checksums; bit 1: /__shutdown allowed), then frames, each a 2-byte
big-endian length, a flags byte (bit 0: checksum vouched for; bit 1: the
device hands its frames back first; bit 2: the ring is full; bit 3: two
buffers) and the frame. The frames are what a client on 192.0.2.1 sends the
floor at 192.0.2.2:8080, checksums right, ACKs in the floor's sequence space
as the harness keys it (key 0: tcp.c's isn_of, worked out here).
"""
import os
import struct
import sys

FLOOR_MAC, CLIENT_MAC = bytes.fromhex("525400123456"), bytes.fromhex("020000000001")
FLOOR_IP, CLIENT_IP = bytes([192, 0, 2, 2]), bytes([192, 0, 2, 1])
PORT = 8080
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
M64 = (1 << 64) - 1


def mix64(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def isn(sport):
    src = int.from_bytes(CLIENT_IP, "big")
    return mix64(mix64(src << 16 | sport)) & 0xFFFFFFFF


def checksum(data):
    data += b"\0" * (len(data) & 1)
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4(proto, payload):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0x4000, 64, proto, 0, CLIENT_IP, FLOOR_IP)
    hdr = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
    return FLOOR_MAC + CLIENT_MAC + b"\x08\x00" + hdr + payload


def tcp(sport, seq, ack, flags, payload=b"", options=b""):
    seg = struct.pack("!HHIIBBHHH", sport, PORT, seq, ack, (5 + len(options) // 4) << 4, flags, 64240, 0, 0)
    seg += options + payload
    pseudo = CLIENT_IP + FLOOR_IP + struct.pack("!BBH", 0, 6, len(seg))
    seg = seg[:16] + struct.pack("!H", checksum(pseudo + seg)) + seg[18:]
    return ipv4(6, seg)


def arp_request():
    body = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + CLIENT_MAC + CLIENT_IP + b"\0" * 6 + FLOOR_IP
    return b"\xff" * 6 + CLIENT_MAC + b"\x08\x06" + body


def seed(control, *frames):
    out = bytes([control])
    for f in frames:
        flags, frame = f if isinstance(f, tuple) else (0, f)
        out += struct.pack("!HB", len(frame), flags) + frame
    return out


def conversation(sport, requests, fin=True):
    """SYN, each request (answered keep-alive), then a FIN."""
    c, s = 1000, isn(sport) + 1
    frames = [tcp(sport, c - 1, 0, SYN, options=struct.pack("!BBH", 2, 4, 1460))]
    for r in requests:
        frames.append(tcp(sport, c, s, ACK | PSH, r))
        c += len(r)
        s += 130  # any advance inside the floor's sequence space will do
    if fin:
        frames.append(tcp(sport, c, s, ACK | FIN))
    return frames


GET11 = b"GET / HTTP/1.1\r\nHost: 192.0.2.2:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n"
GET10K = b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: 192.0.2.2:8080\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
GET10 = b"GET / HTTP/1.0\r\nHost: 192.0.2.2:8080\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
SEEDS = {
    "arp": seed(0, arp_request()),
    "curl": seed(0, arp_request(), *conversation(40001, [GET11])),
    "ab-keepalive-offload": seed(1, *conversation(40002, [GET10K, GET10K, GET10K])),
    "ab-close": seed(0, *conversation(40003, [GET10])),
    "vouched-checksum": seed(0, *[(1, f) for f in conversation(40004, [GET11])]),
    "others": seed(2, *conversation(40005, [b"HEAD / HTTP/1.1\r\n\r\n", b"GET /missing HTTP/1.1\r\n\r\n",
                                            b"GET /bytes/100 HTTP/1.1\r\n\r\n", b"DELETE / HTTP/1.1\r\n\r\n",
                                            b"GET /__shutdown HTTP/1.1\r\n\r\n"], fin=False)),
    "refused": seed(0, *conversation(40006, [b"GET / HTTP/1.1\r\n", b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
                                             GET11 + GET11, b"GET /bytes/5000 HTTP/1.1\r\n\r\n", b"\x16\x03\x01"])),
    "ring-full": seed(0, *[(4 if i == 1 else 2, f) for i, f in enumerate(conversation(40007, [GET11]))]),
    "hostile": seed(0, tcp(40008, 1, 0, SYN, options=b"\x01\x01\x02\x04"),
                    tcp(40008, 1, 0, SYN | ACK), tcp(40008, 1, 12345, ACK, GET11),
                    tcp(40008, 1, 0, RST), ipv4(17, b"\0" * 8), FLOOR_MAC + CLIENT_MAC + b"\x08\x00\x45",
                    (8, tcp(40009, 1, 0, SYN))),
}


def main(argv):
    out = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "floor")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"{len(SEEDS)} seeds in {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
