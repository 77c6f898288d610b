"""smp_counters.py DESIGN CONSOLE REQUESTS: an SMP design's counters (the
last dump of them on the console CONSOLE, the exit's or a Ctrl-T's) checked
for lost or doubled wake-ups, after REQUESTS requests (test 76's stress).

For every design, from the kernel's per-CPU lines (kernel/ipi.c): each CPU
received no more IPIs than the others sent it (with two CPUs, what one sent
the other). Not exactly as many: a fixed IPI sent while the same vector is
still pending at its target merges with it (the target's vCPU thread, on a
loaded host, may not run for a while), and a dump is read while the other
CPU runs, so one may be in flight. A merged wake still ends its park; a lost
one leaves a request unanswered, which the loads catch. The shortfall is
printed. Then the design's own line, by DESIGNS below (a design with no
entry there fails: its checks are to be written with it):
  - smp-lock (`net: global lock:`, net/net_lock.c): the network on CPU 1;
    each wake counted once where it was taken, either ending a park or seen
    before the halt, so ended + early equals sent, each way, but for one
    wake in flight as the dump is read (a wake flag is raised once a park,
    so one at most): more taken than sent is a wake counted twice, two or
    more short wakes nobody took (sent to a CPU no longer parked, or twice
    for one park); the wakes equal to the IPIs each CPU sent (plus the 3
    the boot sends the network CPU: a call and two wakes), again but for
    one in flight; lock acquisitions above the requests.
  - smp-netcore (`handoff: serving cpu`, kernel/handoff.c): the network on
    CPU 1 and stopped there at exit; at least two calls handed over per
    request (a read and a write); no wake taken more often than sent, each
    way (fewer may be: a wake sent as the other side's park ends is taken
    by no park, and counted wasted); the IPIs each CPU sent equal the
    design's wakes (plus the 3 at boot to CPU 1), but for one in flight;
    no calls shipped again without a signal relayed.
Prints the figures per request; exit 1 with FAIL: on the first check that
does not hold."""
import re
import sys


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def last_dump(text):
    """The text of the last counters dump: it ends with the locks line
    (kernel/spinlock.c), printed once more than one CPU was started."""
    end = text.rfind("kernel: locks:")
    if end < 0:
        fail("no 'kernel: locks:' line: no counters of more than one CPU on the console")
    start = text.rfind("kernel: locks:", 0, end)
    end = text.find("\n", end)
    return text[start + 1 if start >= 0 else 0:end if end >= 0 else len(text)]


def cpu_ipis(dump):
    """[(sent, received)] per CPU, in CPU order."""
    rows = re.findall(r"^kernel: cpu (\d+) \(APIC ID \d+, [a-z]+\):.*?ipis sent (\d+), received (\d+);",
                      dump, re.M)
    if len(rows) < 2:
        fail("fewer than two CPUs' lines ('kernel: cpu N ...: ipis sent S, received R')")
    if [int(r[0]) for r in rows] != list(range(len(rows))):
        fail("the CPUs' lines are not CPU 0, 1, ...: %s" % [r[0] for r in rows])
    return [(int(s), int(r)) for _, s, r in rows]


def check_ipis(ipis):
    total_sent = sum(s for s, _ in ipis)
    total_received = sum(r for _, r in ipis)
    if total_received > total_sent:
        fail("IPIs received %d, more than the %d sent" % (total_received, total_sent))
    if len(ipis) == 2:
        for cpu in (0, 1):
            sent, received = ipis[1 - cpu][0], ipis[cpu][1]
            if received > sent:
                fail("CPU %d received %d IPIs, CPU %d sent it %d" % (cpu, received, 1 - cpu, sent))
    print("IPIs per CPU (sent, received): %s; merged or in flight %d"
          % (ipis, total_sent - total_received))


# IPIs the boot sends each AP before any design runs (kernel/smp.c: a call
# and a wake), and the network's loop handed to CPU 1 (smp_run_on's wake).
BOOT_IPIS_TO_NET_CPU = 3
# Wakes one way that may be between their sending and their taking while a
# dump is read (its lines are read one after another, the other CPU running).
IN_FLIGHT = 1


