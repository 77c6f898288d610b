#!/usr/bin/env python3
"""figures.py: result tables in README and docs, copied from their batch.

    tools/figures.py            rewrite every figures block in README.md and docs/
    tools/figures.py --check    exit 1 if a block differs from what its batch gives
                                (test 82), printing the difference

A block is an HTML comment naming a table of a batch's report, then the
table, then an end mark (or, `experiment NAME BATCH "SECTION"`, a table
that `bench/run experiment NAME BATCH` prints from the batch's records):

    <!-- figures: bench/results/BATCH/summary.md "SECTION" [COLUMN=VALUE ...] -->
    ...
    <!-- end figures -->

The script finds SECTION (a heading's text, its first table after it; or,
where no heading has that text, the opening words of a paragraph, the
table that follows it) in
the report the runner wrote from the batch's runs, keeps the rows whose
COLUMN equals VALUE (each filter narrows; none keeps every row), and writes
a line naming the batch (its date, the commit its images were built at,
`+dirty` for a tree with uncommitted changes, and the quiet-host guard,
from meta.txt) above the table. Marks the report puts in a cell (`[n=4/5]`
for runs that did not count, `~` for an unclean shutdown) stay. So no
figure in a block is typed, and a block that no longer matches its batch
(a batch rerun, a table edited by hand) fails test 82. Standard library
only.
"""
import difflib
import functools
import os
import re
import shlex
import subprocess
import sys

import batch_meta

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPEN = re.compile(r"<!-- figures: (.*?) -->")
CLOSE = "<!-- end figures -->"


class BlockError(Exception):
    """A block whose batch, section or filter cannot be read."""


def provenance(report):
    batch_dir = os.path.dirname(report)
    f = batch_meta.fields(os.path.join(ROOT, batch_dir))
    commit = batch_meta.commit(f) or "unknown"
    guard = {"passed": "guard passed", "forced": "forced", None: "no guard"}.get(batch_meta.guard(f), "no guard")
    load = f.get("load at start", "").split()
    date = f.get("date", "")[:16].replace("T", " ")
    return "Batch `%s` (%s UTC, commit %s, %s%s)." % (
        batch_dir, date or "undated", commit, guard, ", load %s" % load[0] if load else "")


def level(line):
    return len(line) - len(line.lstrip("#"))


def table_from(lines, j, what):
    """The markdown table at or after line j, before the next heading."""
    while j < len(lines) and not lines[j].startswith("|"):
        if lines[j].startswith("#"):
            raise BlockError("no table under '%s'" % what)
        j += 1
    rows = []
    while j < len(lines) and lines[j].startswith("|"):
        rows.append(lines[j])
        j += 1
    if len(rows) < 2:
        raise BlockError("no table under '%s'" % what)
    return rows


def table_after(lines, heading):
    """The first markdown table under the heading whose text is heading
    (its sub-headings included, the next heading of its level or above
    not); where no heading has that text, the table after the first
    paragraph that begins with it (reports whose tables follow a sentence,
    not a heading: bench-bulk's)."""
    for i, line in enumerate(lines):
        if line.startswith("#") and line.lstrip("#").strip() == heading:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("|"):
                if lines[j].startswith("#") and level(lines[j]) <= level(line):
                    raise BlockError("no table under '%s'" % heading)
                j += 1
            return table_from(lines, j, heading)
    for i, line in enumerate(lines):
        if line.startswith(heading) and not line.startswith(("#", "|")) and (i == 0 or not lines[i - 1].strip()):
            return table_from(lines, i + 1, heading)
    raise BlockError("no heading or paragraph '%s'" % heading)


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


@functools.lru_cache(maxsize=None)
def experiment_output(name, batch_dir):
    """What `bench/run experiment NAME BATCH_DIR` prints: the experiments
    that read a batch's records and print their own tables (layouts').
    Run once per experiment and batch, however many blocks read it."""
    if not os.path.isdir(os.path.join(ROOT, batch_dir)):
        raise BlockError("no batch folder %s" % batch_dir)
    run = subprocess.run([os.path.join(ROOT, "bench", "run"), "experiment", name, os.path.join(ROOT, batch_dir)],
                         cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        raise BlockError("bench/run experiment %s %s: exit %d: %s" % (name, batch_dir, run.returncode,
                                                                      run.stderr.strip()[-300:]))
    return run.stdout


def render(spec):
    words = shlex.split(spec)
    if words and words[0] == "experiment":
        if len(words) < 4:
            raise BlockError("an experiment block names the experiment, a batch folder and a section: %s" % spec)
        name, batch_dir, heading, filters = words[1], words[2].rstrip("/"), words[3], words[4:]
        report = os.path.join(batch_dir, "meta.txt")  # provenance() reads the folder's meta.txt
        rows = table_after(experiment_output(name, batch_dir).splitlines(), heading)
    else:
        if len(words) < 2:
            raise BlockError("a block names a report and a section: %s" % spec)
        report, heading, filters = words[0], words[1], words[2:]
        path = os.path.join(ROOT, report)
        if not os.path.exists(path):
            raise BlockError("no report %s" % report)
        with open(path, errors="replace") as f:
            rows = table_after(f.read().splitlines(), heading)
    head = cells(rows[0])
    keep = rows[2:]
    for flt in filters:
        column, _, value = flt.partition("=")
        if column not in head:
            raise BlockError("no column '%s' in '%s' (%s)" % (column, heading, ", ".join(head)))
        k = head.index(column)
        keep = [r for r in keep if cells(r)[k] == value]
    if not keep:
        raise BlockError("no row of '%s' matches %s" % (heading, " ".join(filters)))
    return [provenance(report), ""] + rows[:2] + keep


def rewrite(text, where):
    """text with each block's body rendered again; raises BlockError."""
    out, pos = [], 0
    for m in OPEN.finditer(text):
        if m.start() < pos:
            continue
        end = text.find(CLOSE, m.end())
        if end < 0:
            raise BlockError("%s: a figures block without its end mark" % where)
        try:
            body = render(m.group(1))
        except BlockError as e:
            raise BlockError("%s: %s" % (where, e))
        out.append(text[pos:m.end()])
        out.append("\n" + "\n".join(body) + "\n")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def documents():
    paths = [os.path.join(ROOT, "README.md")]
    for base, _, files in os.walk(os.path.join(ROOT, "docs")):
        paths += [os.path.join(base, f) for f in sorted(files) if f.endswith(".md")]
    return sorted(paths)


def main():
    args = sys.argv[1:]
    if args not in ([], ["--check"]):
        print(__doc__)
        sys.exit(2)
    stale = 0
    for path in documents():
        with open(path) as f:
            text = f.read()
        if not OPEN.search(text):
            continue
        where = os.path.relpath(path, ROOT)
        try:
            new = rewrite(text, where)
        except BlockError as e:
            print("figures: %s" % e)
            sys.exit(1)
        if new == text:
            continue
        if args:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), where, "generated"))
        else:
            with open(path, "w") as f:
                f.write(new)
            print("figures: %s rewritten" % where)
    if stale:
        print("\nfigures: %d document(s) differ from their batches: run tools/figures.py" % stale)
        sys.exit(1)


main()
