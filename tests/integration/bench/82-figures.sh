#!/usr/bin/env bash
# 82-figures: every figures block in README.md and docs/ is what its batch's
# report gives (tools/figures.py --check), and the script itself on a
# made-up tree: a block is filled from the named section's table, its rows
# filtered by a column's value, with the batch's provenance line above it
# (date, commit +dirty, guard, load); a section named by a heading or by a
# paragraph's opening words (bench-bulk's reports); cell marks stay; a block edited by
# hand, a missing section or column, and a block without its end mark are
# each reported with exit 1. No QEMU.
set -uo pipefail
ROOT=${ROOT:-$(pwd)}
fail() { echo "FAIL: $*"; exit 1; }
python3 "$ROOT/tools/figures.py" --check || fail "a figures block differs from its batch"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$tmp/bench/results/demo-20261205-101010
mkdir -p "$tmp/tools" "$b" "$tmp/docs"
cp "$ROOT/tools/figures.py" "$ROOT/tools/batch_meta.py" "$tmp/tools/"
printf 'date: 2026-12-05T10:10:10+0000\ngit: abc1234 (images built with uncommitted changes in: x)\nload at start: 0.42 0.5 0.6\nguard: passed: fine\n' >"$b/meta.txt"
cat >"$b/summary.md" <<'TXT'
# Benchmark summary

## Best

### back-end `tap`

| load | guest | req/s |
|---|---|---|
| k1 | uk | 100 (90-110) [n=4/5] |
| k1 | other | 50 |
| k8 | uk | 200 ~ |

## Next

| a | b |
|---|---|
| 1 | 2 |

Gbit/s by guest, median (min-max), as bench-bulk writes its tables.

| guest | up |
|---|---|
| uk | 5.6 (5.5-5.8) |
TXT
block='<!-- figures: bench/results/demo-20261205-101010/summary.md "Best" guest=uk -->'
printf '# Doc\n\n%s\n<!-- end figures -->\n\ntext after\n' "$block" >"$tmp/README.md"
python3 "$tmp/tools/figures.py" --check >"$tmp/out" && fail "an empty block passed the check"
python3 "$tmp/tools/figures.py" >/dev/null || fail "the script failed to fill the block"
python3 "$tmp/tools/figures.py" --check >/dev/null || fail "the block it wrote fails its own check"
cat >"$tmp/want" <<TXT
# Doc

$block
Batch \`bench/results/demo-20261205-101010\` (2026-12-05 10:10 UTC, commit abc1234+dirty, guard passed, load 0.42).

| load | guest | req/s |
|---|---|---|
| k1 | uk | 100 (90-110) [n=4/5] |
| k8 | uk | 200 ~ |
<!-- end figures -->

text after
TXT
cmp -s "$tmp/want" "$tmp/README.md" || { diff "$tmp/want" "$tmp/README.md"; fail "the filled block"; }
printf '%s\n<!-- end figures -->\n' '<!-- figures: bench/results/demo-20261205-101010/summary.md "Gbit/s by guest" -->' >"$tmp/docs/b.md"
python3 "$tmp/tools/figures.py" >/dev/null || fail "the script failed on a paragraph's table"
grep -qxF '| uk | 5.6 (5.5-5.8) |' "$tmp/docs/b.md" || fail "a paragraph's opening words did not find its table: $(cat "$tmp/docs/b.md")"
rm "$tmp/docs/b.md"
sed -i 's/| 200 ~ |/| 201 ~ |/' "$tmp/README.md"
python3 "$tmp/tools/figures.py" --check >"$tmp/out" && fail "a figure edited by hand passed the check"
grep -q 'differ from their batches' "$tmp/out" || fail "no word on the edited figure"
printf '%s\n<!-- end figures -->\n' '<!-- figures: bench/results/demo-20261205-101010/summary.md "Missing" -->' >"$tmp/docs/a.md"
python3 "$tmp/tools/figures.py" --check >"$tmp/out" && fail "a missing section passed"
grep -q "no heading or paragraph 'Missing'" "$tmp/out" || fail "the missing section not named: $(cat "$tmp/out")"
printf '%s\n<!-- end figures -->\n' '<!-- figures: bench/results/demo-20261205-101010/summary.md "Best" colour=red -->' >"$tmp/docs/a.md"
python3 "$tmp/tools/figures.py" --check >"$tmp/out" && fail "a missing column passed"
grep -q "no column 'colour'" "$tmp/out" || fail "the missing column not named"
printf '%s\n' '<!-- figures: bench/results/demo-20261205-101010/summary.md "Next" -->' >"$tmp/docs/a.md"
python3 "$tmp/tools/figures.py" --check >"$tmp/out" && fail "a block without its end mark passed"
grep -q 'without its end mark' "$tmp/out" || fail "the missing end mark not named"
echo "all good"
