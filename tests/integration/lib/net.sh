# lib/net.sh: shell helpers for the network integration tests (sourced).
#
# Offers (besides tools/lib/netns.sh's netns_* functions and free_port, and
# tools/lib/guest.sh's contains, guest_start, guest_wait_http URL SECS [PID]
# (through $NET_EXEC), guest_wait_console FILE RE SECS [PID] and the rest):
#   skip MSG                 print MSG, exit 77 (skipped)
#   fail MSG                 print MSG, exit 1
#   needs TOOL...            skip ("TOOL missing", which mk/deps.sh installs)
#                            unless every TOOL is installed
#   test_tmp                 tmp, a fresh folder, and the test's clean-up at exit
#                            (test_cleanup): what it started killed (guest_kill;
#                            and $pid, with the QEMU whose pid is in
#                            $tmp/qemu.pid, where the test starts its own), the
#                            namespace NET_NS deleted, tmp removed
#   uk_test IMAGE TOOL...    a unikernel test's start: IMAGE, apps/IMAGE.elf
#                            under $BUILD (under $SMP_DESIGN the design's build,
#                            and DESIGN_QEMU and DESIGN_KOPTS what its boot
#                            adds: lib/design.sh), and LOADER (FAIL when not
#                            built), then needs TOOL..., then test_tmp
#   linux_test TOOL...       a Linux guest test's start: LG_KERNEL and LG_INITRD,
#                            the guest's (skips when not built: make
#                            linux-guest), then needs TOOL..., then test_tmp
#   HELLO_BODY, HTTPD_HEAD200, NGINX_HEAD200, HTTPD_HELLO
#                            (printf's formats) httpd's body for GET /; the head
#                            of its 200 up to the blank line, from httpd and
#                            from nginx (Server: nginx, no Date); httpd's whole
#                            answer to an HTTP/1.1 GET /
#   USER_GUEST_NET           the kernel options of slirp's address for the guest
#                            (QEMU's user networking and passt hand out these)
#   tap_netns PREFIX         a fresh namespace PREFIX-$$ with its tap for the next
#                            guest (skips where none can be made: no root, ip or
#                            /dev/net/tun); sets NET_NS (the caller's clean-up
#                            deletes it: netns_destroy "$NET_NS") and NET_EXEC
#   net_backend BACKEND PREFIX PORT...
#                            where the next guest serves its PORTs: `tap`, a
#                            tap_netns PREFIX, or `user`, QEMU's user networking
#                            with a free port of 127.0.0.1 forwarded to each
#                            PORT; sets NET_EXEC, NET_NS (tap), NET_QEMU
#                            (qemu-run's network options), NET_HOST (the guest's
#                            address for a client), NET_PORTS (the client's port
#                            for each PORT, in order) and NET_GUEST (the kernel
#                            options of the guest's address)
#   cpu_share PID SECS       the share of a core (a percentage, one decimal) that
#                            process PID (QEMU) uses over the next SECS seconds,
#                            from its user and system ticks
#   native_start LOG CMD...  a server on the host, CMD -a 127.0.0.1 -p PORT
#                            (a free port) in the background, its output in LOG,
#                            until it answers GET / (10 s; else FAIL with LOG);
#                            sets NATIVE_PID, NATIVE_PORT and NATIVE_URL
#   raw_exchange PORT OUT PART...
#                            connect to 127.0.0.1:PORT, send each PART (printf
#                            %b escapes) 0.2 s apart, save everything received
#                            until the server closes (5 s at most) in OUT
#   expect_file OUT WANT     byte-for-byte comparison, showing both on a miss
#   expect_answer GOT WANT [dated]
#                            GOT (a saved answer; with `dated`, after strip_date)
#                            is WANT (printf's format) byte for byte; WANT goes to
#                            GOT.want
#   expect_get URL GOT WANT [dated]
#                            GET URL through $NET_EXEC (curl -i) into GOT, then
#                            expect_answer GOT WANT
#   ab_load URL N C [-k]     ApacheBench through $NET_EXEC: N requests over C
#                            connections (2 minutes at most); true only when all
#                            N completed, none failed and none was non-2xx
#                            (ab's output is shown then)
#   ab_keepalive URL N C     ab -k through $NET_EXEC: as ab_load, and every one of
#                            the N requests went over a kept connection ("Keep-Alive
#                            requests: N")
#   http_closes HOST PORT OUT
#                            through $NET_EXEC, send one `GET / HTTP/1.1` with
#                            `Connection: close` and save everything received in OUT;
#                            false when the server has not closed within 5 s
#   strip_date FILE [N]      check FILE (responses) has N (default 1) Date headers, each
#                            in RFC 9110's form, and remove those lines (nginx's answers
#                            differ from httpd's by them, and they change every second)
#   linux_tap_start KERNEL INITRD PREFIX ARGS
#                            boot a Linux guest in a fresh namespace on its tap: kernel
#                            command line PREFIX, the static address, `-- ARGS`; sets
#                            NET_EXEC, LG_HOST, LG_URL (http://LG_HOST:8080), LG_PID,
#                            LG_TMP (console in $LG_TMP/console); cleans up at exit
#   linux_tap_stop           GET /__shutdown, wait; LG_RC = qemu-run's status (the app's),
#                            console (CRs removed) printed and left in $LG_TMP/console
#   linux_bench_start NAME   the benchmark's Linux guest NAME (guest_resolve: the test
#                            sources tools/lib/guests.sh) booted by linux_tap_start with
#                            `-p 8080 -s`, until its first answer (skips without curl, ab)
#   linux_tap_closes WANT [dated]
#                            a GET with Connection: close (http_closes) answered with
#                            WANT (printf's format; with `dated`, after strip_date)
#                            and the connection closed by the guest
#   linux_bench_stop APP WHO linux_tap_stop; fails unless the status is 0, init ran
#                            /bin/APP and saw it exit 0, and "WHO: stopped (shutdown
#                            request)" is on the console
#   uk_tap_start IMAGE ARGS [KERNEL-OPTIONS]
#                            boot a unikernel image in a fresh namespace on its tap,
#                            static address and KERNEL-OPTIONS, app argv ARGS,
#                            ended by qemu-run after UK_TIMEOUT s (default 120);
#                            with UK_CONSOLE_IN=1 its console input is a fifo held
#                            on GUEST_CONSOLE_FD (Ctrl-T there prints its
#                            counters); sets NET_EXEC, UK_URL, UK_PID, UK_TMP
#                            (console in $UK_TMP/console); cleans up at exit
#                            (UK_QEMU_OPTS: more qemu-run options, e.g. --smp 2);
#                            under $SMP_DESIGN the design's build of IMAGE on
#                            its CPUs (lib/design.sh)
#   uk_tap_serve IMAGE ARGS [KERNEL-OPTIONS]
#                            uk_tap_start, then until httpd's first answer (60 s;
#                            else FAIL with the console)
#   uk_tap_stop              GET /__shutdown, wait; UK_RC = exit status, console
#                            (CRs removed) printed and left in $UK_TMP/console
# Traffic goes only to 127.0.0.1 or into namespaces the tests create.

