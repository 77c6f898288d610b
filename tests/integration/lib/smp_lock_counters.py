"""smp_lock_counters.py CONSOLE REQUESTS: the global-lock design's exit
counters (tests 73 and 74) checked for consistency: no more IPIs received
than sent over the CPUs (a fixed IPI to a vector still pending merges with
it, so fewer may arrive), more lock acquisitions than requests, no wake seen
ending a park more often than one was sent. Prints them per request; exit 1
with FAIL: on the first that does not hold."""
import re, sys
text = open(sys.argv[1]).read()
# The last dump of the counters (the exit's): a console may hold earlier
# ones (Ctrl-T), each opening with the global lock's line.
last = text.rfind("net: global lock:")
if last < 0:
    print("FAIL: no 'net: global lock:' line")
    sys.exit(1)
text = text[last:]
requests = int(sys.argv[2])
def fail(why):
    print("FAIL: " + why)
    sys.exit(1)
# Every CPU's line: "ipis sent N, received M" (kernel/smp.c).
sent = [int(x) for x in re.findall(r"ipis sent (\d+)", text)]
received = [int(x) for x in re.findall(r"received (\d+);", text)]
if len(sent) < 2 or len(sent) != len(received):
    fail("no per-CPU IPI counters: %s %s" % (sent, received))
# No CPU takes an interrupt nobody sent. Fewer may arrive than were sent:
# a fixed IPI sent while the same vector is still pending at its target
# merges with it (one may also be in flight when the exit's report is
# written); a wake that merged still ends the park it was for, and a wake
# that was lost leaves a request unanswered, which the loads catch.
if sum(received) > sum(sent):
    fail("IPIs received %d, more than the %d sent" % (sum(received), sum(sent)))
m = re.search(r"locks:.*?net (\d+) \(contended (\d+), pauses (\d+)", text)
if not m:
    fail("no net lock counters")
acq, contended, pauses = map(int, m.groups())
if acq <= requests:
    fail("lock acquisitions %d not above requests %d" % (acq, requests))
w = re.search(r"wakes to the app cpu (\d+) \(ended a park (\d+), before the halt (\d+)\).*"
              r"wakes to the network cpu (\d+) \(ended a park (\d+), before the halt (\d+)\)", text)
if not w:
    fail("no wake counters")
a_sent, a_ended, a_early, n_sent, n_ended, n_early = map(int, w.groups())
if a_ended + a_early > a_sent or n_ended + n_early > n_sent:
    fail("more wakes seen than sent: %s" % (w.groups(),))
print("IPIs sent %d, received %d (merged or in flight %d)" % (sum(sent), sum(received), sum(sent) - sum(received)))
print("per request (%d): lock acquisitions %.1f, contended %.2f, pauses %.1f, IPIs %.2f; "
      "wakes to app %.2f (wasted %d), to network %.2f (wasted %d)" % (
      requests, acq / requests, contended / requests, pauses / requests, sum(sent) / requests,
      a_sent / requests, a_sent - a_ended, n_sent / requests, n_sent - n_ended))
print("all good")
