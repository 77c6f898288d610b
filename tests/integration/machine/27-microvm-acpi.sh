#!/usr/bin/env bash
# QEMU's microvm with its ACPI tables on (qemu-run --acpi on: one I/O APIC,
# qboot): QEMU then writes no virtio_mmio.device= entry, and the kernel finds
# the NIC's window in the DSDT (an LNRO0005 device: VR07, 0xfeb00e00, GSI
# 23), saying so in one line. On QEMU 7.2 and, where deps/qemu10 is there,
# QEMU 10: hello by PVH (the line, with verbose the window; no entry reached
# argv); httpd by PVH over user networking (GET / byte for byte, the NIC's
# interrupts through the line, a clean exit). On 7.2 also: httpd by the
# loader with ACPI on (no entry written by qemu-run either); command-line
# entries win over the DSDT; no device, no line; ACPI off (the default) as
# before, from the command line.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build} QEMU_RUN=${QEMU_RUN:-$ROOT/tools/qemu-run}
. "$ROOT/tests/integration/lib/net.sh"
uk_test httpd curl
HELLO=$ROOT/$BUILD/apps/hello.elf
[ -f "$HELLO" ] || fail "no $HELLO"
DSDT_LINE='^kernel: virtio-mmio: 1 device from ACPI DSDT'

# run_hello OUT QEMU-RUN-OPTIONS... -- APPEND: hello, its console (no CRs) in OUT.
run_hello() {
	local out=$1 opts=()
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	"$QEMU_RUN" --machine microvm --timeout 60 "${opts[@]}" --append "$2" "$HELLO" 2>&1 | tr -d '\r' >"$out"
	RC=${PIPESTATUS[0]}
}

# serve_httpd WHAT QEMU-RUN-OPTIONS... -- FILES...: httpd on user networking,
# GET / compared byte for byte, the DSDT's line, interrupts through the line,
# a clean exit after the shutdown request.
serve_httpd() {
	local what=$1 opts=() port
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	echo "== $what ($("$QEMU_RUN" --version))"
	port=$(free_port) || fail "no free port"
	guest_start "$tmp/console" "$tmp/qemu.pid" "$QEMU_RUN" --machine microvm --acpi on --net user \
		--hostfwd "$port:80" --timeout 120 "${DESIGN_QEMU[@]}" --append "$DESIGN_KOPTS -- -p 80 -s" "${opts[@]}" "$@"
	guest_wait_http "http://127.0.0.1:$port/" 60 || { cat "$tmp/console"; fail "$what: no HTTP answer"; }
	expect_get "http://127.0.0.1:$port/" "$tmp/got" "$HTTPD_HELLO"
	curl -s -m 5 "http://127.0.0.1:$port/__shutdown" >/dev/null
	guest_wait_exit 130 || { cat "$tmp/console"; fail "$what: still running after the shutdown request"; }
	[ "$GUEST_RC" = 0 ] ||
		{ cat "$tmp/console"; fail "$what: exit status $GUEST_RC after the shutdown request"; }
	tr -d '\r' <"$tmp/console" | contains -E "$DSDT_LINE\$" ||
		{ cat "$tmp/console"; fail "$what: no line saying the NIC came from the DSDT"; }
	tr -d '\r' <"$tmp/console" | contains -E '^virtio-net: rx [0-9]+ frames .* irqs rx [1-9][0-9]* tx 0 config 0;' ||
		{ cat "$tmp/console"; fail "$what: no receive interrupt through the virtio-mmio line"; }
	tr -d '\r' <"$tmp/console" | contains -E '^kernel: uptime [0-9]+ ms; interrupts [0-9]+ \(unexpected 0,' ||
		{ cat "$tmp/console"; fail "$what: unexpected interrupts"; }
}

qemus=(7.2)
# qemu-run answers --version with 200 where QEMU 10 is not unpacked.
if QEMU=10 "$QEMU_RUN" --version >/dev/null 2>&1; then
	qemus+=(10)
else
	echo "(no deps/qemu10: QEMU 10 not tried; mk/deps.sh qemu10 fetches it)"
fi
for q in "${qemus[@]}"; do
	echo "== QEMU $q: hello by PVH, ACPI on ($(QEMU=$q "$QEMU_RUN" --version))"
	QEMU=$q run_hello "$tmp/out" --acpi on --net user -- 'verbose -- -s 0'
	cat "$tmp/out"
	[ "$RC" = 0 ] || fail "QEMU $q: hello: status $RC"
	contains -E "$DSDT_LINE: VR07 0xfeb00e00\\+0x200 IRQ 23\$" <"$tmp/out" ||
		fail "QEMU $q: no line giving the DSDT's window"
	if ! contains -E '^argv\[2\] = "0"$' <"$tmp/out" || contains -E '^argv\[3\]' <"$tmp/out"; then
		fail "QEMU $q: argv is not -s 0 alone"
	fi
	QEMU=$q serve_httpd "QEMU $q: httpd by PVH, ACPI on" -- "$IMAGE"
done

serve_httpd "QEMU 7.2: httpd by the loader, ACPI on" --boot loader -- "$LOADER" "$IMAGE"

echo "== command-line entries win over the DSDT"
run_hello "$tmp/out" --acpi on --net user -- 'verbose virtio_mmio.device=512@0xfeb00e00:23 -- -s 0'
cat "$tmp/out"
[ "$RC" = 0 ] || fail "status $RC"
! contains 'from ACPI DSDT' <"$tmp/out" || fail "the DSDT was read although the command line gave an entry"

echo "== no device described: nothing said"
run_hello "$tmp/out" --acpi on --net none -- '-- -s 0'
cat "$tmp/out"
[ "$RC" = 0 ] || fail "status $RC"
! contains 'virtio-mmio' <"$tmp/out" || fail "a virtio-mmio line with no device"

echo "== ACPI off (the default): the entry QEMU writes"
run_hello "$tmp/out" --net user -- '-- -s 0'
cat "$tmp/out"
[ "$RC" = 0 ] || fail "status $RC"
! contains 'from ACPI DSDT' <"$tmp/out" || fail "the DSDT was read on a machine without ACPI"
echo "all good"
