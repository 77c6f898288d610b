#!/usr/bin/env bash
# The unikernel's httpd on the passt back-end (what `make run` uses where
# passt is installed), its address from passt's DHCP: GET / byte for byte,
# answers of 1 MiB and 8 MiB and a 1 MiB upload, whole (Debian 12's passt
# scales its window even when our SYN-ACK offers no scaling: without our
# offer of scale 0, an answer longer than the first flight crawls out by
# window probes, some 10 KB a minute),
# ab -k at 8 connections and new connections at 16, each with zero failed
# requests, and h2load --h1 at 64 connections (nghttp2-client) with zero
# errors: the load that stalls QEMU's slirp (a listen backlog of 1). Then a
# shutdown request (-s, this test's own): exit status 0, and passt is gone.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
uk_test httpd passt ab curl
port=$(free_port)
url=http://127.0.0.1:$port

guest_start "$tmp/console" "" "$QEMU_RUN" --net passt --hostfwd "$port:80" --timeout 300 \
	"${DESIGN_QEMU[@]}" --append "$DESIGN_KOPTS -- -p 80 -s" "$LOADER" "$IMAGE"
# Not a probe before the server listens: a connection passt forwards before
# the guest's network is up keeps passt spinning for seconds.
guest_wait_console "$tmp/console" '^httpd: listening' 60 || { cat "$tmp/console"; fail "httpd did not start"; }
guest_wait_http "$url/" 30 || { cat "$tmp/console"; fail "no HTTP answer through passt"; }
tr -d '\r' <"$tmp/console" | contains -E '^net: 52:54:00:12:34:56 ip 10\.0\.2\.15/24 gw 10\.0\.2\.2 \(dhcp\)$' ||
	{ cat "$tmp/console"; fail "no DHCP address line (passt gives slirp's addresses)"; }

expect_get "$url/" "$tmp/got" "$HTTPD_HELLO"
# Bodies both ways. Debian's passt pauses uploads into the guest (0.1-0.2 s
# at a time: docs/running.md), so an upload's
# time is passt's and the host's; the POST is 1 MiB, each transfer gets
# two minutes, and only bytes and statuses are checked.
for n in 1048576 8388608; do
	got=$(curl -s -m 120 -o /dev/null -w '%{http_code} %{size_download}' "$url/bytes/$n")
	echo "GET /bytes/$n: $got"
	[ "$got" = "200 $n" ] || { cat "$tmp/console"; fail "GET /bytes/$n over passt: $got"; }
done
n=1048576
got=$(head -c "$n" /dev/zero | curl -s -m 120 -o /dev/null -w '%{http_code}' --data-binary @- "$url/")
echo "POST of $n bytes: $got"
[ "$got" = 200 ] || { cat "$tmp/console"; fail "POST of $n bytes over passt: $got"; }
ab_load "$url/" 2000 8 -k || { cat "$tmp/console"; fail "ab -k -c 8"; }
ab_load "$url/" 1000 16 || { cat "$tmp/console"; fail "ab -c 16"; }

if command -v h2load >/dev/null; then
	timeout 120 h2load --h1 -n 5000 -c 64 -t 1 "$url/" >"$tmp/h2load" 2>&1
	rc=$?
	cat "$tmp/h2load"
	[ $rc = 0 ] || fail "h2load exited $rc"
	contains -E '^requests: 5000 total, 5000 started, 5000 done, 5000 succeeded, 0 failed, 0 errored, 0 timeout$' \
		<"$tmp/h2load" || fail "h2load --h1 -c 64: not every request succeeded"
else
	echo "h2load not installed (nghttp2-client): its load is not checked here"
fi

curl -s -m 5 "$url/__shutdown" >/dev/null
guest_wait_exit 310 # qemu-run's --timeout ends it before
rc=$GUEST_RC
tr -d '\r' <"$tmp/console"
[ $rc = 0 ] || fail "exit status $rc after the shutdown request"
[ -z "$(ss -Hltn "sport = :$port")" ] || fail "something still listens on 127.0.0.1:$port (passt not stopped?)"
echo "all good"
