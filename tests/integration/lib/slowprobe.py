#!/usr/bin/env python3
"""slowprobe.py HOST PORT STOPFILE MAXSECS: a normal client beside an attack.

Starts a fetch of GET / once a second (each on a new connection, each in a
thread of its own so a stuck one does not delay the next) until STOPFILE
exists or MAXSECS have passed, and gives each 5 s. A fetch is answered when
the whole 200 answer came; its latency runs from the connect() call, so a
SYN the server dropped (the client's kernel sends it again after 1 s, 3 s)
counts. Prints one line per fetch, then
  probes N; within 1 s A; within 2 s B; unanswered U; worst W s
"""
import os
import socket
import sys
import threading
import time

from client import HELLO, read_to_close

HOST, PORT, STOP, MAXSECS = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
LIMIT = 5.0
results = []


def fetch(i, t0):
    ok = False
    try:
        s = socket.create_connection((HOST, PORT), timeout=LIMIT)
        s.sendall(b"GET / HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
        data, _, reset = read_to_close(s, max(0.1, LIMIT - (time.monotonic() - t0)))
        s.close()
        ok = not reset and data.startswith(b"HTTP/1.1 200 OK\r\n") and data.endswith(HELLO)
    except OSError:
        pass
    results.append((i, time.monotonic() - t0, ok))


start = time.monotonic()
threads, i = [], 0
while time.monotonic() - start < MAXSECS and not os.path.exists(STOP):
    t = threading.Thread(target=fetch, args=(i, time.monotonic()))
    t.start()
    threads.append(t)
    i += 1
    time.sleep(max(0.0, start + i - time.monotonic()))
for t in threads:
    t.join()
results.sort()
for n, lat, ok in results:
    print(f"probe {n}: {lat:.3f} s {'ok' if ok else 'unanswered'}")
answered = [lat for _, lat, ok in results if ok]
worst = max([lat if ok else LIMIT for _, lat, ok in results], default=0.0)
print(f"probes {len(results)}; within 1 s {sum(1 for x in answered if x <= 1)}; "
      f"within 2 s {sum(1 for x in answered if x <= 2)}; "
      f"unanswered {len(results) - len(answered)}; worst {worst:.3f} s")
