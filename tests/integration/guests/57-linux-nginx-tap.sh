#!/usr/bin/env bash
# 57-linux-nginx-tap: the benchmark's linux-nginx guest (tools/lib/guests.sh:
# initrd-nginx.img, app=nginx-run, Debian's nginx) on the tap back-end. GET /
# must give httpd's status, Content-Type, Content-Length and 41-byte body,
# with nginx's differences and no others: Server: nginx, a Date header (its
# form checked, then left out of the comparison) and Connection: keep-alive;
# every request of an ab -k run must stay on its connection (0 failed; 1,200
# on one connection: no keepalive_requests limit reached), new connections
# must be served, a
# request with Connection: close answered in kind and the connection closed;
# the shutdown request must end QEMU with status 0 from nginx-run, reported
# by init. A bad option (-p 0) must end the guest with nginx-run's 2, not a
# status of init's or QEMU's own.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
. "$ROOT/tools/lib/guests.sh"
linux_bench_start linux-nginx

echo "== GET /: httpd's status, headers and body, with nginx's Server, Date and Connection"
expect_get "$LG_URL/" "$LG_TMP/got" "${NGINX_HEAD200}Connection: keep-alive\r\n\r\n$HELLO_BODY" dated

echo "== keep-alive past nginx's default limit (1000 requests a connection), new connections"
ab_keepalive "$LG_URL/" 1200 1 || fail "ab -k -c 1 failed"
ab_keepalive "$LG_URL/" 400 8 || fail "ab -k -c 8 failed"
ab_load "$LG_URL/" 100 4 || fail "ab failed"

linux_tap_closes "${NGINX_HEAD200}Connection: close\r\n\r\n$HELLO_BODY" dated
linux_bench_stop nginx-run nginx-run

echo "== a bad option: nginx-run's status 2"
"${NET_EXEC[@]}" "$QEMU_RUN" --net tap --tap "$NETNS_TAP" --timeout 200 \
	--append "$GUEST_PREFIX $NETNS_GUEST_NET -- -p 0" \
	"$GUEST_KERNEL" "$GUEST_INITRD" </dev/null >"$LG_TMP/console" 2>&1
rc=$?
tr -d '\r' <"$LG_TMP/console" | grep -v '^$' | tail -n 3
[ $rc = 2 ] || fail "exit status $rc, expected nginx-run's 2"
tr -d '\r' <"$LG_TMP/console" | contains -x 'nginx-run: bad value for -p: 0' || fail "no message about -p 0"
echo "all good"
