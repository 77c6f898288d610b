#!/usr/bin/env python3
"""iperf_hostile.py: malformed iperf3 control messages against an iperf server.

    iperf_hostile.py HOST PORT

Each case opens a control connection, says something wrong, and checks what
the server answers (byte for byte) and that it then closes the connection.
The counts the server must show afterwards are printed last, as
"expect: NAME=N ...", for the calling test to compare with the server's
counter line. Exit status 0 when every case behaved, 1 otherwise.
"""
import socket
import struct
import sys
import time

PARAM_EXCHANGE, CREATE_STREAMS, ACCESS_DENIED, SERVER_ERROR = 9, 10, 0xFF, 0xFE
COOKIE = b"abcdefghijklmnopqrstuvwxyz2345672345\0"  # 36 valid characters and a NUL
assert len(COOKIE) == 37

HOST, PORT = sys.argv[1], int(sys.argv[2])
failures = []


def connect():
    s = socket.create_connection((HOST, PORT), timeout=20)
    s.settimeout(20)
    return s


def recv_all(s):
    """Everything until the server closes (or 20 s pass: a failure)."""
    got = b""
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            part = s.recv(65536)
        except ConnectionResetError:
            return got, "reset"
        except socket.timeout:
            return got, "open"
        if not part:
            return got, "closed"
        got += part
    return got, "open"


def expect(name, got, how, want):
    ok = got == want and how in ("closed", "reset")
    print(f"{'ok  ' if ok else 'FAIL'} {name}: got {got!r}, connection {how}; want {want!r}, then closed")
    if not ok:
        failures.append(name)


def frame(obj_bytes):
    return struct.pack(">I", len(obj_bytes)) + obj_bytes


def case(name, parts, want, pause=0.2):
    """Sends each part (pause between), then reads until the server closes."""
    s = connect()
    try:
        for i, p in enumerate(parts):
            if i:
                time.sleep(pause)
            s.sendall(p)
        got, how = recv_all(s)
    finally:
        s.close()
    expect(name, got, how, want)


GOOD_PARAMS = b'{"tcp":true,"omit":0,"time":0,"num":1024,"blockcount":0,"parallel":1,"len":1024,"client_version":"3.12"}'

# A cookie with a character iperf3 never uses: closed, nothing said.
case("bad cookie", [b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\0"], b"")
# Not even 37 bytes of it that are text: an HTTP request.
case("http request", [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n1234567890"], b"")
# A good cookie, then garbage where the JSON goes.
case("garbage json", [COOKIE, frame(b"{this is not json")], bytes([PARAM_EXCHANGE]))
# Well-formed JSON of the wrong shape: an array, a string where a number goes.
case("json not an object", [COOKIE, frame(b"[1,2,3]")], bytes([PARAM_EXCHANGE]))
case("json wrong type", [COOKIE, frame(b'{"tcp":true,"parallel":"four"}')], bytes([PARAM_EXCHANGE]))
# A length of 2 GiB: refused at once, not waited for.
case("huge length", [COOKIE, struct.pack(">I", 0x80000000) + b"{}"], bytes([PARAM_EXCHANGE]))
# Parameters fine, then a state byte out of order (IPERF_DONE before any stream).
case("bad state", [COOKIE, frame(GOOD_PARAMS), bytes([16])], bytes([PARAM_EXCHANGE, CREATE_STREAMS]))
# UDP: well formed, not offered here: SERVER_ERROR with iperf3's "not implemented" (13).
case("udp refused", [COOKIE, frame(b'{"udp":true,"time":1,"parallel":1}')],
     bytes([PARAM_EXCHANGE, SERVER_ERROR]) + struct.pack(">ii", 13, 0))

# Busy: while one test waits for its streams, another client is turned away.
first = connect()
first.sendall(COOKIE)
got = first.recv(1)
first.sendall(frame(b'{"tcp":true,"time":0,"num":1024,"parallel":2,"len":1024}'))
got += first.recv(1)
expect_first = bytes([PARAM_EXCHANGE, CREATE_STREAMS])
if got != expect_first:
    print(f"FAIL busy: first client got {got!r}, want {expect_first!r}")
    failures.append("busy setup")
case("busy", [b"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\0"], bytes([ACCESS_DENIED]))
# Its control connection closes before the streams: the test ends (closed early).
first.close()
time.sleep(0.5)

print("expect: bad_cookie=2 bad_json=3 bad_length=1 bad_state=1 refused=1 busy=1 closed_early=1")
if failures:
    print("failed cases:", ", ".join(failures))
sys.exit(1 if failures else 0)
