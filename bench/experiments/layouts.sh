#!/usr/bin/env bash
# layouts.sh: builds the `all` httpd image of some commits at several
# layouts, so that `make bench` can compare builds over layouts instead of
# over the one layout each build happens to get. Under TCG the same work
# moves by a tenth in requests/s with where its code and data land
# (docs/results/tcg-window-20261203-160126.md, "The same code, moved");
# what a change's work does shows in the median over layouts.
#
#   bench/experiments/layouts.sh NAME=COMMIT... [PADS="0 1296 2592 3888"]
#
# A layout is LAYOUT_PAD bytes of nothing after the entry code and before
# the data (kernel/kernel.ld): every later function and variable moves, no
# instruction changes. Commits older than that knob get it inserted into
# their own kernel.ld at the same two places (the script stops if it cannot).
# Each commit is built in a git worktree under build/layouts/NAME (deps/
# shared), then relinked once per pad; the images are
# build/apps/httpd-NAME-pPAD.elf. The last line printed is a GUESTS value
# for make bench that alternates them all, e.g.
#   make bench GUESTS="$(bench/experiments/layouts.sh pre=8f9c8ce now=HEAD | tail -1)" \
#       BACKENDS=tap REPS=3 IDLE_SECS=0
# and `bench/run experiment layouts RESULTS_DIR` then reads the batch per commit.
# Builds only: run it before a batch, never during one.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PADS=${PADS:-0 1296 2592 3888}
[ $# -gt 0 ] || { sed -n '9,10p' "$0" >&2; exit 2; }
[ -d deps ] || { echo "layouts: deps/ missing: run make deps first" >&2; exit 2; }

pad_ld() {	# the knob, inserted into a kernel.ld that lacks it
	local ld=$1
	grep -q __layout_pad "$ld" && return 0
	sed -i -e 's/^\t\. = 0x400000;/\tPROVIDE(__layout_pad = 0);\n&/' \
		-e '/\*(\.text\.start)/a\		. += __layout_pad;' \
		-e 's/\.data : { \*(\.data \.data\.\*) }/.data : { . += __layout_pad; *(.data .data.*) }/' "$ld"
	[ "$(grep -c __layout_pad "$ld")" = 3 ] || {
		echo "layouts: cannot place the pad in $ld (its sections differ); build that commit by hand" >&2
		return 1
	}
}

guests=()
for spec in "$@"; do
	name=${spec%%=*} rev=${spec#*=}
	case $name in ''|*[!A-Za-z0-9_-]*) echo "layouts: bad name '$name' (letters, digits, - _)" >&2; exit 2 ;; esac
	commit=$(git rev-parse --verify "$rev^{commit}") || { echo "layouts: no commit '$rev'" >&2; exit 2; }
	wt=build/layouts/$name
	if [ ! -d "$wt" ] || [ "$(git -C "$wt" rev-parse HEAD)" != "$commit" ]; then
		[ -d "$wt" ] && git worktree remove --force "$wt"
		git worktree add --detach "$wt" "$commit" >/dev/null
	fi
	ln -sfn "$ROOT/deps" "$wt/deps"
	git -C "$wt" checkout -q -- kernel/kernel.ld
	pad_ld "$wt/kernel/kernel.ld"
	# The image's link flags as that commit's apps.mk has them (first line).
	flags=$(sed -n 's/^IMAGE_LDFLAGS := //p' "$wt/apps/apps.mk" | head -1 | sed 's/ *\\$//')
	[ -n "$flags" ] || { echo "layouts: no IMAGE_LDFLAGS in $wt" >&2; exit 1; }
	for pad in $PADS; do
		rm -f "$wt/build/variants/all/apps/httpd.elf"
		make -s -C "$wt" --no-print-directory -j2 VARIANT=all variant \
			IMAGE_LDFLAGS="$flags --defsym=__layout_pad=$pad" >/dev/null
		cp "$wt/build/apps/httpd-all.elf" "build/apps/httpd-$name-p$pad.elf"
		cp "$wt/build/apps/httpd-all.flags" "build/apps/httpd-$name-p$pad.flags"
		echo "layouts: build/apps/httpd-$name-p$pad.elf ($name = ${commit:0:7}, pad $pad;" \
			"text at $(nm "build/apps/httpd-$name-p$pad.elf" | awk '$3 == "main" {print $1}') for main)"
		guests+=("$name-p$pad=uk:build/apps/httpd-$name-p$pad.elf")
	done
done
# Alternate commits within each pad: pre-p0 now-p0 pre-p1296 now-p1296 ...
order=()
for pad in $PADS; do
	for g in "${guests[@]}"; do
		case $g in *"-p$pad=uk:"*) order+=("$g") ;; esac
	done
done
echo "${order[*]}"
