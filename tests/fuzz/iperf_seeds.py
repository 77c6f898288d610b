#!/usr/bin/env python3
"""iperf_seeds.py: writes the seed corpus of fuzz_iperf (tests/fuzz/corpus/iperf).

    tests/fuzz/iperf_seeds.py [DIR]

Each seed is what fuzz_iperf.c reads: one byte that picks how the rest is cut
into reads (bit 7 set: all in one read), then the bytes a client sends on the
control connection after its cookie. The JSON is as iperf3 3.12's client
prints it (cJSON, unformatted), from its --debug output.
"""
import os
import struct
import sys


def frame(text):
    b = text.encode()
    return struct.pack(">I", len(b)) + b


def params(extra="", parallel=1, length=131072, num=0, time=10):
    return frame('{"tcp":true,"omit":0,"time":%d,"num":%d,"blockcount":0,%s"parallel":%d,'
                 '"len":%d,"pacing_timer":1000,"client_version":"3.12"}' % (time, num, extra, parallel, length))


def results(ids, nbytes):
    streams = ",".join('{"id":%d,"bytes":%d,"retransmits":0,"jitter":0,"errors":0,"packets":0,'
                       '"start_time":0,"end_time":10.000215}' % (i, nbytes) for i in ids)
    return frame('{"cpu_util_total":13.738335676850314,"cpu_util_user":0.51234,"cpu_util_system":13.2,'
                 '"sender_has_retransmits":1,"congestion_used":"bbr","streams":[%s]}' % streams)


TEST_END, CLIENT_TERMINATE, IPERF_DONE = b"\x04", b"\x0c", b"\x10"
SEEDS = {
    "upload": b"\x00" + params(num=268435456, time=0) + TEST_END + results([1], 268435456) + IPERF_DONE,
    "download-4-streams": b"\x80" + params('"reverse":true,', parallel=4) + TEST_END +
    results([1, 3, 4, 5], 1 << 30) + IPERF_DONE,
    "small-writes-nodelay": b"\x21" + params('"nodelay":true,', length=256) + TEST_END + results([1], 1000) +
    IPERF_DONE,
    "udp-refused": b"\x05" + frame('{"udp":true,"omit":0,"time":10,"parallel":1,"len":1448}'),
    "huge-length": b"\x80" + struct.pack(">I", 0x7FFFFFFF) + b"{}",
    "garbage-json": b"\x13" + frame('{"tcp":true,"time":10,,}'),
    "bad-state": b"\x80" + params() + IPERF_DONE,
    "client-terminate": b"\x02" + params(parallel=2) + CLIENT_TERMINATE,
    "results-missing-bytes": b"\x80" + params() + TEST_END +
    frame('{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,"sender_has_retransmits":0,'
          '"streams":[{"id":1}]}'),
    "negative-as-unsigned": b"\x80" + params() + TEST_END +
    frame('{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,'
          '"sender_has_retransmits":18446744073709551615,"streams":[{"id":1,"bytes":5,'
          '"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0}]}') + IPERF_DONE,
}

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "iperf")
os.makedirs(out, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(f"iperf_seeds: {len(SEEDS)} seeds in {out}")
