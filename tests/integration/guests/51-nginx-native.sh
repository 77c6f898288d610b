#!/usr/bin/env bash
# 51-nginx-native: bench/nginx/nginx-run and Debian's nginx on 127.0.0.1 (the
# native-nginx guest's server; linux-nginx runs the same in the guest). The
# configuration it writes (-C) fills in every placeholder and has the
# shutdown location only with -s. Served: GET / and HEAD / with httpd's
# status, Content-Type, Content-Length and body, nginx's Server, Date and
# Connection beside them and nothing else; a 404 for other paths with
# httpd's body; HTTP/1.0 keep-alive as ab sends it; Connection: close
# answered in kind and closed; ab -k with every request on a kept
# connection, ab on new ones. Its exit statuses: 0 after the shutdown
# request and on SIGTERM (its directory removed, no nginx left), 1 when
# nginx fails (the port taken), 2 for bad options, 3 when nginx is not
# there; nginx dies with nginx-run when that is killed.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"

run=$ROOT/$BUILD/host/nginx-run
[ -x "$run" ] || skip "$run not built"
[ -x /usr/sbin/nginx ] || skip "Debian's nginx missing (mk/deps.sh packages)"
needs curl ab
tmp=$(mktemp -d)
NATIVE_PID=""
trap '[ -n "$NATIVE_PID" ] && kill "$NATIVE_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
export TMPDIR=$tmp/run # nginx-run's directories go there
mkdir "$TMPDIR"

echo "== the configuration (-C)"
"$run" -C -a 127.0.0.1 -p 8123 -s >"$tmp/conf" || fail "nginx-run -C failed"
contains -F '@' <"$tmp/conf" && fail "a placeholder left: $(grep -F '@' "$tmp/conf")"
contains -x '        listen 127.0.0.1:8123;' <"$tmp/conf" || fail "no listen line for 127.0.0.1:8123"
contains -x '    keepalive_requests 1000000000;' <"$tmp/conf" || fail "no keepalive_requests"
contains -x '        location = /__shutdown {' <"$tmp/conf" || fail "-s: no shutdown location"
"$run" -C >"$tmp/conf" || fail "nginx-run -C failed"
contains -F '__shutdown' <"$tmp/conf" && fail "a shutdown location without -s"

native_start "$tmp/log" "$run" -s
port=$NATIVE_PORT url=$NATIVE_URL
dir=$(sed -n 's|.*configuration \(.*\)/nginx.conf$|\1|p' "$tmp/log")
[ -d "$dir" ] || fail "nginx-run did not say where its directory is: $(cat "$tmp/log")"

echo "== GET / and HEAD /: httpd's status, headers and body, with nginx's Server, Date, Connection"
curl -s -i --http1.1 "$url/" >"$tmp/got"
expect_answer "$tmp/got" "${NGINX_HEAD200}Connection: keep-alive\r\n\r\n$HELLO_BODY" dated
curl -s -I "$url/" >"$tmp/got"
expect_answer "$tmp/got" "${NGINX_HEAD200}Connection: keep-alive\r\n\r\n" dated
echo "== other paths: 404 with httpd's body"
curl -s -i "$url/missing" >"$tmp/got"
expect_answer "$tmp/got" 'HTTP/1.1 404 Not Found\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 10\r\nConnection: keep-alive\r\n\r\nnot found\n' dated

echo "== HTTP/1.0 keep-alive as ab sends it, then a plain HTTP/1.0 request"
raw_exchange "$port" "$tmp/got" 'GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: h\r\n\r\n' 'GET / HTTP/1.0\r\n\r\n'
strip_date "$tmp/got" 2
expect_answer "$tmp/got" "${NGINX_HEAD200}Connection: keep-alive\r\n\r\n$HELLO_BODY${NGINX_HEAD200}Connection: close\r\n\r\n$HELLO_BODY"
echo "== Connection: close is answered in kind, and nginx closes"
http_closes 127.0.0.1 "$port" "$tmp/got" || fail "nginx did not close the connection (rc $?)"
expect_answer "$tmp/got" "${NGINX_HEAD200}Connection: close\r\n\r\n$HELLO_BODY" dated

echo "== ab -k: every request on a kept connection, 3,000 on one; ab"
ab_keepalive "$url/" 3000 1 || fail "ab -k -c 1 failed"
ab_keepalive "$url/" 5000 8 || fail "ab -k -c 8 failed"
ab_load "$url/" 2000 16 || fail "ab failed"

echo "== shutdown request: 0, its directory removed, no nginx left"
[ "$(curl -s "$url/__shutdown")" = "shutting down" ] || fail "no shutdown answer"
wait "$NATIVE_PID"; rc=$?; NATIVE_PID=""
cat "$tmp/log"
[ $rc = 0 ] || fail "nginx-run exited $rc after a shutdown request"
contains -x 'nginx-run: stopped (shutdown request)' <"$tmp/log" || fail "no stop line"
[ -e "$dir" ] && fail "$dir left behind"
pgrep -f "$dir/nginx.conf" >/dev/null && fail "an nginx of this run is still running"

echo "== without -s, /__shutdown is 404; SIGTERM stops it with 0"
native_start "$tmp/quiet" "$run" -q
[ "$(curl -s -o /dev/null -w '%{http_code}' "$NATIVE_URL/__shutdown")" = 404 ] || fail "shutdown not refused"
echo "== the port taken: nginx fails, nginx-run says 1"
"$run" -a 127.0.0.1 -p "$NATIVE_PORT" -q 2>"$tmp/err"; rc=$?
[ $rc = 1 ] || fail "nginx-run exited $rc with its port taken, not 1: $(cat "$tmp/err")"
contains -F 'nginx-run: nginx exited with status 1' <"$tmp/err" || fail "no message: $(cat "$tmp/err")"
kill -TERM "$NATIVE_PID"
wait "$NATIVE_PID"; rc=$?; NATIVE_PID=""
[ $rc = 0 ] || fail "nginx-run exited $rc on SIGTERM"

echo "== nginx-run killed: nginx goes with it"
native_start "$tmp/log" "$run"
dir=$(sed -n 's|.*configuration \(.*\)/nginx.conf$|\1|p' "$tmp/log")
kill -KILL "$NATIVE_PID"
wait "$NATIVE_PID" 2>/dev/null; NATIVE_PID=""
for _ in $(seq 1 50); do
	pgrep -f "$dir/nginx.conf" >/dev/null || break
	sleep 0.1
done
pgrep -f "$dir/nginx.conf" >/dev/null && fail "nginx outlived nginx-run"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$NATIVE_URL/")" = 000 ] || fail "still answering"

echo "== bad options: 2; no nginx: 3"
"$run" -p 0 2>/dev/null; [ $? = 2 ] || fail "-p 0 accepted"
"$run" -a nowhere 2>/dev/null; [ $? = 2 ] || fail "-a nowhere accepted"
"$run" extra 2>/dev/null; [ $? = 2 ] || fail "a stray argument accepted"
"$run" -n "$tmp/no-nginx" 2>/dev/null; [ $? = 3 ] || fail "a missing nginx is not 3"
echo "all good"
