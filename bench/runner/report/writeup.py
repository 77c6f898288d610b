"""writeup.py: the reference write-up's per-commit figures, as data.

The write-up (shared/reference/002_...: Hermit and smoltcp on one core, QEMU
11.0.3 TCG on an Apple M5 Max, user networking, ab, medians of alternating
runs in one batch per commit) publishes a before and after figure for most of
its commits. Each entry below is one commit, in its order, mapped to the
switch of ours (mk/variants.mk) that reproduces it; fixes.py puts our step's
before and after beside them. Figures are requests per second; None where the
write-up gives none (the commit's gain was measured together with another, or
it is a correctness fix the others stand on).
"""

# (commit, what it does, our switch, [(load, before, after)], note)
COMMITS = [
    ("4b0da94", "timers fire while a task waits with a timeout", "timed-wait", [],
     "no figure: the benchmark app's timers needed it"),
    ("90acf79", "writev as one TCP send", "writev", [("k1", 271, 1776)], ""),
    ("5a1b653", "TCP_NODELAY switches Nagle off", "nodelay", [],
     "no figure: the inversion confirmed at the bench"),
    ("7bc2269", "poll the interface only when it can progress", "poll-when-due",
     [("k1", 1855, 2704)], "backlog 128"),
    ("4d84023+4d66aa7", "scan hints, then the egress list", "egress-list",
     [("k1", 2846, 4016), ("k8", 3266, 4961)],
     "two commits (2846->3354->4016 at k1, 3266->4542->4961 at k8 with a re-measured base "
     "between them); ours is one switch"),
    ("9243192", "remember when each listed socket next has work", "deadlines",
     [("k64", 3985, 5772)], "medians of 3,921/3,985/4,134 and 5,583/5,772/5,824"),
    ("c4fe154", "read state and park wakers without marking", "no-mark", [("k1", 3296, 3642)], ""),
    ("60f0555", "listener readiness from a flag", "listener-flag", [("k1", 4105, 5415)], ""),
    ("9831f66", "poll the device while waiting instead of backing off", "spin-park",
     [("k1", 5415, 5697), ("k8", 6554, 7094)], "with 99fc1c4 measured together"),
    ("99fc1c4", "do not reload a one-shot deadline the timer holds", "timer-reload", [],
     "measured together with 9831f66"),
]
