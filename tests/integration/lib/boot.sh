# lib/boot.sh: helpers for integration tests that boot an image and read what the
# serial console printed. Source it; then:
#
#   boot IMAGE [qemu-run options...] [-- APPEND]   sets OUT (console text, no CRs) and RC;
#                                                  extra QEMU arguments come from $QEMU_EXTRA;
#                                                  the machine and entry from $MACHINE and
#                                                  $BOOT (qemu-run's --machine and --boot:
#                                                  `make test-integration MACHINE=microvm`)
#                                                  unless the options name them; under
#                                                  $SMP_DESIGN the design's build of IMAGE
#                                                  on its CPUs (lib/design.sh)
#   expect_rc N                                    fails unless RC is N
#   expect REGEX [what]                            fails unless a line of OUT matches
#   expect_not REGEX [what]                        fails if a line matches
#   fail MESSAGE                                   prints OUT and exits 1
#   contains [GREP-OPTION...] RE                   whether stdin has a line matching RE, read to
#                                                  its end (tools/lib/guest.sh's)
set -u
: "${ROOT:?run through tests/run-integration}"
. "$ROOT/tools/lib/guest.sh"
. "$ROOT/tests/integration/lib/design.sh"
BUILD=${BUILD:-build}
LOADER=${LOADER:-$ROOT/$BUILD/loader/loader.elf}
HELLO=$ROOT/$BUILD/apps/hello.elf

fail() {
	echo "FAIL: $*"
	echo "---- console (rc=${RC:-?}) ----"
	printf '%s\n' "${OUT:-}"
	exit 1
}

# boot IMAGE [qemu-run options] [-- kernel command line]
boot() {
	local image=$1 append="" opts=()
	shift
	while [ $# -gt 0 ]; do
		if [ "$1" = -- ]; then shift; append="$*"; break; fi
		opts+=("$1"); shift
	done
	design_image "$image"
	image=$DESIGN_IMAGE
	opts+=("${DESIGN_QEMU[@]}")
	[ -z "$DESIGN_KOPTS" ] || append="$DESIGN_KOPTS $append"
	# Under PVH the image boots alone; the loader boots it otherwise.
	local machine=${MACHINE:-pc} how=${BOOT:-} i
	for ((i = 0; i < ${#opts[@]} - 1; i++)); do
		case ${opts[i]} in --machine) machine=${opts[i + 1]} ;; --boot) how=${opts[i + 1]} ;; esac
	done
	[ -n "$how" ] || { [ "$machine" = microvm ] && how=pvh || how=loader; }
	local files=("$LOADER" "$image")
	[ "$how" = pvh ] && files=("$image")
	echo "+ qemu-run --machine $machine --boot $how ${opts[*]} --append '$append' ${files[*]}"
	local log
	log=$(mktemp)
	local extra=()
	[ -n "${QEMU_EXTRA:-}" ] && read -ra extra <<<"-- $QEMU_EXTRA"
	"$QEMU_RUN" --timeout "${BOOT_TIMEOUT:-60}" --machine "$machine" --boot "$how" "${opts[@]}" \
		--append "$append" "${files[@]}" "${extra[@]}" >"$log" 2>&1
	RC=$?
	OUT=$(tr -d '\r' <"$log")
	rm -f "$log"
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	echo "  rc=$RC"
}

expect_rc() {
	[ "$RC" = "$1" ] || fail "exit status $RC, expected $1"
}

expect() {
	grep -Eq -- "$1" <<<"$OUT" || fail "no line matches /$1/ ${2:-}"
}

expect_not() {
	! grep -Eq -- "$1" <<<"$OUT" || fail "a line matches /$1/ ${2:-}"
}
