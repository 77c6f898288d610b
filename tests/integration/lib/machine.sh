# lib/machine.sh: what the machine tests (08, 09) add to lib/boot.sh. Source it
# after lib/boot.sh; then:
#
#   serve IMAGE [qemu-run options...] [-- KERNEL-OPTIONS]
#       boots an httpd image on the user back-end (extra QEMU arguments from
#       $QEMU_EXTRA; under $SMP_DESIGN the design's build on its CPUs,
#       lib/design.sh), fetches GET / through the forwarded port and compares
#       it byte for byte, asks /__shutdown, and sets OUT (the console) and RC
#       (the exit status); fails when there is no answer or a wrong one
#   boots_large_memory          false (and says why) when QEMU cannot reserve
#                               the guest memory the last boot asked for
HTTPD=$ROOT/$BUILD/apps/httpd.elf
HTTPD_BODY='Hello from httpd, a poll()-based server.\n'

serve() {
	local image=$1 kopts="" opts=() extra=() port tmp pid code i
	shift
	while [ $# -gt 0 ]; do
		if [ "$1" = -- ]; then shift; kopts="$*"; break; fi
		opts+=("$1"); shift
	done
	[ -n "${QEMU_EXTRA:-}" ] && read -ra extra <<<"-- $QEMU_EXTRA"
	design_image "$image"
	image=$DESIGN_IMAGE
	opts+=("${DESIGN_QEMU[@]}")
	kopts="$DESIGN_KOPTS $kopts"
	port=$((20000 + RANDOM % 20000))
	while ss -Htln "sport = :$port" 2>/dev/null | contains .; do port=$((20000 + RANDOM % 20000)); done
	tmp=$(mktemp -d)
	echo "+ serve ${opts[*]} --append '$kopts -- -p 80 -s' $image ${extra[*]}"
	"$QEMU_RUN" --net user --hostfwd "$port:80" --timeout 120 "${opts[@]}" \
		--append "$kopts -- -p 80 -s" "$LOADER" "$image" "${extra[@]}" </dev/null >"$tmp/console" 2>&1 &
	pid=$!
	for i in $(seq 600); do
		code=$(curl -s -o "$tmp/body" -w '%{http_code}' --connect-timeout 0.5 -m 2 "http://127.0.0.1:$port/")
		[ "$code" = 200 ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ "$code" = 200 ]; then
		printf "$HTTPD_BODY" | cmp -s - "$tmp/body" && echo "  GET / answered, body as expected" ||
			code="wrong body: $(head -c 80 "$tmp/body")"
		curl -s -m 5 -o /dev/null "http://127.0.0.1:$port/__shutdown"
	fi
	wait "$pid"
	RC=$?
	OUT=$(tr -d '\r' <"$tmp/console")
	rm -rf "$tmp"
	printf '%s\n' "$OUT" | grep -v '^pci:' | sed 's/^/  | /'
	echo "  rc=$RC"
	[ "$code" = 200 ] || fail "no good answer to GET / (${code:-none})"
}

boots_large_memory() {
	if [ "$RC" = 201 ] && printf '%s\n' "$OUT" | contains 'cannot set up guest memory'; then
		echo "  (QEMU cannot reserve that much memory on this host: this case is skipped)"
		return 1
	fi
	return 0
}
