"""batch_meta.py: what a batch's meta.txt says, for the scripts that name a
batch (tools/results_index.py, tools/figures.py): its fields, and its commit
and quiet-host guard in the short forms they print. Standard library only."""
import os
import re


def fields(folder):
    """The meta.txt lines of the batch in folder as a dict of their first
    words' values (the first line of each name); {} without a meta.txt."""
    out = {}
    path = os.path.join(folder, "meta.txt")
    if not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^([a-z][a-z ]*?): (.*)$", line.rstrip("\n"))
            if m and m.group(1) not in out:
                out[m.group(1)] = m.group(2)
    return out


def image_paths(changed):
    """The paths of a meta.txt's uncommitted-changes list that can change
    what a batch ran: all but documentation (*.md) and the tests, which no
    image, harness or report is built from."""
    return [p for p in changed if not p.endswith(".md") and not p.startswith("tests/")]


def commit(meta):
    """'1835056', '1835056+dirty' (images built with uncommitted changes to
    anything but documentation and tests), or None when meta.txt names no
    commit."""
    git = meta.get("git", "")
    if not git:
        return None
    m = re.search(r"uncommitted changes in: ([^)]*)\)", git)
    dirty = m is not None and (image_paths(m.group(1).split()) or not m.group(1).split())
    return git.split()[0] + ("+dirty" if dirty else "")


def guard(meta):
    """'passed', 'forced', the guard line's first word, or None without one."""
    g = meta.get("guard", "")
    if not g:
        return None
    if g.startswith("passed"):
        return "passed"
    if g.startswith("FORCED"):
        return "forced"
    return g.split(":")[0]
