#!/usr/bin/env bash
# 64-bench-loadrun: bench/runner/loadrun.py, the part of the benchmark that
# runs one load and measures it. First its readers of ab's and wrk's reports,
# on fixed texts (failed and non-2xx counts, ab's -e percentiles, wrk's units
# us, ms, s and m, its socket errors) and the kernel's pools line; then a real
# run against the host's httpd with a stand-in guest console: a responder that
# answers each Ctrl-T on a fifo with a counters dump whose poll counter has
# moved on, as a busy-polling guest's does. The row must carry the requests,
# CPU per request (from the server's own CPU time) and the load generator's
# CPU, and the counters file a dump right before and right after the load,
# each with its bound, paired by the counters report
# (runner/report/counters.py) into one delta. No QEMU; nothing depends on
# speed.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
py=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 missing"
tmp=$(mktemp -d)
srv="" responder=""
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; [ -n "$responder" ] && kill "$responder" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

echo "== ab's and wrk's reports"
PYTHONPATH=$ROOT/bench "$py" - <<'PY' || fail "a report was misread"
from runner.loadrun import parse_ab, parse_wrk, wrk_ms, ab_argv, wrk_argv
ab = """Concurrency Level:      8
Time taken for tests:   4.002 seconds
Complete requests:      12000
Failed requests:        7
   (Connect: 0, Receive: 0, Length: 7, Exceptions: 0)
Non-2xx responses:      5
Keep-Alive requests:    11995
Requests per second:    2998.50 [#/sec] (mean)
Time per request:       2.668 [ms] (mean)
Time per request:       0.334 [ms] (mean, across all concurrent requests)
"""
pct = "Percentage served,Time in ms\n0,0.100\n49,0.990\n50,1.234\n51,1.300\n99,9.876\n100,20.000\n"
got = parse_ab(ab, pct)
want = {"requests": 12000, "secs": 4.002, "rps": 2998.5, "failed": 7, "non2xx": 5,
        "mean_ms": 2.668, "p50_ms": 1.234, "p99_ms": 9.876}
assert got == want, got
assert parse_ab("", "")["requests"] == 0
wrk = """Running 1m test @ http://192.0.2.2:8080/
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   812.00us    1.20ms   2.00s    95.00%
    Req/Sec     9.99k   100.00    10.20k    70.00%
  Latency Distribution
     50%  450.00us
     75%  700.00us
     90%    1.20ms
     99%    1.50s
  600000 requests in 1.00m, 80.00MB read
  Socket errors: connect 1, read 2, write 3, timeout 4
  Non-2xx or 3xx responses: 6
Requests/sec:  10000.00
Transfer/sec:      1.33MB
"""
got = parse_wrk(wrk)
want = {"requests": 600000, "secs": 60.0, "rps": 10000.0, "failed": 10, "non2xx": 6,
        "mean_ms": 0.812, "p50_ms": 0.45, "p99_ms": 1500.0}
assert got == want, got
assert wrk_ms("3.00ms") == 3.0 and wrk_ms("2.50s") == 2500.0
# Loads as command lines: keep-alive or not; wrk's new connections by Connection: close.
assert ab_argv("k8", 4, "U", "P")[5:7] == ["-k", "-c"] and "-k" not in ab_argv("c16", 4, "U", "P")
assert "Connection: close" in wrk_argv("c16", 4, "U") and "Connection: close" not in wrk_argv("k8", 4, "U")
assert wrk_argv("k1", 4, "U")[1:5] == ["-t", "1", "-c", "1"]
# The kernel's pools line (net/stats.c): lwIP's pool names, PBUF_REF/ROM's slash included.
from runner.report.counters import parse_line
got = dict(parse_line("pools: TCP_SEG 0 PBUF_REF/ROM 3 PBUF_POOL 4; lwip-heap 100; fds 4"))
assert got == {"pools.tcp_seg": 0, "pools.pbuf_ref_rom": 3, "pools.pbuf_pool": 4, "pools.lwip_heap": 100,
               "pools.fds": 4}, got
print("reports read right")
PY