. "${ROOT:-.}/tools/lib/netns.sh"
. "${ROOT:-.}/tools/lib/guest.sh"
. "${ROOT:-.}/tests/integration/lib/design.sh"

NET_EXEC=() NET_NS=""

skip() { echo "$*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

needs() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || skip "$t missing (mk/deps.sh packages installs it)"
	done
}

test_tmp() {
	tmp=$(mktemp -d) pid=""
	trap test_cleanup EXIT
}

test_cleanup() {
	[ -s "$tmp/qemu.pid" ] && kill "$(cat "$tmp/qemu.pid")" 2>/dev/null
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	guest_kill
	netns_destroy "$NET_NS"
	rm -rf "$tmp"
}

uk_test() {
	IMAGE=$ROOT/$BUILD/apps/$1.elf LOADER=${LOADER:-$ROOT/$BUILD/loader/loader.elf}
	shift
	[ -f "$IMAGE" ] || fail "no $IMAGE"
	design_image "$IMAGE"
	IMAGE=$DESIGN_IMAGE
	needs "$@"
	test_tmp
}

linux_test() {
	LG_KERNEL=$ROOT/$BUILD/linux/vmlinux LG_INITRD=$ROOT/$BUILD/linux/initrd.img
	[ -f "$LG_KERNEL" ] && [ -f "$LG_INITRD" ] || skip "Linux guest not built (make linux-guest)"
	needs "$@"
	test_tmp
}

