"""bulk_counters.py: what one bulk load cost in frames, copies, kicks and
interrupts: the last ten columns of a bulk batch's runs.csv row.

The bulk workload calls, after each load,

    fields(console, dump0, dump1, frames0, frames1, kicks0="", kicks1="")
        -> [10 strings], in the order of FIELDS:

    frames_from_guest,frames_to_guest,copied_rx_bytes,copied_tx_bytes,
    delivered_rx_bytes,sent_tx_bytes,notifies,kicks_tx,kicks_rx,irqs

(report/bulk.py reads them). frames0 and frames1 are the tap's "RX_PACKETS
TX_PACKETS" before and after the load (the tap receives what the guest
sends), for any guest; empty when not read. dump0 and dump1 are
"FIRST:LAST", the console lines of the unikernel's counter dumps (Ctrl-T)
before and after the load; empty for other guests. From those: bytes copied
on receive (device buffer to pool pbufs, pbufs to the application) and on
transmit (application to the send buffer, send buffer to lwIP's segments),
bytes the application read and wrote, and the transmit notifies
(virtio-net kicks tx) as the unikernel counted them. kicks0 and kicks1 are
"TX RX INTERRUPTS" as QEMU traced them for any guest: kicks of the transmit
and receive queues and interrupts sent. A field that cannot be known is
left empty. main(argv) is the same as a command line (CONSOLE DUMP0 DUMP1
FRAMES0 FRAMES1 [KICKS0 KICKS1]; prints the fields, comma-separated).
The dumps are read with report/counters.py's parse_line. Standard library
only.
"""
import sys

from .report.counters import parse_line

FIELDS = ["frames_from_guest", "frames_to_guest", "copied_rx_bytes", "copied_tx_bytes", "delivered_rx_bytes",
          "sent_tx_bytes", "notifies", "kicks_tx", "kicks_rx", "irqs"]


def dump(lines, span):
    """{counter: value} of the dump on console lines FIRST..LAST (1-based)."""
    try:
        first, last = (int(x) for x in span.split(":"))
    except ValueError:
        return None
    values = {}
    for line in lines[first - 1:last]:
        for name, v in parse_line(line.replace("\r", "")):
            values[name] = v
    return values


def fields(console, d0, d1, f0, f1, k0="", k1=""):
    """The ten fields (see above) of one load, as strings ('' where unknown)."""
    out = [""] * len(FIELDS)
    try:
        (a_rx, a_tx), (b_rx, b_tx) = (tuple(int(x) for x in f.split()) for f in (f0, f1))
        out[0], out[1] = str(b_rx - a_rx), str(b_tx - a_tx)
    except ValueError:
        pass
    try:
        before, after = ([int(x) for x in k.split()] for k in (k0, k1))
        if len(before) == len(after) == 3:
            out[7:10] = [str(b - a) for a, b in zip(before, after)]
    except ValueError:
        pass
    if d0 and d1:
        try:
            with open(console, errors="replace") as f:
                lines = f.read().split("\n")
        except OSError:
            lines = []
        before, after = dump(lines, d0), dump(lines, d1)
        if before and after:
            def delta(*names):
                if not all(n in before and n in after for n in names):
                    return ""
                return str(sum(after[n] - before[n] for n in names))
            out[2] = delta("net.rx_to_pbufs", "net.rx_to_app")
            out[3] = delta("net.tx_from_app", "net.tx_to_segments")
            out[4] = delta("net.rx_to_app")
            out[5] = delta("net.tx_from_app")
            out[6] = delta("virtio-net.kicks_tx")
    return out


def main(argv):
    if len(argv) not in (5, 7):
        print("usage: CONSOLE DUMP0 DUMP1 FRAMES0 FRAMES1 [KICKS0 KICKS1]", file=sys.stderr)
        return 2
    print(",".join(fields(*argv)))
    return 0
