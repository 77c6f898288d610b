#!/usr/bin/env bash
# A bad application image stops in the loader with a one-line reason and exit
# status 65, never a triple fault (which qemu-run reports as 202) or a hang.
. "$(dirname "$0")/../lib/boot.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # IMAGE REASON-REGEX
	boot "$1"
	expect_rc 65
	expect "^loader: error: $2"
	[ "$(printf '%s\n' "$OUT" | grep -c '^loader: error')" = 1 ] || fail "not exactly one error line"
}

head -c 4096 /dev/urandom >"$tmp/random"
check "$tmp/random" "not an ELF file"

cp "$HELLO" "$tmp/machine"
printf '\x03' | dd of="$tmp/machine" bs=1 seek=18 conv=notrunc status=none # e_machine = i386
check "$tmp/machine" "ELF machine is not x86_64"

head -c 300 "$HELLO" >"$tmp/truncated"
check "$tmp/truncated" "segment data lies outside the file"

# The first program header's physical address (offset 64+24) moved above RAM.
cp "$HELLO" "$tmp/high"
printf '\x00\x00\x00\x40' | dd of="$tmp/high" bs=1 seek=$((64 + 24 + 4)) conv=notrunc status=none
printf '\x00\x00\x00\x40' | dd of="$tmp/high" bs=1 seek=$((64 + 16 + 4)) conv=notrunc status=none
check "$tmp/high" "segment lies (outside usable RAM|above the loader)"

# W^X: the text segment's flags (offset 64+4) made R W X.
cp "$HELLO" "$tmp/wx"
printf '\x07' | dd of="$tmp/wx" bs=1 seek=$((64 + 4)) conv=notrunc status=none
check "$tmp/wx" "segment is both writable and executable"

# The data segment (the third header) made read-only and 20 MiB long: more
# read-only 2 MiB pages than the loader's page tables split.
cp "$HELLO" "$tmp/bigro"
printf '\x04' | dd of="$tmp/bigro" bs=1 seek=$((64 + 2 * 56 + 4)) conv=notrunc status=none
printf '\x00\x00\x40\x01' | dd of="$tmp/bigro" bs=1 seek=$((64 + 2 * 56 + 40)) conv=notrunc status=none
check "$tmp/bigro" "image text and read-only data span more than 7 2 MiB pages"

: >"$tmp/empty"
check "$tmp/empty" "image too small"

# No image at all.
"$QEMU_RUN" --timeout 30 "$LOADER" >"$tmp/out" 2>&1
RC=$?
OUT=$(tr -d '\r' <"$tmp/out")
expect_rc 65
expect '^loader: error: no application image'