HELLO_BODY='Hello from httpd, a poll()-based server.\n'
HTTPD_HEAD200='HTTP/1.1 200 OK\r\nServer: httpd\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n'
NGINX_HEAD200='HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n'
HTTPD_HELLO="$HTTPD_HEAD200\r\n$HELLO_BODY"
USER_GUEST_NET="ip=10.0.2.15 gw=10.0.2.2 mask=255.255.255.0"

tap_netns() {
	netns_usable || skip "tap back-end needs root, ip and /dev/net/tun"
	NET_NS=$1-$$
	netns_create "$NET_NS" || { NET_NS=""; skip "cannot create a network namespace here"; }
	NET_EXEC=(ip netns exec "$NET_NS")
}

net_backend() {
	local backend=$1 prefix=$2 p fwd
	shift 2
	NET_PORTS=()
	if [ "$backend" = tap ]; then
		tap_netns "$prefix"
		NET_QEMU=(--net tap --tap "$NETNS_TAP")
		NET_HOST=$NETNS_GUEST_IP NET_GUEST=$NETNS_GUEST_NET NET_PORTS=("$@")
	else
		NET_EXEC=() NET_QEMU=(--net "$backend") # user or passt: the same addresses
		for p in "$@"; do
			fwd=$(free_port) || fail "no free port to forward"
			NET_QEMU+=(--hostfwd "$fwd:$p")
			NET_PORTS+=("$fwd")
		done
		NET_HOST=127.0.0.1 NET_GUEST=$USER_GUEST_NET
	fi
}

cpu_share() {
	local pid=$1 secs=$2 t0 t1
	t0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	sleep "$secs"
	t1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v s="$secs" 'BEGIN { printf "%.1f", 100 * d / hz / s }'
}

native_start() {
	local log=$1
	shift
	NATIVE_PORT=$(free_port) || fail "no free port"
	NATIVE_URL=http://127.0.0.1:$NATIVE_PORT
	"$1" -a 127.0.0.1 -p "$NATIVE_PORT" "${@:2}" >"$log" 2>&1 &
	NATIVE_PID=$!
	guest_wait_http "$NATIVE_URL/" 10 "$NATIVE_PID" || fail "${1##*/} did not answer (log: $(cat "$log"))"
}

raw_exchange() {
	local port=$1 out=$2 part first=1
	shift 2
	exec {fd}<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect to 127.0.0.1:$port"
	for part in "$@"; do
		[ $first = 1 ] || sleep 0.2
		first=0
		printf '%b' "$part" >&$fd 2>/dev/null
	done
	timeout 5 cat <&$fd >"$out"
	local rc=$?
	exec {fd}>&-
	[ $rc = 124 ] && fail "server did not close the connection (exchange on port $port)"
	return 0
}

expect_file() {
	local got=$1 want=$2
	if ! cmp -s "$got" "$want"; then
		echo "--- expected:"; od -c "$want" | head -40
		echo "--- got:"; od -c "$got" | head -40
		fail "response differs ($got)"
	fi
}

expect_answer() {
	local got=$1
	[ "${3:-}" != dated ] || strip_date "$got"
	# shellcheck disable=SC2059 # the answer is a format: its escapes
	printf "$2" >"$got.want"
	expect_file "$got" "$got.want"
}

expect_get() {
	"${NET_EXEC[@]}" curl -s -i "$1" >"$2"
	expect_answer "$2" "$3" "${4:-}"
}

ab_load() {
	local url=$1 n=$2 c=$3 k=${4:-} out rc=1
	out=$(mktemp)
	if "${NET_EXEC[@]}" timeout 120 ab -q $k -n "$n" -c "$c" -s 10 "$url" >"$out" 2>&1 &&
		grep -q "^Complete requests: *$n\$" "$out" && grep -q '^Failed requests: *0$' "$out" &&
		! grep -q '^Non-2xx responses' "$out"; then
		echo "ab $k -n $n -c $c: $(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$out") req/s, 0 failed"
		rc=0
	else
		cat "$out"
		echo "ab $k -n $n -c $c: did not finish, or incomplete, failed or non-2xx requests"
	fi
	rm -f "$out"
	return $rc
}

