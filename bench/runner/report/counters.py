"""counters.py: the unikernel's counters, taken around each load, as deltas.

    bench/run summarise DIR        (an HTTP batch whose DIR/raw has .counters)

loadrun.py sends the guest's console Ctrl-T right before each load and right
after it, and keeps what the guest printed in
DIR/raw/REP-BACKEND-EMULATOR-PLACEMENT-GUEST.counters:

    # rep 1 backend tap emulator 7.2 placement none guest all
    @ k1 ab before 3.2
    sockets: open 1, accepted 0, ...
    kernel: waits 12; polls 30 (idle 2); ...
    @ k1 ab after 1.8
    ...

Each mark names the load and the load generator, which side of the load the
dump is on, and a bound in milliseconds on how far the snapshot lies from
the load (see loadrun.py), so the idle gaps between loads stay out of the
deltas. Files of older batches (marks `@ start`, `@ k1`, ...: one dump
before the first load and one after each) are read as consecutive pairs.

write_csv(DIR) writes DIR/counters.csv: one row per load run with a dump on
both sides, with the delta of every counter across the load, the two bounds
(bound_before_ms, bound_after_ms), then per-request ratios (the delta divided
by the requests the load generator completed, from runs.csv) and the key
ratios the fixes report shows, and last `plugin`: 1 for a guest under the
instruction-counting plugin (its header says `plugin 1`; its counters say
what work its instructions did, the reports leave them out). Counters are
parsed generically, so new ones the kernel prints in the same `prefix:
label N, label N; ...` style become columns without a change here (see
parse_line). An SMP guest's per-CPU lines become cpuN.* columns (cpu1.ipis_sent,
cpu1.pauses_lock, cpu1.pause_loop_exits_estimated_amd_lock, ...), with their
sums over the CPUs as cpus.*, and its lock line lock.NAME_acquisitions,
lock.NAME_contended, lock.NAME_pauses and lock.NAME_broken.

The workloads that read a Ctrl-T dump themselves (bulk_counters.py, the kvm
and bulk workloads) take it apart with
    parse_line(line) -> [(column, value)]   one counter line
    parse_dump(text) -> {column: value}     one dump
(from runner.report.counters). Standard library only.
"""
import csv
import glob
import os
import re

from ..records import InputError, read_runs

# Words after a number that are its unit, not the next counter's label.
UNITS = {"bytes", "frames", "ms", "us", "ns", "KiB", "MiB", "s"}
# The key ratios: name -> (numerator, denominator); "requests" is ab's count.
# A denominator tuple is summed (reloads skipped as a share of all arm calls).
KEY_RATIOS = {
    "visited_per_egress_pass": ("sockets.sockets_visited", "sockets.egress_passes"),
    "net_polls_per_request": ("net.polls", "requests"),
    "spins_per_request": ("kernel.spins", "requests"),
    "parks_per_request": ("kernel.parks", "requests"),
    "frames_out_per_request": ("net.frames_out", "requests"),
    "reloads_skipped_pct": ("kernel.timer_reloads_skipped",
                            ("kernel.timer_reloads", "kernel.timer_reloads_skipped")),
    "slots_per_listener_check": ("sockets.slots_walked", "sockets.listener_checks"),
}
LINE = re.compile(r"^([a-z][a-z0-9_-]*):\s+(.*)$")
TOKEN = re.compile(r"[(),;]|[^\s(),;]+")
# Lines with a heading of their own, read by parse_fields rather than by the
# generic rules (whose sub-heading rule would drop "cpu N (...)" and
# "locks", and whose labels would collide with the boot CPU's):
#   kernel: cpu N (APIC ID M, online): interrupts N (timer N); ...  -> cpuN.*
#   kernel: cpu N spins: parks N; wakes sent N; spin pauses N; ...   -> cpuN.*
#   kernel: locks: NAME N (contended N, pauses N, broken N); ...    -> lock.NAME_*
#   kernel: time us: receive+stack N, egress N, ...                 -> time_us.*
CPU_LINE = re.compile(r"^kernel:\s+cpu (\d+) (?:\(APIC ID \d+, [a-z ]+\)|spins):\s*(.*)$")
LOCKS_LINE = re.compile(r"^kernel:\s+locks:\s*(.*)$")
TIME_LINE = re.compile(r"^kernel:\s+time us:\s*(.*)$")
ITEM = re.compile(r"^([A-Za-z][\w+/-]*(?:\s+[A-Za-z][\w+/-]*)*)?\s*(\d+)\s*(?:\((.*)\))?$")


