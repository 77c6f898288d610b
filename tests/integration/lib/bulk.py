#!/usr/bin/env python3
"""bulk.py: the client of tests/images/bulk.c, for the offload tests (16-19).

    bulk.py HOST SINK,SOURCE,ECHO,QUIT [--bytes N] [--streams K] [--timeout S] [--quit]

Runs K streams of each kind at once (threads), N bytes each: sink (send the
bulk pattern, expect "LEN CRC" of exactly it back), source (ask for N bytes
of a seed, expect exactly the pattern), echo (send the pattern, expect it
back while sending). Prints one line per stream and a total; exits 0 only if
every byte of every stream came back as it should within the timeout. With
--quit it then ends the server (its quit port). Standard library only.
"""
import argparse
import socket
import sys
import threading
import time
import zlib

BLOCK = 65536


def pattern(seed, n):
    """The server's bytes for seed: see tests/images/bulk.c."""
    x, base = seed, bytearray(BLOCK)
    for i in range(BLOCK):
        base[i] = x >> 56
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    base = bytes(base)
    out = bytearray()
    for j in range((n + BLOCK - 1) // BLOCK):
        shift = (13 * j) & 0xFF
        table = bytes((b + shift) & 0xFF for b in range(256))
        out += base.translate(table)
    return bytes(out[:n])


def recv_all(s, limit=None):
    chunks, got = [], 0
    while limit is None or got < limit:
        b = s.recv(1 << 16)
        if not b:
            break
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def sink(host, port, data):
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        line = recv_all(s).decode(errors="replace").strip()
    want = "%d %08x" % (len(data), zlib.crc32(data))
    return line == want, "sink %d bytes: answer %r, expected %r" % (len(data), line, want)


def source(host, port, seed, n):
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(b"%d %d\n" % (n, seed))
        got = recv_all(s)
    want = pattern(seed, n)
    if got == want:
        return True, "source %d bytes: exact" % n
    first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
    return False, "source: got %d bytes of %d, first difference at %d" % (len(got), n, first)


def echo(host, port, data):
    with socket.create_connection((host, port), timeout=30) as s:
        box = {}

        def reader():
            box["got"] = recv_all(s, len(data))
        t = threading.Thread(target=reader)
        t.start()
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        t.join()
    got = box.get("got", b"")
    return got == data, "echo %d bytes: %s" % (len(data), "exact" if got == data else
                                                 "got %d bytes, %s" % (len(got), "differing"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("ports")
    ap.add_argument("--bytes", type=int, default=4 << 20)
    ap.add_argument("--streams", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--quit", action="store_true")
    a = ap.parse_args()
    p_sink, p_source, p_echo, p_quit = (int(x) for x in a.ports.split(","))
    jobs = []
    for k in range(a.streams):
        seed = 1000 + k
        data = pattern(seed, a.bytes)
        jobs += [(sink, (a.host, p_sink, data)), (source, (a.host, p_source, seed + 500, a.bytes)),
                 (echo, (a.host, p_echo, data))]
    results = [None] * len(jobs)

    def run(i, fn, args):
        try:
            results[i] = fn(*args)
        except OSError as e:
            results[i] = (False, "%s: %s" % (fn.__name__, e))
    start = time.monotonic()
    threads = [threading.Thread(target=run, args=(i, fn, args), daemon=True) for i, (fn, args) in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.1, a.timeout - (time.monotonic() - start)))
    ok = True
    for r in results:
        r = r or (False, "did not finish within %.0f s" % a.timeout)
        print(r[1])
        ok &= r[0]
    secs = time.monotonic() - start
    print("bulk: %d streams, %d bytes each way per stream, %.1f s: %s" %
          (len(jobs), a.bytes, secs, "all exact" if ok else "FAILED"))
    if a.quit:
        try:
            socket.create_connection((a.host, p_quit), timeout=10).close()
        except OSError as e:
            print("quit: %s" % e)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
