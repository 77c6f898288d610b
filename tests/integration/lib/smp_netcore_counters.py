"""smp_netcore_counters.py CONSOLE REQUESTS: the network core's exit
counters (test 75) checked for consistency: the network ran on CPU 1 and
stopped there at exit, at least two calls were handed over per request
(a read and a write each), no more IPIs received than sent over the CPUs
(a fixed IPI to a vector still pending merges with it), no wake seen ending
a park more often than one was sent, and no lock but the console's and the
heap's taken. Prints the counts per request; exit 1 with FAIL: on the
first that does not hold."""
import re, sys
text = open(sys.argv[1]).read()
# The last dump of the counters (the exit's): a console may hold earlier
# ones (Ctrl-T), each with the handoff's line.
last = text.rfind("handoff: serving cpu")
if last < 0:
    print("FAIL: no 'handoff: serving cpu' line")
    sys.exit(1)
text = text[last:]
requests = int(sys.argv[2])
def fail(why):
    print("FAIL: " + why)
    sys.exit(1)
h = re.match(r"handoff: serving cpu (\d+)( \(stopped\))?; calls (\d+), restarted (\d+), signals relayed (\d+), "
             r"run in place (\d+); wakes to the app cpu (\d+) \(ended a park (\d+), before the halt (\d+)\); "
             r"wakes to the serving cpu (\d+) \(ended a park (\d+), before the halt (\d+)\)", text)
if not h:
    fail("the handoff line does not parse: " + text.splitlines()[0])
cpu, stopped = int(h.group(1)), h.group(2)
calls, restarts, relays, in_place, a_sent, a_ended, a_early, s_sent, s_ended, s_early = map(int, h.groups()[2:])
if cpu != 1:
    fail("the network ran on CPU %d" % cpu)
if not stopped:
    fail("the network core did not stop at exit (the drain never said drained)")
if calls < 2 * requests:
    fail("%d calls handed over for %d requests: fewer than a read and a write each" % (calls, requests))
if restarts > relays:
    fail("%d calls shipped again for %d signals relayed" % (restarts, relays))
if a_ended + a_early > a_sent or s_ended + s_early > s_sent:
    fail("more wakes seen than sent: %s" % (h.groups(),))
sent = [int(x) for x in re.findall(r"ipis sent (\d+)", text)]
received = [int(x) for x in re.findall(r"received (\d+);", text)]
if len(sent) < 2 or len(sent) != len(received):
    fail("no per-CPU IPI counters: %s %s" % (sent, received))
if sum(received) > sum(sent):
    fail("IPIs received %d, more than the %d sent" % (sum(received), sum(sent)))
locks = re.search(r"kernel: locks: (.*)", text)
if locks:
    names = re.findall(r"(\w+) \d+ \(contended", locks.group(1))
    if set(names) - {"console", "heap"}:
        fail("a lock other than the console's and the heap's: %s" % names)
print("per request (%d): calls %.2f (run in place %.2f), IPIs %.2f; wakes to the app %.2f (wasted %d), "
      "to the network core %.2f (wasted %d); signals relayed %d, calls shipped again %d" % (
      requests, calls / requests, in_place / requests, sum(sent) / requests, a_sent / requests,
      a_sent - a_ended, s_sent / requests, s_sent - s_ended, relays, restarts))
print("all good")
