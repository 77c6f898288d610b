"""bulk.py: the summary of a bulk-transfer batch (the bulk workload; make
bench-bulk).

    bench/run summarise [--ref GUEST] DIR

calls write(DIR, ref) (report/), which reads DIR/runs.csv (one row per load)
and meta.txt, writes DIR/summary.md and prints it:
    Gbit/s         median (min-max) per guest and load, with each guest's
                   ratio to the reference (default: linux, when measured)
    CPU s per GB   the server's host CPU (QEMU's, or the native server's)
                   per 10^9 bytes the receiver counted, median (min-max)
    per GB         frames through the tap each way; kicks of the transmit and
                   receive queues and interrupts, as QEMU traced them for
                   every guest; (the unikernel's own counters) transmit
                   notifies per 10^9 bytes moved, and bytes copied per byte
                   the application read or wrote, each way
    runs not clean every row whose status is not "ok" (left out of medians)
Batches from before the per-GB columns existed are summarised without them.
FIELDS (and FIELDS_V2, FIELDS_V1, older) are runs.csv's columns; the last
ten are bulk_counters.py's. Standard library only.
"""
import csv
import os

from ..records import InputError
from .tables import Stat, md_table, num

FIELDS_V1 = ["rep", "guest", "server", "load", "secs", "bytes", "gbit_s", "server_cpu_s", "cpu_s_per_gb",
             "client_cpu_pct", "status"]
FIELDS_V2 = FIELDS_V1 + ["frames_from_guest", "frames_to_guest", "copied_rx_bytes", "copied_tx_bytes",
                         "delivered_rx_bytes", "sent_tx_bytes", "notifies"]
FIELDS = FIELDS_V2 + ["kicks_tx", "kicks_rx", "irqs"]
LOAD_TITLES = {
    "up": "up (-t, 1 stream)",
    "down": "down (-R)",
    "p4": "-P 4",
    "small": "-l 256 -N",
}


def load_title(load):
    if load in LOAD_TITLES:
        return LOAD_TITLES[load]
    if load.startswith("http-"):  # http-BYTES-cCONC
        size, conc = load[5:].rsplit("-c", 1)
        n = int(size)
        unit = f"{n // 1048576} MiB" if n % 1048576 == 0 else f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} B"
        return f"ab -k {unit} c{conc}"
    return load


def cell(values, digits, ratio_to=None):
    """'median (min-max)' of values (tables.Stat), with the ratio of the
    median to ratio_to; '-' when there are none."""
    stat = Stat(values)
    text = stat.fmt(digits)
    if ratio_to and stat.median is not None:
        text += f" x{stat.median / ratio_to:.2f}"
    return text


def per_gb_tables(ok, guests, loads, header, kicks):
    """The frames, notifies, kicks and copies tables: medians of per-run
    ratios; the kicks ones only where the batch has them."""
    def ratios(g, lo, num_field, den_field, scale):
        vals = []
        for r in ok:
            if r["guest"] != g or r["load"] != lo:
                continue
            n, d, moved = num(r[num_field]), num(r[den_field]), num(r["bytes"])
            # Copies per byte only where the application moved the load's
            # bytes that way (not the control connection of the other way).
            if den_field != "bytes" and moved and d is not None and d < moved / 2:
                continue
            if n is not None and d:
                vals.append(n / d * scale)
        return vals

    def table(num_field, den_field, scale, digits):
        return md_table(header, [[g] + [cell(ratios(g, lo, num_field, den_field, scale), digits) for lo in loads]
                                 for g in guests])
    out = ["", "Frames from the guest per GB moved (the tap's count: a merged or segmented frame is one; "
           "up, down and -P 4: mostly ACKs one way, data the other), median (min-max).", "",
           table("frames_from_guest", "bytes", 1e9, 0),
           "", "Frames to the guest per GB moved.", "",
           table("frames_to_guest", "bytes", 1e9, 0)]
    if kicks:
        out += ["", "Transmit kicks per GB moved (QEMU's trace of the device, the same count for every "
                "guest: virtio_queue_notify on the transmit queue).", "",
                table("kicks_tx", "bytes", 1e9, 0),
                "", "Receive-queue kicks per GB moved (QEMU's trace: buffers given back, notified).", "",
                table("kicks_rx", "bytes", 1e9, 0),
                "", "Interrupts to the guest per GB moved (QEMU's trace: virtio_notify, any queue).", "",
                table("irqs", "bytes", 1e9, 0)]
    return out + [
        "", "Transmit notifies per GB moved (the unikernel's own count, which QEMU's should equal; "
        "- where not counted).", "",
        table("notifies", "bytes", 1e9, 0),
        "", "Bytes copied per byte the application read (receive: device buffer to pbufs, pbufs to "
        "the application; 1.00 is the one copy out of the stack), the unikernel's count.", "",
        table("copied_rx_bytes", "delivered_rx_bytes", 1, 2),
        "", "Bytes copied per byte the application wrote (send buffer, then lwIP's segments).", "",
        table("copied_tx_bytes", "sent_tx_bytes", 1, 2)]


