#!/usr/bin/env bash
# The loader hands over with W^X already in force. gdb (on QEMU's gdb stub)
# stops at the image's first instruction, before the kernel builds its own page
# tables, and reads QEMU's `info tlb` (every present leaf entry: NX is the
# first flag column, W the last) and `info registers`. Every page of the
# image's executable segment must be read-only and executable, of its
# read-only segment read-only and not executable, of its data and bss
# writable and not executable; the loader's text (still running the jump)
# read-only and executable; no page anywhere both writable and executable;
# CR0.WP and EFER.NXE on. Then: a CPU without NX is refused, and `verbose`
# makes the loader count the image's pages.
. "$(dirname "$0")/../lib/boot.sh"
command -v gdb >/dev/null || { echo "gdb not installed"; exit 77; }
port=$((20000 + RANDOM % 20000))
tmp=$(mktemp -d)
trap 'kill "$qemu" 2>/dev/null; rm -rf "$tmp"' EXIT

"$QEMU_RUN" --timeout 60 --accel tcg --gdb "$port" --append "quiet -- -s 1" "$LOADER" "$HELLO" \
	>"$tmp/console" 2>&1 &
qemu=$!
for _ in $(seq 50); do
	ss -ltn 2>/dev/null | contains ":$port " && break
	sleep 0.1
done
entry=$(readelf -hW "$HELLO" | awk '/Entry point address/ { print $4 }')
timeout 60 gdb -nx -batch -ex "target remote 127.0.0.1:$port" -ex "hbreak *$entry" \
	-ex continue -ex 'print/x $pc' -ex 'monitor info registers' -ex 'monitor info tlb' \
	-ex kill "$HELLO" 2>&1 | tr -d '\r' >"$tmp/gdb"
# The log gets gdb's lines, CR0 and EFER: the registers and the thousands
# of page table entries are in the check below.
OUT=$(grep -vE '^[0-9a-f]{16}: |^[A-Z][A-Z0-9 ]*=' "$tmp/gdb"; grep -E '^(CR0|EFER)=' "$tmp/gdb")
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect "^\\\$1 = $entry\$" "(stopped at the image's entry point)"
grep -qE '^[0-9a-f]{16}: [0-9a-f]{16} [-A-Z]{9}$' "$tmp/gdb" || fail "no page table entries from 'monitor info tlb'"

# Loadable segments as "NAME VADDR MEMSZ FLAGS" (FLAGS: R, W, E letters).
segments() { # NAME ELF
	readelf -lW "$2" | awk -v name="$1" '$1 == "LOAD" {
		f = ""; for (i = 7; i < NF; i++) f = f $i
		print name, $3, $6, f }'
}
{ segments image "$HELLO"; segments loader "$LOADER"; } >"$tmp/segments"
cat "$tmp/segments"

# Every page of every segment against the entry that maps it (a 4 KiB entry,
# else the 2 MiB one around it), and every entry for W+X. Prints one line per
# segment with the entry of its first page, and one per mismatch.
awk '
function hex(s,   n, i, c) {
	n = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		n = n * 16 + c
	}
	return n
}
FNR == NR { seg[++nseg] = $0; next }
/^[0-9a-f]+: [0-9a-f]+ [-A-Z]+$/ {   # (mawk has no {n})
	a = hex(substr($1, 1, 16)); f = $3
	if (substr(f, 3, 1) == "P") big[a] = f; else small[a] = f
	line[a] = $0
	if (substr(f, 1, 1) == "-" && substr(f, 9, 1) == "W") {
		if (wx++ < 3) print "BAD: writable and executable: " $0
		bad++
	}
}
END {
	for (s = 1; s <= nseg; s++) {
		split(seg[s], p, " ")
		start = hex(p[2]); end = start + hex(p[3])
		want_w = index(p[4], "W") ? "W" : "-"
		want_x = index(p[4], "E") ? "-" : "X"   # the column shows NX
		n = 0; first = ""
		for (a = start - start % 4096; a < end; a += 4096) {
			if (a in small) { f = small[a]; l = line[a] }
			else if ((a - a % 2097152) in big) { f = big[a - a % 2097152]; l = line[a - a % 2097152] }
			else { f = "not mapped"; l = f }
			if (first == "") first = l
			if (substr(f, 1, 1) != want_x || substr(f, 9, 1) != want_w) {
				if (n++ < 3) printf "BAD: %s %s page %x: %s\n", p[1], p[4], a, l
				bad++
			}
		}
		printf "%s %s %x-%x: %d pages, first: %s\n", p[1], p[4], start, end,
			(end - start + 4095) / 4096, first
	}
	if (wx) printf "BAD: %d entries writable and executable\n", wx
	exit bad > 0
}' "$tmp/segments" "$tmp/gdb" >"$tmp/check"
rc=$?
sed 's/^/  /' "$tmp/check"
[ $rc = 0 ] || fail "the page tables at the image's entry are not W^X (lines BAD above)"

cr0=$(sed -nE 's/^CR0=([0-9a-f]+) .*/\1/p' "$tmp/gdb")
efer=$(sed -nE 's/^EFER=([0-9a-f]+).*/\1/p' "$tmp/gdb")
[ -n "$cr0" ] && [ -n "$efer" ] || fail "no CR0 or EFER in 'monitor info registers'"
echo "CR0=$cr0 EFER=$efer"
(( 0x$cr0 & (1 << 16) )) || fail "CR0.WP is off at the image's entry"
(( 0x$efer & (1 << 11) )) || fail "EFER.NXE is off at the image's entry"

# A CPU without NX cannot give the image W^X: refused with a reason and the
# status of a CPU that lacks a feature (test 11 has the others).
QEMU_EXTRA="-cpu qemu64,-nx" boot "$HELLO" -- 'quiet -- -s 0'
expect_rc 69
expect '^loader: error: .*NX'

boot "$HELLO" -- 'verbose quiet -- -s 0'
expect_rc 0
expect '^loader: W\^X map: image [0-9]+ RX [0-9]+ R [0-9]+ RW, loader [0-9]+ RX [0-9]+ R [0-9]+ RW \(4 KiB pages\); the rest RW no-execute$'
