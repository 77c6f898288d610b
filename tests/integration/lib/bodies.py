#!/usr/bin/env python3
"""bodies.py HOST PORT [BIG]: large answers and request bodies against httpd.

Checks, byte for byte or by SHA-256:
  - GET /bytes/N for several N (BIG bytes among them, default 32 MiB) on one
    keep-alive connection: the head, then a body whose hash is that of the
    pattern http.h defines (line k = the offset k*16 in 15 hex digits and a
    newline), made here independently;
  - HEAD /bytes/N: the head alone; /bytes/N past 1 GiB: 404;
  - two requests pipelined behind a /bytes answer, answered in order;
  - POST bodies, read and discarded: Content-Length (several MiB), chunked
    (extensions, a trailer), Expect: 100-continue (the 100 comes before the
    body is sent), each followed by a GET on the same connection, which
    shows the body was framed exactly;
  - refused framings: Transfer-Encoding gzip (501), both Content-Length and
    Transfer-Encoding (400), a malformed chunk (400), each closing.
Prints one line per check; exits 1 on the first failure.
"""
import hashlib
import socket
import sys

HOST, PORT = sys.argv[1], int(sys.argv[2])
BIG = int(sys.argv[3]) if len(sys.argv) > 3 else 32 << 20
HELLO = b"Hello from httpd, a poll()-based server.\n"


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def pattern_sha256(n):
    """SHA-256 of the first n bytes of the /bytes pattern."""
    h = hashlib.sha256()
    line, left = 0, n
    while left > 0:
        count = min(65536, (left + 15) // 16)
        chunk = b"".join(b"%015x\n" % ((line + i) * 16) for i in range(count))
        h.update(chunk[:left])
        left -= min(left, len(chunk))
        line += count
    return h.hexdigest()


class Conn:
    def __init__(self):
        self.s = socket.create_connection((HOST, PORT), timeout=30)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def _more(self):
        d = self.s.recv(1 << 20)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def head(self):
        """The next response head: (status, {name: value}, raw bytes)."""
        while b"\r\n\r\n" not in self.buf:
            self._more()
        raw, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = raw.split(b"\r\n")
        status = int(lines[0].split()[1])
        fields = {}
        for line in lines[1:]:
            k, v = line.split(b":", 1)
            fields[k.strip().lower().decode()] = v.strip().decode()
        return status, fields, raw + b"\r\n\r\n"

    def body(self, n):
        """The next n bytes: (SHA-256, the first 64 of them)."""
        h, first = hashlib.sha256(), b""
        while n:
            if not self.buf:
                self._more()
            take = self.buf[:n]
            self.buf = self.buf[len(take):]
            if len(first) < 64:
                first += take[:64 - len(first)]
            h.update(take)
            n -= len(take)
        return h.hexdigest(), first

    def response(self):
        status, fields, raw = self.head()
        digest, first = self.body(int(fields.get("content-length", "0")))
        return status, fields, digest, first

    def closed(self):
        """True when the server closes (after what is buffered)."""
        try:
            while True:
                self._more()
        except EOFError:
            return True
        except OSError:
            return True  # a reset after the answer is also an end

    def close(self):
        self.s.close()


def expect_hello(c, what):
    status, fields, digest, first = c.response()
    if status != 200 or first != HELLO:
        fail(f"{what}: {status} {first!r}")


# ---- GET /bytes/N ---------------------------------------------------------
c = Conn()
for n in (0, 1, 15, 16, 17, 4095, 100000, 1 << 20, BIG):
    c.send(b"GET /bytes/%d HTTP/1.1\r\nHost: t\r\n\r\n" % n)
    status, fields, digest, first = c.response()
    if status != 200 or fields.get("content-length") != str(n):
        fail(f"/bytes/{n}: status {status}, {fields}")
    want = pattern_sha256(n)
    if digest != want:
        fail(f"/bytes/{n}: sha256 {digest}, want {want} (starts {first!r})")
    print(f"GET /bytes/{n}: {n} bytes, sha256 {digest[:16]}... matches")
c.send(b"HEAD /bytes/%d HTTP/1.1\r\n\r\n" % BIG)
status, fields, raw = c.head()
if status != 200 or fields.get("content-length") != str(BIG):
    fail(f"HEAD /bytes/{BIG}: {raw!r}")
c.send(b"GET /bytes/1073741825 HTTP/1.1\r\n\r\n")
status, fields, digest, first = c.response()
if status != 404:
    fail(f"/bytes/1073741825: {status}")
print("HEAD /bytes/N: head only; /bytes/1073741825: 404")

# Pipelined behind a long answer: the next two wait, then come in order.
c.send(b"GET /bytes/300000 HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\nGET /bytes/5 HTTP/1.1\r\n\r\n")
status, fields, digest, first = c.response()
if status != 200 or digest != pattern_sha256(300000):
    fail("pipelined /bytes/300000")
expect_hello(c, "pipelined GET /")
status, fields, digest, first = c.response()
if first != b"00000":
    fail(f"pipelined /bytes/5: {first!r}")
print("pipelined behind /bytes/300000: answered in order")
c.close()

# ---- request bodies ---------------------------------------------------------
c = Conn()
size = 5 << 20
c.send(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % size)
block = bytes(range(256)) * 256
sent = 0
while sent < size:
    piece = block[:min(len(block), size - sent)]
    c.send(piece)
    sent += len(piece)
expect_hello(c, "POST Content-Length")
c.send(b"GET /bytes/16 HTTP/1.1\r\n\r\n")
status, fields, digest, first = c.response()
if first != b"000000000000000\n":
    fail(f"GET after a POST body: {first!r}")
print(f"POST with Content-Length {size}: 200, and the connection goes on")

chunked = (b"POST /bytes/10 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"a;ext=1\r\n0123456789\r\n" + b"%x\r\n" % len(block) + block + b"\r\n"
           b"0\r\nTrailer-Field: x\r\n\r\n")
c.send(chunked[:37])
c.send(chunked[37:])
status, fields, digest, first = c.response()
if status != 200 or first != b"0000000000":
    fail(f"POST chunked: {status} {first!r}")
c.send(b"GET / HTTP/1.1\r\n\r\n")
expect_hello(c, "GET after a chunked body")
print("POST chunked (extension, trailer): 200, and the connection goes on")

c.send(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
status, fields, raw = c.head()
if status != 100:
    fail(f"Expect: 100-continue: {raw!r}")
c.send(b"hello")
expect_hello(c, "the answer after 100 Continue")
print("Expect: 100-continue: 100, then the body, then 200")
c.close()

for name, req, want in (
        ("Transfer-Encoding: gzip", b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nxx", 501),
        ("Content-Length with Transfer-Encoding",
         b"POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("a malformed chunk", b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400)):
    c = Conn()
    c.send(req)
    status, fields, raw = c.head()
    if status != want or fields.get("connection") != "close" or not c.closed():
        fail(f"{name}: {raw!r}")
    c.close()
    print(f"{name}: {want} and close")
print("bodies: all good")
