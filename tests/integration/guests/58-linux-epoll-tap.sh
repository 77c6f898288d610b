#!/usr/bin/env bash
# 58-linux-epoll-tap: the benchmark's linux-epoll guest (tools/lib/guests.sh: the
# Linux image, app=httpd-epoll) on the tap back-end. init must run
# httpd-epoll, not httpd; it must answer GET / with httpd's bytes exactly,
# keep every request of an ab -k run on its connection (0 failed), serve new
# connections (ab without -k), answer a request with Connection: close with
# that header and close; the shutdown request must end QEMU with the app's
# status 0, reported by init for /bin/httpd-epoll.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tools/lib/guests.sh"
linux_bench_start linux-epoll

echo "== GET /: httpd's bytes"
expect_get "$LG_URL/" "$LG_TMP/got" "$HTTPD_HELLO"

echo "== keep-alive, new connections"
ab_keepalive "$LG_URL/" 300 4 || fail "ab -k failed"
ab_load "$LG_URL/" 100 4 || fail "ab failed"

linux_tap_closes "${HTTPD_HEAD200}Connection: close\r\n\r\n$HELLO_BODY"
linux_bench_stop httpd-epoll httpd
echo "all good"
