#!/usr/bin/env python3
"""bulk_counters.py: what one bulk load cost in frames, copies, kicks and
interrupts.

    bench/bulk_counters.py CONSOLE DUMP0 DUMP1 FRAMES0 FRAMES1 [KICKS0 KICKS1]

bench/run-bulk calls it after each load and appends what it prints to the
load's row of runs.csv:

    frames_from_guest,frames_to_guest,copied_rx_bytes,copied_tx_bytes,
    delivered_rx_bytes,sent_tx_bytes,notifies,kicks_tx,kicks_rx,irqs

FRAMES0 and FRAMES1 are the tap's "RX_PACKETS TX_PACKETS" before and after
the load (the tap receives what the guest sends), for any guest; empty when
not read. DUMP0 and DUMP1 are "FIRST:LAST", the console lines of the
unikernel's counter dumps (Ctrl-T) before and after the load; empty for
other guests. From those: bytes copied on receive (device buffer to pool
pbufs, pbufs to the application) and on transmit (application to the send
buffer, send buffer to lwIP's segments), bytes the application read and
wrote, and the transmit notifies (virtio-net kicks tx) as the unikernel
counted them. KICKS0 and KICKS1 are "TX RX INTERRUPTS" as QEMU traced them
for any guest (run-bulk's qemu_kicks): kicks of the transmit and receive
queues and interrupts sent. A field that cannot be known is left empty.
Standard library only.
"""
import os
import sys

from .counters import parse_line


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


def main(argv):
    if len(argv) not in (6, 8):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    console, d0, d1, f0, f1 = argv[1:6]
    k0, k1 = argv[6:8] if len(argv) == 8 else ("", "")
    out = [""] * 10
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
    print(",".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