def read(path):
    """runs.csv's rows; InputError when it is missing or its header is not one of ours."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames not in (FIELDS, FIELDS_V2, FIELDS_V1):
                raise InputError(f"{path}: unexpected header {reader.fieldnames}")
            return list(reader)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from e


def write(out_dir, ref=None):
    """summary.md of a bulk batch's runs.csv (ratios to `ref`, default
    linux, where the batch has it); prints it."""
    rows = read(os.path.join(out_dir, "runs.csv"))
    guests, loads = [], []
    for r in rows:
        if r["guest"] not in guests:
            guests.append(r["guest"])
        if r["load"] not in loads:
            loads.append(r["load"])
    ok = [r for r in rows if r["status"] == "ok"]

    def values(guest, load, field):
        return [v for v in (num(r[field]) for r in ok if r["guest"] == guest and r["load"] == load)
                if v is not None]

    out = ["# Bulk transfers", ""]
    try:
        with open(os.path.join(out_dir, "meta.txt")) as f:
            out += ["```"] + [line.rstrip("\n") for line in f] + ["```", ""]
    except OSError:
        pass
    ref = ref or "linux"
    ref = ref if ref in guests else None
    out += [f"Gbit/s (the receiver's count over the test's time), median (min-max) of the clean runs"
            f"{'; xN: ratio to ' + ref if ref else ''}.", ""]
    header = ["guest"] + [load_title(lo) for lo in loads]

    def gbit_cell(g, lo):
        ref_med = None
        if ref and g != ref and values(ref, lo, "gbit_s"):
            ref_med = Stat(values(ref, lo, "gbit_s")).median
        return cell(values(g, lo, "gbit_s"), 3, ref_med)

    def runs_cell(g, lo):
        mine = [r for r in rows if r["guest"] == g and r["load"] == lo]
        return f"{sum(r['status'] == 'ok' for r in mine)}/{len(mine)}" if mine else "-"

    out.append(md_table(header, [[g] + [gbit_cell(g, lo) for lo in loads] for g in guests]))
    out += ["", "Host CPU seconds per GB moved (QEMU's user+system time around the load, or the native "
            "server's; 10^9 bytes as the receiver counted them), median (min-max).", ""]
    out.append(md_table(header, [[g] + [cell(values(g, lo, "cpu_s_per_gb"), 2) for lo in loads] for g in guests]))
    if rows and "notifies" in rows[0]:
        out += per_gb_tables(ok, guests, loads, header, "kicks_tx" in rows[0])
    out += ["", "Runs (clean / all):", ""]
    out.append(md_table(header, [[g] + [runs_cell(g, lo) for lo in loads] for g in guests]))
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        out += ["", "Runs not clean (left out above):", ""]
        out += [f"- rep {r['rep']} {r['guest']} {r['load']}: {r['status']}" for r in bad]
    text = "\n".join(out) + "\n"
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write(text)
    print(text, end="")

