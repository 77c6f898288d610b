#!/usr/bin/env bash
# 72-density: the density benchmark's own smoke test (bench/run density,
# runner/workloads/density.py). QUICK=1 runs two steps, 2 then 4 unikernel
# instances (the default build's httpd), on the microvm and pc machines,
# each with user networking and its own forwarded port. Checks behaviour,
# never speed:
#  - the batch exits 0 and its records are well formed: steps.csv has the
#    four steps, each serving, every instance up and answering, with its
#    idle CPU, memory (Pss <= Rss) and start time measured; instances.csv a
#    row per instance; meta.txt the workload and the settings;
#  - summary.md has its tables, and `bench/run summarise` writes it again
#    the same;
#  - no QEMU of the run is left, and no pidfile;
#  - a step MemAvailable cannot hold is refused before anything starts;
#  - a TERM to bench/run in the middle of a step stops every instance it
#    started (exit 130), records them, and leaves none running.
set -uo pipefail
ROOT=${ROOT:-$(pwd)} BUILD=${BUILD:-build}
. "$ROOT/tests/integration/lib/net.sh"
IMAGE=$BUILD/apps/httpd.elf
[ -f "$ROOT/$IMAGE" ] && [ -f "$ROOT/$BUILD/loader/loader.elf" ] || fail "$IMAGE or the loader is not built"
py=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 missing"
tmp=$(mktemp -d)
bg=""
trap '[ -n "$bg" ] && kill "$bg" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
density() { # OUT-NAME settings...: a quick density batch, its output in OUT.log
	local out=$tmp/$1
	shift
	(cd "$ROOT" && env BUILD="$BUILD" QUICK=1 UK_HTTPD="$IMAGE" MAX_LOAD=1000 OUT="$out" "$@" bench/run density) \
		>"$out.log" 2>&1
}
# The processes still running whose command line names a folder of ours
# (every qemu-run and QEMU of a run has its pidfile there), but this reader.
left() {
	"$py" -c 'import os, sys
for p in os.listdir("/proc"):
    try:
        cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        continue
    if p.isdigit() and int(p) != os.getpid() and sys.argv[1] in cmd:
        print(p, cmd[:200])' "$1"
}

echo "== a quick batch: 2 then 4 instances on microvm and pc"
density quick; rc=$?
cat "$tmp/quick.log"
[ $rc = 0 ] || fail "bench/run density exited $rc"
out=$tmp/quick
grep -qx 'workload: density' "$out/meta.txt" && grep -q '^configs: uk@microvm uk@pc; accel tcg$' "$out/meta.txt" ||
	fail "meta.txt lacks the workload or the configurations"
"$py" - "$out" <<'PY' || fail "the records are not what the batch ran"
import csv, os, sys
out = sys.argv[1]
steps = list(csv.DictReader(open(os.path.join(out, "steps.csv"))))
assert [(r["machine"], r["step"]) for r in steps] == [("microvm", "2"), ("microvm", "4"), ("pc", "2"), ("pc", "4")], steps
for r in steps:
    n = int(r["step"])
    assert r["guest"] == "uk" and r["mem"] == "32M" and r["verdict"] == "serving", r
    assert int(r["running"]) == n and int(r["added"]) == 2 and int(r["up"]) == 2, r
    assert int(r["probe_ok"]) == n and int(r["probe_n"]) == n, r
    for k in ("start_s", "starts_per_s", "up_p50_s", "probe_p50_ms", "probe_max_ms", "idle_s", "idle_pct_per_inst",
              "host_busy_pct", "qemu_rss_mib", "qemu_pss_mib", "wrap_pss_mib", "tasks_per_inst", "mem_avail_mib"):
        assert float(r[k]) >= 0, (k, r)
    assert 0 < float(r["qemu_pss_mib"]) <= float(r["qemu_rss_mib"]), r
    assert float(r["probe_max_ms"]) <= 1000, r
insts = list(csv.DictReader(open(os.path.join(out, "instances.csv"))))
assert len(insts) == 8, len(insts)
assert sorted((r["machine"], r["index"]) for r in insts) == sorted(
    (m, str(i)) for m in ("microvm", "pc") for i in range(4)), insts
for r in insts:
    assert r["status"] == "up" and r["qemu_pid"].isdigit() and float(r["up_s"]) > 0, r
    assert int(r["pss_kib"]) <= int(r["rss_kib"]) and r["step"] in ("2", "4"), r
ports = [r["port"] for r in insts]
assert len(set(ports)) == len(ports), ports
PY
grep -q '^## What this host kept serving' "$out/summary.md" && grep -q '^| uk | microvm | 32M | 4 |' "$out/summary.md" &&
	grep -q '^| uk | pc | 32M | 4 |' "$out/summary.md" && grep -q '^## Every step' "$out/summary.md" ||
	fail "summary.md lacks its tables: $(cat "$out/summary.md")"
cp "$out/summary.md" "$tmp/summary.first"
(cd "$ROOT" && bench/run summarise "$out") || fail "bench/run summarise failed"
cmp -s "$out/summary.md" "$tmp/summary.first" || fail "summarise wrote another summary.md"
[ -z "$(left "$out/")" ] || fail "processes of the run are left: $(left "$out/")"
[ -z "$(find "$out/raw" -name '*.pid')" ] || fail "pidfiles are left: $(find "$out/raw" -name '*.pid')"

echo "== a step the host's memory cannot hold is refused"
density refused CONFIGS=uk@pc RESERVE_MIB=1000000 || fail "the refused batch exited $?: $(cat "$tmp/refused.log")"
grep -q '^uk,pc,32M,2,0,0,.*refused: 2 more at' "$tmp/refused/steps.csv" || fail "no refusal in steps.csv: $(cat "$tmp/refused/steps.csv")"
[ -z "$(ls "$tmp/refused/raw")" ] || fail "a refused step started something: $(ls "$tmp/refused/raw")"

echo "== TERM in the middle of a step stops every instance"
# exec: the background job is bench/run itself, which gets the TERM.
(cd "$ROOT" && exec env BUILD="$BUILD" QUICK=1 UK_HTTPD="$IMAGE" MAX_LOAD=1000 OUT="$tmp/term" CONFIGS=uk@pc STEPS=4 \
	IDLE_SECS=60 bench/run density) >"$tmp/term.log" 2>&1 &
bg=$!
for _ in $(seq 300); do
	[ "$(find "$tmp/term/raw" -name '*.pid' -size +0 2>/dev/null | wc -l)" = 4 ] && break
	sleep 0.1
done
[ "$(find "$tmp/term/raw" -name '*.pid' -size +0 | wc -l)" = 4 ] || fail "4 instances did not start: $(cat "$tmp/term.log")"
sleep 0.5 # booting, or in the idle sample
[ -n "$(left "$tmp/term/")" ] || fail "no instance running to stop"
kill -TERM "$bg"
wait "$bg"; rc=$?
bg=""
cat "$tmp/term.log"
[ $rc = 130 ] || fail "bench/run exited $rc on TERM, expected 130"
grep -q 'interrupted' "$tmp/term.log" && grep -q 'uk@pc: stopped 4 instances' "$tmp/term.log" ||
	fail "the log does not say it stopped the instances"
[ -z "$(left "$tmp/term/")" ] || fail "processes left after TERM: $(left "$tmp/term/")"
[ "$(($(wc -l <"$tmp/term/instances.csv") - 1))" = 4 ] || fail "instances.csv after TERM: $(cat "$tmp/term/instances.csv")"
echo "all good"