def check_smp_lock(dump, ipis, requests):
    if not re.search(r"^net: global lock: network on cpu 1;", dump, re.M):
        fail("the network did not run on CPU 1 ('net: global lock: network on cpu 1')")
    w = re.search(r"wakes to the app cpu (\d+) \(ended a park (\d+), before the halt (\d+)\).*"
                  r"wakes to the network cpu (\d+) \(ended a park (\d+), before the halt (\d+)\)", dump)
    if not w:
        fail("no wake counters on the 'net: global lock:' line")
    a_sent, a_ended, a_early, n_sent, n_ended, n_early = map(int, w.groups())
    for who, sent, ended, early in (("app", a_sent, a_ended, a_early), ("network", n_sent, n_ended, n_early)):
        if ended + early > sent:
            fail("wakes to the %s cpu: %d ended a park and %d came before the halt, more than the %d sent"
                 % (who, ended, early, sent))
        if ended + early < sent - IN_FLIGHT:
            fail("wakes to the %s cpu: %d sent, only %d taken (%d ended a park, %d before the halt)"
                 % (who, sent, ended + early, ended, early))
    if len(ipis) == 2:
        for cpu, wakes, extra in ((1, a_sent, 0), (0, n_sent, BOOT_IPIS_TO_NET_CPU)):
            if abs(ipis[cpu][0] - (wakes + extra)) > IN_FLIGHT:
                fail("CPU %d sent %d IPIs, the design %d wakes (+%d at boot)" % (cpu, ipis[cpu][0], wakes, extra))
    m = re.search(r"^kernel: locks:.*? net (\d+) \(contended (\d+), pauses (\d+)", dump, re.M)
    if not m:
        fail("no net lock counters on the 'kernel: locks:' line")
    acq, contended, pauses = map(int, m.groups())
    if acq <= requests:
        fail("lock acquisitions %d not above the %d requests" % (acq, requests))
    print("per request (%d): lock acquisitions %.1f, contended %.2f, pauses %.1f; wakes to the app "
          "cpu %.3f (%d ended a park, %d before the halt), to the network cpu %.3f (%d, %d)"
          % (requests, acq / requests, contended / requests, pauses / requests, a_sent / requests,
             a_ended, a_early, n_sent / requests, n_ended, n_early))


def check_smp_netcore(dump, ipis, requests):
    h = re.search(r"^handoff: serving cpu (\d+)( \(stopped\))?; calls (\d+), restarted (\d+), "
                  r"signals relayed (\d+), run in place (\d+); wakes to the app cpu (\d+) \(ended a park "
                  r"(\d+), before the halt (\d+)\); wakes to the serving cpu (\d+) \(ended a park (\d+), "
                  r"before the halt (\d+)\)", dump, re.M)
    if not h:
        fail("no 'handoff: serving cpu' line that parses")
    if h.group(1) != "1":
        fail("the network ran on CPU %s, not 1" % h.group(1))
    calls, restarts, relays, in_place, a_sent, a_ended, a_early, s_sent, s_ended, s_early = \
        map(int, h.groups()[2:])
    if calls < 2 * requests:
        fail("%d calls handed over for %d requests: fewer than a read and a write each" % (calls, requests))
    if restarts > relays:
        fail("%d calls shipped again, %d signals relayed" % (restarts, relays))
    for who, sent, ended, early in (("app", a_sent, a_ended, a_early), ("serving", s_sent, s_ended, s_early)):
        if ended + early > sent:
            fail("wakes to the %s cpu: %d ended a park and %d came before the halt, more than the %d sent"
                 % (who, ended, early, sent))
    if len(ipis) == 2:
        for cpu, wakes, extra in ((1, a_sent, 0), (0, s_sent, BOOT_IPIS_TO_NET_CPU)):
            if abs(ipis[cpu][0] - (wakes + extra)) > IN_FLIGHT:
                fail("CPU %d sent %d IPIs, the design %d wakes (+%d at boot)" % (cpu, ipis[cpu][0], wakes, extra))
    print("per request (%d): calls %.2f (run in place %.2f); wakes to the app cpu %.3f (%d ended a park, "
          "%d before the halt, %d wasted), to the network core %.3f (%d, %d, %d wasted)"
          % (requests, calls / requests, in_place / requests, a_sent / requests, a_ended, a_early,
             a_sent - a_ended - a_early, s_sent / requests, s_ended, s_early, s_sent - s_ended - s_early))


DESIGNS = {
    "smp-lock": check_smp_lock,
    "smp-netcore": check_smp_netcore,
}


def main():
    args = sys.argv[1:]
    if len(args) != 3:
        print(__doc__)
        sys.exit(2)
    design, console, requests = args[0], args[1], int(args[2])
    if design not in DESIGNS:
        fail("no counter checks for the design %s: add its function to DESIGNS in %s"
             % (design, sys.argv[0]))
    dump = last_dump(open(console, errors="replace").read().replace("\r", ""))
    ipis = cpu_ipis(dump)
    check_ipis(ipis)
    DESIGNS[design](dump, ipis, requests)
    print("counters consistent")


main()
