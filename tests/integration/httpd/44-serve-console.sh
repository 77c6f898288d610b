#!/usr/bin/env bash
# tools/serve (what `make run` runs) at a terminal, driven through a
# pseudo-terminal by serve_console.py: the server comes up, the terminal's
# signal keys are off while it runs, GET /__shutdown stops nothing, Ctrl-T
# prints the counters, and Ctrl-C stops the server over its console: httpd
# stops on SIGINT, the counters are printed, exit status 0, the terminal's
# settings come back. Twice: on the default back-end (passt where it is
# installed) stopped by a typed Ctrl-C, and on QEMU's user networking
# stopped by a SIGTERM sent to serve.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
IMAGE=$ROOT/$BUILD/apps/httpd.elf
[ -f "$IMAGE" ] || fail "no $IMAGE"
PYTHON=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 missing"

echo "== default back-end ($(command -v passt >/dev/null && echo passt || echo user)), Ctrl-C"
"$PYTHON" "$ROOT/tests/integration/lib/serve_console.py" --serve "$ROOT/tools/serve" --image "$IMAGE" --stop key ||
	fail "serve at a terminal (default back-end, Ctrl-C)"
echo "== user back-end, SIGTERM"
"$PYTHON" "$ROOT/tests/integration/lib/serve_console.py" --serve "$ROOT/tools/serve" --image "$IMAGE" \
	--net user --stop sigterm || fail "serve at a terminal (user back-end, SIGTERM)"
echo "all good"
