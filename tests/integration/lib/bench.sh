# lib/bench.sh: the frame of the benchmark harness's tests on fixed inputs
# (bench/60, 61, 63, 68, 69; sourced, after lib/net.sh). No QEMU.
#
#   bench_setup [FIXTURE]   py = the python3 to run the harness's scripts with
#                           (skips without one); tmp = a folder removed at
#                           exit; with FIXTURE, fx = tests/fixtures/FIXTURE and
#                           its batch (runs.csv, guests.csv, meta.txt, and
#                           raw/ where it has one) copied into $tmp
#   bench_run ARGS...       bench/run ARGS under $py (bench_run summarise DIR:
#                           every table of the batch in DIR)
#   bench_summarise [ARG...]   bench/run summarise ARG... $tmp, its output in
#                           $tmp/stdout; the test fails if it fails
#   has TEXT                some line of the report $md holds TEXT (fixed string)
#   has_row LINE            a line of the report $md is LINE (a table's row)
#   is_png FILE             where gnuplot is installed (without it the scripts
#                           draw no chart), FILE is a PNG

bench_setup() {
	py=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 missing"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	[ -n "${1:-}" ] || return 0
	fx=$ROOT/tests/fixtures/$1
	cp "$fx/runs.csv" "$fx/guests.csv" "$fx/meta.txt" "$tmp/" || fail "no batch in $fx"
	[ ! -d "$fx/raw" ] || cp -r "$fx/raw" "$tmp/" || fail "cannot copy $fx/raw"
}

bench_run() { "$py" "$ROOT/bench/run" "$@"; }

bench_summarise() {
	bench_run summarise "$@" "$tmp" >"$tmp/stdout" 2>&1 || { cat "$tmp/stdout"; fail "summarise $* failed"; }
}

has() { grep -qF -- "$1" "$md" || fail "$(basename "$md") lacks: $1"; }

has_row() { grep -qxF -- "$1" "$md" || fail "$(basename "$md") lacks the row: $1"; }

is_png() {
	command -v gnuplot >/dev/null || return 0
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$(basename "$1") is not a PNG"
}