ab_keepalive() {
	local url=$1 n=$2 c=$3 out rc=1
	out=$(mktemp)
	if "${NET_EXEC[@]}" timeout 120 ab -q -k -n "$n" -c "$c" -s 10 "$url" >"$out" 2>&1 &&
		grep -q "^Complete requests: *$n\$" "$out" && grep -q '^Failed requests: *0$' "$out" &&
		! grep -q '^Non-2xx responses' "$out" && grep -q "^Keep-Alive requests: *$n\$" "$out"; then
		echo "ab -k -n $n -c $c: $(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$out") req/s, 0 failed, all kept alive"
		rc=0
	else
		cat "$out"
		echo "ab -k -n $n -c $c: did not finish, or incomplete, failed, non-2xx or not kept-alive requests"
	fi
	rm -f "$out"
	return $rc
}

http_closes() {
	local host=$1 port=$2 out=$3
	"${NET_EXEC[@]}" timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 2
		printf "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n" >&3
		cat <&3' "$host" "$port" >"$out"
}

strip_date() {
	local file=$1 n=${2:-1}
	[ "$(grep -c '^Date: ' "$file")" = "$n" ] || fail "not $n Date header(s) in $file"
	[ "$(grep -Ec $'^Date: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT\r$' "$file")" = "$n" ] ||
		fail "a Date header not in RFC 9110's form: $(grep '^Date: ' "$file")"
	grep -v '^Date: ' "$file" >"$file.nodate"
	mv "$file.nodate" "$file"
}

linux_tap_start() {
	local kernel=$1 initrd=$2 prefix=$3 args=$4
	[ -f "$kernel" ] && [ -f "$initrd" ] || skip "Linux guest not built ($kernel, $initrd)"
	LG_TMP=$(mktemp -d) LG_PID=""
	trap 'guest_kill; netns_destroy "$NET_NS"; rm -rf "$LG_TMP"' EXIT
	tap_netns lg
	LG_HOST=$NETNS_GUEST_IP LG_URL=http://$NETNS_GUEST_IP:8080
	guest_start "$LG_TMP/console" "$LG_TMP/qemu.pid" "${NET_EXEC[@]}" "$QEMU_RUN" --net tap --tap "$NETNS_TAP" \
		--timeout 200 --append "$prefix $NETNS_GUEST_NET -- $args" "$kernel" "$initrd"
	LG_PID=$GUEST_PID
}

linux_tap_stop() {
	"${NET_EXEC[@]}" curl -s -m 5 "$LG_URL/__shutdown" >/dev/null
	guest_wait_exit 210 # qemu-run's --timeout ends it before
	LG_RC=$GUEST_RC
	LG_PID=""
	rm -f "$LG_TMP/qemu.pid"
	tr -d '\r' <"$LG_TMP/console" >"$LG_TMP/c" && mv "$LG_TMP/c" "$LG_TMP/console"
	cat "$LG_TMP/console"
}

linux_bench_start() {
	local name=$1
	needs curl ab
	GUESTS_BUILD=$ROOT/$BUILD guest_resolve "$name" || fail "guests.sh does not know $name"
	echo "$name: $GUEST_PREFIX, $GUEST_INITRD"
	echo "== booting $name (tap)"
	linux_tap_start "$GUEST_KERNEL" "$GUEST_INITRD" "$GUEST_PREFIX" "-p 8080 -s"
	SECONDS=0
	guest_wait_http "$LG_URL/" 150 "$LG_PID" || { cat "$LG_TMP/console"; fail "no HTTP answer from the guest"; }
	echo "first response after ${SECONDS}s"
}

linux_tap_closes() {
	echo "== Connection: close is answered in kind, and the guest closes"
	http_closes "$LG_HOST" 8080 "$LG_TMP/got" || fail "the guest did not close the connection (rc $?)"
	expect_answer "$LG_TMP/got" "$1" "${2:-}"
}

