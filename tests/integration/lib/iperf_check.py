#!/usr/bin/env python3
"""iperf_check.py: compare iperf3's own counts (its --json) with the server's.

    iperf_check.py JSON [--server LINE] [--bytes N] [--min-sent N] [--reverse]
                   [--streams P] [--len L] [--receiver-may-lag]

JSON is `iperf3 -c ... --json` output. LINE is our server's line for that
test: "iperf: test K done: received|sent BYTES bytes in S s on P streams:
ID:BYTES ...". Checks, failing (exit 1) with a message on the first miss:
  - iperf3 reports no error, and P streams (--streams, default 1);
  - every stream, and the sum, moved the same bytes at both ends
    (--receiver-may-lag: the receiver may have fewer: Debian's own server
    counts only until TEST_END, and so does iperf3's client in a -t -R run);
  - with --bytes N (iperf3 -n N): a download moves exactly N (our server
    stops there); an upload at least N and less than a write (--len L) more
    per stream: iperf3's client skips its -n check on the last of each
    round of ten writes, so it may overshoot by one write per stream;
  - with --min-sent N: at least N bytes sent (Debian's own server, which
    overshoots -n with -R as its client does);
  - the server's line says received (upload) or sent (--reverse), with the
    total iperf3 gives the server's side, and the same per-stream counts in
    the same order.
Prints one line with the counts and iperf3's bits per second.
"""
import argparse
import json
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("json")
ap.add_argument("--server")
ap.add_argument("--bytes", type=int)
ap.add_argument("--min-sent", type=int)
ap.add_argument("--reverse", action="store_true")
ap.add_argument("--streams", type=int, default=1)
ap.add_argument("--len", type=int, default=128 * 1024)
ap.add_argument("--receiver-may-lag", action="store_true")
a = ap.parse_args()


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


try:
    with open(a.json) as f:
        j = json.load(f)
except (OSError, ValueError) as e:
    fail(f"iperf3's output is not JSON ({e})")
if "error" in j:
    fail(f"iperf3 reported an error: {j['error']}")
end = j["end"]
sent, received = end["sum_sent"]["bytes"], end["sum_received"]["bytes"]
per_stream = [(s["sender"]["bytes"], s["receiver"]["bytes"]) for s in end["streams"]]
if len(per_stream) != a.streams:
    fail(f"{len(per_stream)} streams, not {a.streams}")


def same(what, s, r):
    if a.receiver_may_lag and r <= s:
        return
    if s != r:
        fail(f"{what}: sender {s} bytes, receiver {r}")


same("total", sent, received)
for i, (s, r) in enumerate(per_stream):
    same(f"stream {i + 1}", s, r)
if sum(s for s, _ in per_stream) != sent or sum(r for _, r in per_stream) != received:
    fail("the streams do not add up to the sums")

if a.bytes is not None:
    if a.reverse:
        if sent != a.bytes:
            fail(f"-n {a.bytes}: {sent} bytes sent")
    elif not a.bytes <= sent <= a.bytes + a.streams * a.len:
        fail(f"-n {a.bytes} over {a.streams} stream(s): {sent} bytes sent")

if a.min_sent is not None and sent < a.min_sent:
    fail(f"{sent} bytes sent, fewer than {a.min_sent}")

if a.server is not None:
    m = re.search(r"done: (received|sent) (\d+) bytes in [0-9.]+ s on (\d+) streams?:((?: \d+:\d+)+)$", a.server)
    if not m:
        fail(f"not a server result line: {a.server!r}")
    word, total, n = m.group(1), int(m.group(2)), int(m.group(3))
    counts = [int(x.split(":")[1]) for x in m.group(4).split()]
    want_word = "sent" if a.reverse else "received"
    theirs = [s if a.reverse else r for s, r in per_stream]
    if word != want_word:
        fail(f"the server says {word}, expected {want_word}")
    if total != (sent if a.reverse else received) or n != len(per_stream) or counts != theirs:
        fail(f"the server counted {total} ({counts}), iperf3 reports {sent if a.reverse else received} ({theirs})")

bps = end["sum_received"]["bits_per_second"]
print(f"ok: sent {sent}, received {received} bytes on {len(per_stream)} stream(s); "
      f"{bps / 1e6:.1f} Mbit/s (iperf3's receiver figure){'; server agrees' if a.server else ''}")
