"""client.py: what the integration tests' Python clients share (import it
with tests/integration/lib on sys.path; a script of that folder has it):

  HELLO                      httpd's body for GET /
  read_to_close(s, timeout)  everything the socket s receives until the peer
                             closes or resets it, each receive waiting up to
                             timeout s (socket.timeout past that): (the bytes,
                             the seconds it took, whether a reset ended it)
"""
import time

HELLO = b"Hello from httpd, a poll()-based server.\n"


def read_to_close(s, timeout):
    s.settimeout(timeout)
    t, data, reset = time.monotonic(), b"", False
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except ConnectionResetError:
        reset = True
    return data, time.monotonic() - t, reset