[ -x "$ROOT/$BUILD/host/httpd" ] || skip "$BUILD/host/httpd not built"
command -v ab >/dev/null && command -v wrk >/dev/null || skip "ab or wrk missing"
echo "== a real run against the host's httpd, with a stand-in guest console"
port=$(free_port)
"$ROOT/$BUILD/host/httpd" -a 127.0.0.1 -p "$port" -q -s >"$tmp/httpd.log" 2>&1 &
srv=$!
guest_wait_http "http://127.0.0.1:$port/" 10 "$srv" || fail "httpd did not answer"
mkfifo "$tmp/in"
exec {keep}<>"$tmp/in" # held open, as the http workload holds the guest's
: >"$tmp/console"
"$py" - "$tmp/in" "$tmp/console" <<'PY' &
import os, sys, time
fifo, console = sys.argv[1], sys.argv[2]
fd = os.open(fifo, os.O_RDONLY)
polls = 1000
while True:
    b = os.read(fd, 1)
    if not b:
        time.sleep(0.01); continue
    if b == b"\x14":
        with open(console, "a") as f:
            f.write(f"net: frames in 10 (600 bytes) out 10 (600 bytes); polls {polls}, 5 with work\r\n"
                    f"kernel: waits 3; polls {polls} (idle 0); spins 0 (hits 0); re-arm rechecks 0\r\n"
                    f"kernel: time us: receive+stack 1, egress 0, spin 0, park 0, app+other 9\r\n")
        polls += 100000  # what a busy-polling guest does between two Ctrl-T
PY
responder=$!
mkdir "$tmp/raw"
PYTHONPATH=$ROOT/bench "$py" -c 'from runner.records import RUN_FIELDS; print(",".join(RUN_FIELDS))' >"$tmp/runs.csv"
for g in ab wrk; do
	"$ROOT/bench/run" loadrun --csv "$tmp/runs.csv" --key 1,user,host,none,native --loadgen $g --load k1 \
		--secs 1 --url "http://127.0.0.1:$port/" --raw "$tmp/r-$g" --server-pid "$srv" \
		--console "$tmp/console" --console-in "$tmp/in" --counters "$tmp/raw/1-user-host-none-native.counters" \
		>"$tmp/log-$g" 2>&1 || { cat "$tmp/log-$g"; fail "bench/run loadrun ($g) failed"; }
	cat "$tmp/log-$g"
done
cat "$tmp/runs.csv"
"$py" - "$tmp/runs.csv" <<'PY' || fail "the rows are wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["loadgen"] for r in rows] == ["ab", "wrk"], rows
for r in rows:
    req = int(r["requests"])
    assert r["status"] == "ok" and req > 0 and r["failed"] == "0" and r["non2xx"] == "0", r
    cpu = float(r["server_cpu_s"])
    assert cpu > 0, "the server took no CPU for its requests"
    assert abs(float(r["cpu_us_per_req"]) - cpu * 1e6 / req) <= 0.01 * float(r["cpu_us_per_req"]) + 0.01, r
    assert float(r["loadgen_cpu_s"]) > 0, "no CPU for the load generator"
    assert float(r["p50_ms"]) <= float(r["p99_ms"]), r
PY
c=$tmp/raw/1-user-host-none-native.counters
cat "$c"
head -n1 "$c" | contains -x '# rep 1 backend user emulator host placement none guest native' || fail "counters header"
[ "$(grep -cE '^@ k1 (ab|wrk) (before|after) [0-9]+\.[0-9]$' "$c")" = 4 ] || fail "expected 4 marks: before and after each load"
exec {keep}>&-
PYTHONPATH=$ROOT/bench "$py" -c 'import sys; from runner.report.counters import write_csv; write_csv(sys.argv[1])' "$tmp" ||
	fail "the counters' reader failed"
cat "$tmp/counters.csv"
# Each load's delta is one responder step (100000 polls): the dump after a load and the
# one before the next are two snapshots, and the step between them is not the load's.
"$py" - "$tmp/counters.csv" <<'PY' || fail "counter deltas wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["loadgen"] for r in rows] == ["ab", "wrk"], rows
for r in rows:
    assert r["net.polls"] == "100000", r
    assert float(r["bound_before_ms"]) >= 0 and float(r["bound_after_ms"]) >= 0, r
PY
echo "all good"
