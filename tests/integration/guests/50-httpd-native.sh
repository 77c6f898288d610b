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
command -v curl >/dev/null && command -v ab >/dev/null || skip "curl or ab missing"
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

port=$(free_port)
"$httpd" -a 127.0.0.1 -p "$port" -s >"$tmp/log" 2>&1 &
pid=$!
guest_wait_http "http://127.0.0.1:$port/" 10 "$pid" || fail "httpd did not answer (log: $(cat "$tmp/log"))"
url=http://127.0.0.1:$port

BODY='Hello from httpd, a poll()-based server.\n'
HEAD200='HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n'

echo "== curl GET /"
curl -s -i --http1.1 "$url/" >"$tmp/got"
printf "$HEAD200\r\n$BODY" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"
[ "$(curl -s "$url/" | wc -c)" = 41 ] || fail "body is not 41 bytes"

echo "== curl HEAD, 404, 405"
curl -s -I "$url/" >"$tmp/got"
printf "$HEAD200\r\n" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"
curl -s -i "$url/missing" >"$tmp/got"
printf 'HTTP/1.1 404 Not Found\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n' >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"
curl -s -i -X DELETE "$url/" >"$tmp/got"
printf 'HTTP/1.1 405 Method Not Allowed\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 19\r\nAllow: GET, HEAD, POST\r\n\r\nmethod not allowed\n' >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"
echo "== curl POST: the body is read and discarded, then as GET"
curl -s -i -d x "$url/" >"$tmp/got"
printf "$HEAD200\r\n$BODY" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

echo "== a request split across writes"
raw_exchange "$port" "$tmp/got" 'GE' 'T / HTTP/1.1\r\nHo' 'st: x\r\nConnection: close\r' '\n\r\n'
printf "${HEAD200}Connection: close\r\n\r\n$BODY" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

echo "== pipelined requests in one write"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.1\r\n\r\nHEAD / HTTP/1.1\r\n\r\nGET /x HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n'
{
	printf "$HEAD200\r\n$BODY"
	printf "$HEAD200\r\n"
	printf 'HTTP/1.1 404 Not Found\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n'
	printf "${HEAD200}Connection: close\r\n\r\n$BODY"
} >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

echo "== HTTP/1.0 keep-alive as ab sends it, then a plain HTTP/1.0 request"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: h\r\n\r\n' 'GET / HTTP/1.0\r\n\r\n'
printf "${HEAD200}Connection: keep-alive\r\n\r\n$BODY${HEAD200}Connection: close\r\n\r\n$BODY" >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

echo "== malformed: 400 and close"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.1\r\nBad Header\r\n\r\n'
printf 'HTTP/1.1 400 Bad Request\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nConnection: close\r\n\r\nbad request\n' >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"

echo "== over-long: 431 and close, the server unharmed"
long=$(head -c 20000 /dev/zero | tr '\0' a)
raw_exchange "$port" "$tmp/got" "GET / HTTP/1.1\r\nX: $long\r\n\r\n"
printf 'HTTP/1.1 431 Request Header Fields Too Large\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 25\r\nConnection: close\r\n\r\nrequest header too large\n' >"$tmp/want"
expect_file "$tmp/got" "$tmp/want"
kill -0 "$pid" || fail "httpd died"

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
wait "$pid"; rc=$?; pid=""
[ $rc = 0 ] || fail "httpd exited $rc after a shutdown request"

echo "== without -s, /__shutdown is 404; SIGTERM stops it"
port=$(free_port)
"$httpd" -a 127.0.0.1 -p "$port" -q &
pid=$!
guest_wait_http "http://127.0.0.1:$port/" 10 "$pid" || fail "second httpd did not answer"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/__shutdown")" = 404 ] || fail "shutdown not refused"
kill -TERM "$pid"
wait "$pid"; rc=$?; pid=""
[ $rc = 0 ] || fail "httpd exited $rc on SIGTERM"

echo "== bad options"
"$httpd" -p 70000 2>/dev/null; [ $? = 2 ] || fail "-p 70000 accepted"
"$httpd" extra 2>/dev/null; [ $? = 2 ] || fail "a stray argument accepted"
echo "all good"
