#!/usr/bin/env bash
# 58-linux-epoll-tap: the benchmark's linux-epoll guest (bench/guests.sh: the
# Linux image, app=httpd-epoll) on the tap back-end. init must run
# httpd-epoll, not httpd; it must answer GET / with httpd's bytes exactly,
# keep every request of an ab -k run on its connection (0 failed), serve new
# connections (ab without -k), answer a request with Connection: close with
# that header and close; the shutdown request must end QEMU with the app's
# status 0, reported by init for /bin/httpd-epoll.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/bench/guests.sh"
command -v curl >/dev/null && command -v ab >/dev/null || skip "curl or ab missing"
BENCH_BUILD=$ROOT/$BUILD guest_resolve linux-epoll || fail "guests.sh does not know linux-epoll"
echo "linux-epoll: $GUEST_PREFIX"

echo "== booting linux-epoll (tap)"
linux_tap_start "$GUEST_KERNEL" "$GUEST_INITRD" "$GUEST_PREFIX" "-p 8080 -s"
SECONDS=0
guest_wait_http "$LG_URL/" 150 "$LG_PID" || { cat "$LG_TMP/console"; fail "no HTTP answer from the guest"; }
echo "first response after ${SECONDS}s"

HEAD200='HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n'
BODY='Hello from httpd, a poll()-based server.\n'
echo "== GET /: httpd's bytes"
"${NET_EXEC[@]}" curl -s -i "$LG_URL/" >"$LG_TMP/got"
printf "$HEAD200\r\n$BODY" >"$LG_TMP/want"
expect_file "$LG_TMP/got" "$LG_TMP/want"

echo "== keep-alive, new connections"
ab_keepalive "$LG_URL/" 300 4 || fail "ab -k failed"
ab_load "$LG_URL/" 100 4 || fail "ab failed"

echo "== Connection: close is answered in kind, and the guest closes"
http_closes "$LG_HOST" 8080 "$LG_TMP/got" || fail "the guest did not close the connection (rc $?)"
printf "${HEAD200}Connection: close\r\n\r\n$BODY" >"$LG_TMP/want"
expect_file "$LG_TMP/got" "$LG_TMP/want"

echo "== shutdown request"
linux_tap_stop
[ "$LG_RC" = 0 ] || fail "qemu-run returned $LG_RC, not the app's 0"
contains -x 'init: /bin/httpd-epoll exited with status 0' <"$LG_TMP/console" || fail "init did not run httpd-epoll"
contains -x 'httpd: stopped (shutdown request)' <"$LG_TMP/console" || fail "httpd-epoll did not stop on the request"
echo "all good"
