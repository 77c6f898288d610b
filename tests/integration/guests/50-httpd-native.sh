#!/usr/bin/env bash
# 50-httpd-native: the static httpd on 127.0.0.1, checked byte for byte:
# curl (GET, HEAD, 404, 405, POST), raw exchanges (split, pipelined, HTTP/1.0
# keep-alive, malformed, over-long), ab with and without keep-alive, and both
# ways to stop it (shutdown request, SIGTERM), each ending with status 0.
# HTTPD_BIN names another build to check the same way (test 52: httpd-epoll).
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"

httpd=${HTTPD_BIN:-$ROOT/$BUILD/host/httpd}
[ -x "$httpd" ] || skip "$httpd not built"
needs curl ab
tmp=$(mktemp -d)
NATIVE_PID=""
trap '[ -n "$NATIVE_PID" ] && kill "$NATIVE_PID" 2>/dev/null; rm -rf "$tmp"' EXIT

native_start "$tmp/log" "$httpd" -s
port=$NATIVE_PORT url=$NATIVE_URL
NOT_FOUND='HTTP/1.1 404 Not Found\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n'

echo "== curl GET /"
curl -s -i --http1.1 "$url/" >"$tmp/got"
expect_answer "$tmp/got" "$HTTPD_HEAD200\r\n$HELLO_BODY"
[ "$(curl -s "$url/" | wc -c)" = 41 ] || fail "body is not 41 bytes"

echo "== curl HEAD, 404, 405"
curl -s -I "$url/" >"$tmp/got"
expect_answer "$tmp/got" "$HTTPD_HEAD200\r\n"
curl -s -i "$url/missing" >"$tmp/got"
expect_answer "$tmp/got" "$NOT_FOUND"
curl -s -i -X DELETE "$url/" >"$tmp/got"
expect_answer "$tmp/got" 'HTTP/1.1 405 Method Not Allowed\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 19\r\nAllow: GET, HEAD, POST\r\n\r\nmethod not allowed\n'
echo "== curl POST: the body is read and discarded, then as GET"
curl -s -i -d x "$url/" >"$tmp/got"
expect_answer "$tmp/got" "$HTTPD_HEAD200\r\n$HELLO_BODY"

echo "== a request split across writes"
raw_exchange "$port" "$tmp/got" 'GE' 'T / HTTP/1.1\r\nHo' 'st: x\r\nConnection: close\r' '\n\r\n'
expect_answer "$tmp/got" "${HTTPD_HEAD200}Connection: close\r\n\r\n$HELLO_BODY"

echo "== pipelined requests in one write"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.1\r\n\r\nHEAD / HTTP/1.1\r\n\r\nGET /x HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n'
expect_answer "$tmp/got" "$HTTPD_HEAD200\r\n$HELLO_BODY$HTTPD_HEAD200\r\n$NOT_FOUND${HTTPD_HEAD200}Connection: close\r\n\r\n$HELLO_BODY"

echo "== HTTP/1.0 keep-alive as ab sends it, then a plain HTTP/1.0 request"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: h\r\n\r\n' 'GET / HTTP/1.0\r\n\r\n'
expect_answer "$tmp/got" "${HTTPD_HEAD200}Connection: keep-alive\r\n\r\n$HELLO_BODY${HTTPD_HEAD200}Connection: close\r\n\r\n$HELLO_BODY"

echo "== malformed: 400 and close"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.1\r\nBad Header\r\n\r\n'
expect_answer "$tmp/got" 'HTTP/1.1 400 Bad Request\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nConnection: close\r\n\r\nbad request\n'

echo "== over-long: 431 and close, the server unharmed"
long=$(head -c 20000 /dev/zero | tr '\0' a)
raw_exchange "$port" "$tmp/got" "GET / HTTP/1.1\r\nX: $long\r\n\r\n"
expect_answer "$tmp/got" 'HTTP/1.1 431 Request Header Fields Too Large\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 25\r\nConnection: close\r\n\r\nrequest header too large\n'
kill -0 "$NATIVE_PID" || fail "httpd died"

echo "== ab -k and ab"
check_ab() { # FILE N
	grep -q "^Complete requests: *$2\$" "$1" || fail "ab: not $2 complete requests: $(cat "$1")"
	grep -q '^Failed requests: *0$' "$1" || fail "ab: failures: $(cat "$1")"
	grep -q '^Non-2xx' "$1" && fail "ab: non-2xx responses"
	grep -q '^Document Length: *41 bytes' "$1" || fail "ab: body not 41 bytes"
}
timeout 60 ab -q -k -n 5000 -c 8 "$url/" >"$tmp/ab" 2>&1 || fail "ab -k failed: $(cat "$tmp/ab")"
check_ab "$tmp/ab" 5000
grep -q '^Keep-Alive requests: *5000$' "$tmp/ab" || fail "ab -k: connections not kept alive"
timeout 60 ab -q -n 2000 -c 16 "$url/" >"$tmp/ab" 2>&1 || fail "ab failed: $(cat "$tmp/ab")"
check_ab "$tmp/ab" 2000

echo "== shutdown request"
[ "$(curl -s "$url/__shutdown")" = "shutting down" ] || fail "no shutdown answer"
wait "$NATIVE_PID"; rc=$?; NATIVE_PID=""
[ $rc = 0 ] || fail "httpd exited $rc after a shutdown request"

echo "== without -s, /__shutdown is 404; SIGTERM stops it"
native_start "$tmp/quiet" "$httpd" -q
[ "$(curl -s -o /dev/null -w '%{http_code}' "$NATIVE_URL/__shutdown")" = 404 ] || fail "shutdown not refused"
kill -TERM "$NATIVE_PID"
wait "$NATIVE_PID"; rc=$?; NATIVE_PID=""
[ $rc = 0 ] || fail "httpd exited $rc on SIGTERM"

echo "== bad options"
"$httpd" -p 70000 2>/dev/null; [ $? = 2 ] || fail "-p 70000 accepted"
"$httpd" extra 2>/dev/null; [ $? = 2 ] || fail "a stray argument accepted"
echo "all good"
