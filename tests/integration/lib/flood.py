#!/usr/bin/env python3
"""flood.py: hostile load for the flood tests (run inside the test namespace).

  flood.py conns HOST PORT N      open N connections at once and hold them; send
                                  one GET on each that was established and
                                  collect every answer, closing each answered
                                  connection so the ones the server kept in its
                                  backlog get their turn. Prints one summary line:
                                  "conns: tried N established E refused R
                                  timed-out T answered A" and exits 1 if an
                                  established connection got no (or a wrong)
                                  answer.
  flood.py syn HOST PORT N        send N raw SYNs to HOST:PORT from addresses
                                  of HOST's /24 that nobody holds (.100-.199),
                                  random ports and sequence numbers; prints
                                  "syn: sent N in S s".

Only addresses inside the test namespace's network are used. Other tests
import tcp_packet() to build raw segments.
"""
import errno
import os
import random
import resource
import selectors
import socket
import struct
import sys
import time

from rawtcp import checksum  # beside this file

REQUEST = b"GET / HTTP/1.1\r\nHost: flood\r\n\r\n"
BODY_END = b"a poll()-based server.\n"


def conns(host, port, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, n + 256)), hard))
    sel = selectors.DefaultSelector()
    pending = {}
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        rc = s.connect_ex((host, port))
        if rc not in (0, errno.EINPROGRESS):
            raise SystemExit(f"connect: {os.strerror(rc)}")
        pending[s.fileno()] = s
        sel.register(s, selectors.EVENT_WRITE)

    # The handshakes: a SYN the server drops is sent again by the host (1 s,
    # 3 s, ...); give them 8 s, then count what is still waiting as timed out.
    established, refused = [], 0
    deadline = time.monotonic() + 8
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.5):
            s = key.fileobj
            sel.unregister(s)
            del pending[s.fileno()]
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err == 0:
                established.append(s)
            else:
                refused += 1
                s.close()
    timed_out = len(pending)
    for s in pending.values():
        sel.unregister(s)
        s.close()

    # Established connections the server has not accepted yet are still in
    # its backlog; their requests wait there and must be answered once
    # answered connections close and free the server's slots.
    bad = 0
    got = {}
    for s in established:
        try:
            s.send(REQUEST)
        except OSError:
            bad += 1
            s.close()
            continue
        got[s.fileno()] = b""
        sel.register(s, selectors.EVENT_READ)
    answered = 0
    deadline = time.monotonic() + 60
    while got and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data:
                got[s.fileno()] += data
                if not got[s.fileno()].endswith(BODY_END):
                    continue
                if not got[s.fileno()].startswith(b"HTTP/1.1 200 OK\r\n"):
                    bad += 1
                else:
                    answered += 1
            else:
                bad += 1  # closed or reset without a whole answer
            sel.unregister(s)
            del got[s.fileno()]
            s.close()
    unanswered = len(got)
    print(f"conns: tried {n} established {len(established)} refused {refused} "
          f"timed-out {timed_out} answered {answered} bad {bad} unanswered {unanswered}")
    return 0 if bad == 0 and unanswered == 0 else 1


def tcp_packet(src, dst, sport, dport, seq, flags, payload=b"", ident=0):
    """An IPv4 packet holding one TCP segment, checksums filled in (src and
    dst as 4 bytes, flags as the TCP flags byte)."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags, 64240, 0, 0) + payload
    pseudo = src + dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), ident & 0xFFFF, 0, 64,
                     socket.IPPROTO_TCP, 0, src, dst)
    return ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:] + tcp


def syn(host, port, n):
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    dst = socket.inet_aton(host)
    net = host.rsplit(".", 1)[0]
    rng = random.Random(7)
    start = time.monotonic()
    for i in range(n):
        src = socket.inet_aton(f"{net}.{100 + i % 100}")
        packet = tcp_packet(src, dst, rng.randrange(1024, 65536), port, rng.getrandbits(32), 0x02, ident=i)
        while True:
            try:
                raw.sendto(packet, (host, 0))
                break
            except OSError as e:  # the tap's queue is full: wait a moment
                if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                    raise
                time.sleep(0.001)
    print(f"syn: sent {n} in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in ("conns", "syn"):
        sys.exit(__doc__)
    mode, host, port, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    sys.exit(conns(host, port, n) if mode == "conns" else syn(host, port, n))