linux_bench_stop() {
	echo "== shutdown request"
	linux_tap_stop
	[ "$LG_RC" = 0 ] || fail "qemu-run returned $LG_RC, not the app's 0"
	contains -x "init: /bin/$1 exited with status 0" <"$LG_TMP/console" || fail "init did not run $1"
	contains -x "$2: stopped (shutdown request)" <"$LG_TMP/console" || fail "$1 did not stop on the request"
}

# linux_guest_check BACKEND: boots the Linux guest on `user` or `tap`, checks
# GET / byte for byte, a short ab -k and ab run, then stops it with the
# shutdown request and expects qemu-run to return the app's status, 0.
linux_guest_check() {
	local backend=$1 kernel=$ROOT/$BUILD/linux/vmlinux initrd=$ROOT/$BUILD/linux/initrd.img
	local tmp url rc
	[ -f "$kernel" ] && [ -f "$initrd" ] || skip "Linux guest not built (make linux-guest)"
	needs curl ab
	tmp=$(mktemp -d)
	LG_TMP=$tmp LG_PID=""
	trap 'guest_kill; netns_destroy "$NET_NS"; rm -rf "$LG_TMP"' EXIT
	net_backend "$backend" itest 8080
	url=http://$NET_HOST:${NET_PORTS[0]}
	echo "== booting the Linux guest ($backend)"
	guest_start "$tmp/console" "$tmp/qemu.pid" "${NET_EXEC[@]}" "$QEMU_RUN" "${NET_QEMU[@]}" --timeout 200 \
		--append "console=ttyS0 quiet panic=-1 $NET_GUEST -- -p 8080 -s" "$kernel" "$initrd"
	LG_PID=$GUEST_PID
	SECONDS=0
	guest_wait_http "$url/" 150 || { cat "$tmp/console"; fail "no HTTP answer from the guest"; }
	echo "first response after ${SECONDS}s"

	expect_get "$url/" "$tmp/got" "$HTTPD_HELLO"

	ab_load "$url/" 300 4 -k || fail "ab -k failed"
	ab_load "$url/" 100 4 || fail "ab failed"

	echo "== shutdown request"
	"${NET_EXEC[@]}" curl -s -m 5 "$url/__shutdown" >/dev/null
	guest_wait_exit 210 # qemu-run's --timeout ends it before
	rc=$GUEST_RC LG_PID=""
	cat "$tmp/console"
	[ $rc = 0 ] || fail "qemu-run returned $rc, not the app's 0"
	echo "all good"
}

uk_tap_start() {
	local image=$1 args=$2 kopts=${3:-}
	[ -f "$image" ] || fail "no $image"
	design_image "$image"
	image=$DESIGN_IMAGE
	UK_TMP=$(mktemp -d) UK_PID=""
	trap 'guest_kill; netns_destroy "$NET_NS"; rm -rf "$UK_TMP"' EXIT
	tap_netns uk
	UK_URL=http://$NETNS_GUEST_IP
	[ "${UK_CONSOLE_IN:-}" != 1 ] || guest_console_in "$UK_TMP/console-in" || fail "no fifo for the console input"
	guest_start "$UK_TMP/console" "" "${NET_EXEC[@]}" "$QEMU_RUN" --net tap --tap "$NETNS_TAP" \
		--timeout "${UK_TIMEOUT:-120}" ${UK_QEMU_OPTS:-} "${DESIGN_QEMU[@]}" \
		--append "$NETNS_GUEST_NET $DESIGN_KOPTS $kopts -- $args" \
		"$ROOT/$BUILD/loader/loader.elf" "$image"
	UK_PID=$GUEST_PID
}

uk_tap_serve() {
	uk_tap_start "$@"
	guest_wait_http "$UK_URL/" 60 "$UK_PID" || { cat "$UK_TMP/console"; fail "no HTTP answer"; }
}

uk_tap_stop() {
	"${NET_EXEC[@]}" curl -s -m 5 "$UK_URL/__shutdown" >/dev/null
	guest_wait_exit $((${UK_TIMEOUT:-120} + 10)) # qemu-run's --timeout ends it before
	UK_RC=$GUEST_RC
	UK_PID=""
	tr -d '\r' <"$UK_TMP/console" >"$UK_TMP/c" && mv "$UK_TMP/c" "$UK_TMP/console"
	cat "$UK_TMP/console"
}
