#!/usr/bin/env bash
# 52-httpd-epoll-native: httpd-epoll, httpd with epoll behind its loop's wait
# (apps/httpd/ready_epoll.c; the linux-epoll guest's program), on 127.0.0.1
# through every check of test 50: the same bytes for every request, split,
# pipelined, malformed and over-long, keep-alive under ab -k, and both ways
# to stop it with status 0.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
[ -x "$ROOT/$BUILD/host/httpd-epoll" ] || skip "$ROOT/$BUILD/host/httpd-epoll not built"
HTTPD_BIN=$ROOT/$BUILD/host/httpd-epoll exec "$ROOT/tests/integration/guests/50-httpd-native.sh"