def column(prefix, label):
    return prefix + "." + re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def split_top(text, sep):
    """text split at each sep outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")" and depth > 0
        if ch == sep and not depth:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def parse_fields(prefix, body, run_head=True):
    """[(column, value)] of a line in the per-CPU line's form: groups split
    by ';', each "[HEAD:] LABEL N [(SUB N, ...)], LABEL N, ...". HEAD and
    the words of LABEL and SUB make the column ("pauses: lock N" ->
    pauses_lock, "interrupts N (timer N)" -> interrupts_timer); a one-word
    LABEL after the group's first item takes that item's first word ("ipis
    sent N, received N" -> ipis_received) unless run_head is False. An item
    that is not words and a whole number is skipped."""
    out = []
    for group in split_top(body, ";"):
        head, rest = "", group.strip()
        if ":" in rest and "(" not in rest.split(":", 1)[0]:
            head, rest = (x.strip() for x in rest.split(":", 1))
        first = ""
        for k, item in enumerate(split_top(rest, ",")):
            m = ITEM.match(item.strip())
            if not m:
                continue
            label = m.group(1) or ""
            words = label.split()
            if k == 0:
                first = words[0] if words else ""
            elif len(words) == 1 and first and not head and run_head:
                label = f"{first} {label}"
            label = f"{head} {label}".strip()
            if not label:
                continue
            out.append((column(prefix, label), int(m.group(2))))
            for sub in split_top(m.group(3) or "", ","):
                sm = ITEM.match(sub.strip())
                if sm and sm.group(1):
                    out.append((column(prefix, f"{label} {sm.group(1)}"), int(sm.group(2))))
    return out


def parse_smp_line(line):
    """[(column, value)] of a per-CPU, locks or time line; None for any other."""
    text = line.strip()
    m = CPU_LINE.match(text)
    if m:
        return parse_fields("cpu" + m.group(1), m.group(2))
    m = LOCKS_LINE.match(text)
    if m:
        out = []
        for group in split_top(m.group(1), ";"):
            lm = re.match(r"^\s*([A-Za-z][\w-]*)\s+(?:acquisitions\s+)?(\d+)\s*(?:\((.*)\))?\s*$", group)
            if not lm:
                continue
            out.append((column("lock", lm.group(1) + " acquisitions"), int(lm.group(2))))
            out += parse_fields("lock", ", ".join(f"{lm.group(1)} {x.strip()}"
                                                  for x in split_top(lm.group(3) or "", ",") if x.strip()))
        return out
    m = TIME_LINE.match(text)
    if m:
        return parse_fields("time_us", m.group(1).replace("+", " "), run_head=False)
    return None


def parse_line(line):
    """[(column, value)] of one counter line, [] for any other line.

    A counter is a whole-number token; its label is the words before it since
    the last number, comma, semicolon or parenthesis. Inside parentheses the
    label is prefixed with the one before them ("timer reloads N (skipped N)"
    -> timer_reloads_skipped). A number with no words before it takes the
    words after it ("polls N, N with work" -> polls_with_work) or its unit
    ("frames in N (B bytes)" -> frames_in_bytes). A second one-word label in
    a run without separators takes the run's first word ("kicks rx N tx N"
    -> kicks_tx). A word ending in ':' inside a line is a sub-heading: the
    words up to it are dropped, as are tokens like 0x1f or 0/0. The per-CPU,
    locks and time lines have rules of their own (parse_smp_line).
    """
    smp = parse_smp_line(line)
    if smp is not None:
        return smp
    m = LINE.match(line.strip())
    if not m:
        return []
    prefix, body = m.groups()
    tokens = TOKEN.findall(body)
    out = []
    words = []  # label words since the last number or separator
    last = ""  # the latest label, for words or a unit after a bare number
    outer = ""  # the label before the open parenthesis
    depth = 0
    run_head = ""  # first word of the run's first two-word label
    pending = None  # a bare number waiting for the words after it

    def emit(label, value):
        out.append((column(prefix, f"{outer} {label}".strip() if depth else label), value))

    def flush():  # a bare number takes the words after it: "N with work"
        nonlocal pending
        if pending is not None:
            emit(f"{'' if depth else last} {' '.join(words)}".strip() or last, pending)
            pending = None

    i = 0
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if t in ("(", ")", ",", ";"):
            flush()
            if t == "(":
                outer, depth = last, depth + 1
            elif t == ")":
                depth = max(0, depth - 1)
            else:
                run_head = ""  # parentheses do not end a run: "frames in N (...) out N"
            words = []
        elif t.isdigit():
            flush()
            value = int(t)
            if words:
                label = " ".join(words)
                if len(words) == 1 and run_head and not depth:
                    label = f"{run_head} {label}"
                elif len(words) > 1 and not depth:
                    run_head = words[0]
                if not depth:
                    last = label  # without its unit: "rx N frames N bytes" -> rx_bytes
                if nxt in UNITS:
                    i += 1
                    if nxt in ("bytes", "frames"):
                        label = f"{label} {nxt}"
                emit(label, value)
            elif nxt in UNITS:  # "(B bytes)" inside, "N bytes" after a counter
                emit(nxt if depth else f"{last} {nxt}", value)
                i += 1
            else:
                pending = value
            words = []
        elif t.endswith(":"):  # a sub-heading: "drops: rx no-pbuf N"
            words, run_head = [], ""
        elif re.fullmatch(r"[A-Za-z_][\w-]*(/[A-Za-z_][\w-]*)*", t):  # PBUF_REF/ROM is a name
            words.append(t)
        else:  # 0x1f, 0/0, addresses: neither a counter nor a label
            words = []
        i += 1
    flush()
    return out


def cpu_totals(values):
    """{cpus.LABEL: sum over every cpuN.LABEL} of a dump with per-CPU lines
    (cpus.ipis_sent: the IPIs every CPU sent), {} without them."""
    out = {}
    for col, v in values.items():
        m = re.match(r"^cpu\d+\.(.+)$", col)
        if m:
            out["cpus." + m.group(1)] = out.get("cpus." + m.group(1), 0) + v
    return out


def parse_dump(text):
    """{column: value} of one Ctrl-T dump; a repeated column gets a _2 suffix.
    With per-CPU lines, their sums over the CPUs too (cpu_totals)."""
    values = {}
    for line in text.replace("\r", "").split("\n"):
        for col, v in parse_line(line):
            name, k = col, 2
            while name in values:
                name, k = f"{col}_{k}", k + 1
            values[name] = v
    values.update(cpu_totals(values))
    return values


def read_counters_file(path):
    """(header dict, [(mark, {column: value})]) of one .counters file."""
    header, dumps, mark, lines = {}, [], None, []
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\r\n")
            if line.startswith("# ") and not dumps and mark is None:
                parts = line[2:].split()
                header = dict(zip(parts[0::2], parts[1::2]))
            elif line.startswith("@ "):
                if mark is not None:
                    dumps.append((mark, parse_dump("\n".join(lines))))
                mark, lines = line[2:].strip(), []
            else:
                lines.append(line)
    if mark is not None:
        dumps.append((mark, parse_dump("\n".join(lines))))
    return header, dumps


def pairs(dumps):
    """[(load, loadgen, before, after, bound_before_ms, bound_after_ms)] of a file's dumps.

    New marks: `LOAD LOADGEN before|after BOUND_MS`, paired by load and load
    generator. Old marks: each dump against the one before it (ab, no bound).
    """
    out, opened = [], {}
    for i, (mark, values) in enumerate(dumps):
        words = mark.split()
        if len(words) == 4 and words[2] in ("before", "after"):
            key = (words[0], words[1])
            if words[2] == "before":
                opened[key] = (values, words[3])
            elif key in opened:
                before, bound = opened.pop(key)
                out.append((words[0], words[1], before, values, bound, words[3]))
        elif len(words) == 1 and i > 0 and len(dumps[i - 1][0].split()) == 1:
            out.append((words[0], "ab", dumps[i - 1][1], values, "", ""))
    return out


def ratio(values, num, den):
    """num / den from a dict of deltas; None when missing or den is 0."""
    dens = den if isinstance(den, tuple) else (den,)
    if num not in values or any(d not in values for d in dens):
        return None
    d = sum(values[d] for d in dens)
    if not d:
        return None
    r = values[num] / d
    return 100 * r if isinstance(den, tuple) else r


KEY_FIELDS = ["rep", "backend", "emulator", "placement", "guest", "load", "loadgen"]


def deltas(path, requests_of):
    """Rows (dicts) for one .counters file: each load's deltas and ratios.

    requests_of(rep, backend, emulator, placement, guest, load, loadgen)
    gives the requests completed. A load whose dump before or after is
    missing (the guest did not answer Ctrl-T) gets no row: a gap, not a
    made-up number.
    """
    header, dumps = read_counters_file(path)
    rows = []
    for load, loadgen, before, after, bound0, bound1 in pairs(dumps):
        if not before or not after:
            continue
        row = {"rep": header.get("rep", ""), "backend": header.get("backend", ""),
               "emulator": header.get("emulator", "7.2"), "placement": header.get("placement", "none"),
               "guest": header.get("guest", ""), "load": load, "loadgen": loadgen,
               "plugin": header.get("plugin", "0")}
        req = requests_of(*(row[k] for k in KEY_FIELDS))
        row["requests"] = req if req is not None else ""
        row["bound_before_ms"], row["bound_after_ms"] = bound0, bound1
        d = {k: after[k] - before[k] for k in after if k in before}
        d["requests"] = req or 0
        row.update({k: v for k, v in d.items() if k != "requests"})
        for name, (num, den) in KEY_RATIOS.items():
            r = ratio(d, num, den)
            row[name] = "" if r is None else f"{r:.3f}"
        for k, v in list(d.items()):
            if k != "requests" and req:
                row["per_req." + k] = f"{v / req:.4f}"
        rows.append(row)
    return rows


def requests_table(results_dir):
    """(rep, backend, emulator, placement, guest, load, loadgen) -> completed requests."""
    table = {}
    try:
        runs = read_runs(os.path.join(results_dir, "runs.csv"))
    except InputError:
        runs = []
    for r in runs:
        try:
            table[tuple(r[k] for k in KEY_FIELDS)] = int(r["requests"])
        except ValueError:
            pass
    return lambda *key: table.get(key)


def write_csv(results_dir):
    """Writes counters.csv; returns the number of rows."""
    files = sorted(glob.glob(os.path.join(results_dir, "raw", "*.counters")))
    requests_of = requests_table(results_dir)
    rows = [r for p in files for r in deltas(p, requests_of)]
    fixed = KEY_FIELDS + ["requests", "bound_before_ms", "bound_after_ms"] + list(KEY_RATIOS)
    counters, per_req = [], []
    for r in rows:
        for k in r:
            if k in fixed:
                continue
            bucket = per_req if k.startswith("per_req.") else counters
            if k not in bucket:
                bucket.append(k)
    counters = [k for k in counters if k != "plugin"]
    fields = fixed + counters + per_req + ["plugin"]
    with open(os.path.join(results_dir, "counters.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return len(rows)
