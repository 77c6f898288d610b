#!/usr/bin/env bash
# 41-bytes-bodies: large generated answers and request bodies (issue 14),
# through tests/integration/lib/bodies.py, against httpd natively (127.0.0.1),
# in the unikernel on tap and in the unikernel on user networking (what
# `make run` uses): GET /bytes/N for sizes from 0 to 32 MiB checked by
# SHA-256 against the pattern made independently, HEAD, pipelining behind a
# long answer, POST bodies by Content-Length (5 MiB), chunked and after
# Expect: 100-continue, and refused framings (501, 400). The recipe http.h
# gives for checking a download (curl | sha256sum against awk) is run too.
# The unikernels end with exit status 0 and every socket freed.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
httpd=$ROOT/$BUILD/host/httpd IMAGE=$ROOT/$BUILD/apps/httpd.elf LOADER=$ROOT/$BUILD/loader/loader.elf
[ -x "$httpd" ] || fail "no $httpd"
[ -f "$IMAGE" ] || fail "no $IMAGE"
command -v curl >/dev/null && command -v python3 >/dev/null || skip "curl or python3 missing"
BODIES=$ROOT/tests/integration/lib/bodies.py
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# The shell recipe: curl's download and awk's pattern hash the same.
recipe() { # URL N
	local got want
	got=$("${NET_EXEC[@]}" curl -s -m 60 "$1/bytes/$2" | sha256sum | cut -d' ' -f1)
	want=$(awk -v n="$2" 'BEGIN { for (i = 0; i < n; i += 16) printf "%015x\n", i }' | head -c "$2" |
		sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "curl $1/bytes/$2 | sha256sum: $got, awk's pattern: $want"
	echo "curl /bytes/$2 | sha256sum = awk's pattern ($got)"
}

echo "== native"
port=$(free_port)
"$httpd" -a 127.0.0.1 -p "$port" -s >"$tmp/native.log" 2>&1 &
pids+=($!)
guest_wait_http "http://127.0.0.1:$port/" 10 || fail "httpd did not answer: $(cat "$tmp/native.log")"
python3 "$BODIES" 127.0.0.1 "$port" || fail "native: bodies.py"
recipe "http://127.0.0.1:$port" 3000000
curl -s "http://127.0.0.1:$port/__shutdown" >/dev/null

echo "== unikernel, tap"
if netns_usable; then
	uk_tap_start "$IMAGE" "-p 80 -s"
	# (uk_tap_start's own clean-up, and ours)
	trap '[ -n "$UK_PID" ] && kill "$UK_PID" 2>/dev/null; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
		wait 2>/dev/null; netns_destroy "$NET_NS"; rm -rf "$UK_TMP" "$tmp"' EXIT
	guest_wait_http "$UK_URL/" 60 "$UK_PID" || { cat "$UK_TMP/console"; fail "no HTTP answer"; }
	"${NET_EXEC[@]}" python3 "$BODIES" "$NETNS_GUEST_IP" 80 || { uk_tap_stop | tail -n 20; fail "tap: bodies.py"; }
	recipe "$UK_URL" 3000000
	uk_tap_stop >/dev/null
	[ "$UK_RC" = 0 ] || fail "tap: exit status $UK_RC"
	grep -Eq '^sockets: open 0,' "$UK_TMP/console" || fail "tap: sockets left open"
	NET_EXEC=()
else
	echo "(skipped: the tap back-end needs root, ip and /dev/net/tun)"
fi

echo "== unikernel, user networking"
port=$(free_port)
design_image "$IMAGE" # under make test-smp, the design's build on its CPUs (uk_tap_start's too)
"$QEMU_RUN" --net user --hostfwd "$port:80" --timeout 120 "${DESIGN_QEMU[@]}" --append "$DESIGN_KOPTS -- -p 80 -s" \
	"$LOADER" "$DESIGN_IMAGE" </dev/null >"$tmp/user.console" 2>&1 &
upid=$!
pids+=($upid)
guest_wait_http "http://127.0.0.1:$port/" 60 "$upid" || { cat "$tmp/user.console"; fail "user: no HTTP answer"; }
python3 "$BODIES" 127.0.0.1 "$port" || { tail -n 20 "$tmp/user.console"; fail "user: bodies.py"; }
curl -s -m 5 "http://127.0.0.1:$port/__shutdown" >/dev/null
wait "$upid"
rc=$?
[ $rc = 0 ] || fail "user: exit status $rc"
tr -d '\r' <"$tmp/user.console" | contains -E '^sockets: open 0,' || fail "user: sockets left open"
echo "all good"
