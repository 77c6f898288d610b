#!/usr/bin/env python3
"""dsdt_seeds.py: writes the seed corpus of fuzz_dsdt (tests/fuzz/corpus/dsdt).

    tests/fuzz/dsdt_seeds.py [DIR]

Each seed is what fuzz_dsdt.c reads: a DSDT's body (the harness adds the
header), AML composed here in the shapes tests/unit/test_acpi_dsdt.c uses:
QEMU's microvm with two virtio-mmio devices, Firecracker's device (an
edge-triggered interrupt), devices inside nested scopes and devices, and a
device after AML the reader does not follow.
"""
import os
import struct
import sys


def pkg(body):
    """A PkgLength and the body after it, in the fewest bytes."""
    n = len(body)
    for extra in range(4):
        total = n + 1 + extra
        if extra == 0 and total < 0x40:
            return bytes([total]) + body
        if extra and total < 1 << (4 + 8 * extra):
            lead = (extra << 6) | (total & 0x0f)
            rest = (total >> 4).to_bytes(extra, "little")
            return bytes([lead]) + rest + body
    raise ValueError("package too long")


def scope(name, body):
    return b"\x10" + pkg(name + body)


def device(name, body):
    return b"\x5b\x82" + pkg(name + body)


def name(n, value):
    return b"\x08" + n + value


def string(s):
    return b"\x0d" + s + b"\x00"


def integer(v):
    if v in (0, 1):
        return bytes([v])
    for prefix, width in ((0x0a, 1), (0x0b, 2), (0x0c, 4), (0x0e, 8)):
        if v < 1 << (8 * width):
            return bytes([prefix]) + v.to_bytes(width, "little")
    raise ValueError(v)


def buffer(data):
    return b"\x11" + pkg(integer(len(data)) + data)


def crs(base, size, flags, gsi):
    return (b"\x86" + struct.pack("<HBII", 9, 1, base, size) +
            b"\x89" + struct.pack("<HBBI", 6, flags, 1, gsi) + b"\x79\x00")


def virtio(dev, uid, base, size, gsi, flags=0x01):
    return device(dev, name(b"_HID", string(b"LNRO0005")) + name(b"_UID", integer(uid)) +
                  name(b"_CCA", integer(1)) + name(b"_CRS", buffer(crs(base, size, flags, gsi))))


def qemu_microvm():
    fwcf = device(b"FWCF", name(b"_HID", string(b"QEMU0002")) + name(b"_STA", integer(0x0b)) +
                  name(b"_CRS", buffer(b"\x47\x01\x10\x05\x10\x05\x01\x0c\x79\x00")))
    com1 = device(b"COM1", name(b"_HID", integer(0x0105d041)) + name(b"_UID", integer(1)) +
                  name(b"_CRS", buffer(b"\x47\x01\xf8\x03\xf8\x03\x00\x08\x22\x10\x00\x79\x00")))
    ged = device(b"GED_", name(b"_HID", string(b"ACPI0013")) + name(b"_UID", string(b"GED")) +
                 name(b"_CRS", buffer(b"\x89\x06\x00\x03\x01\x09\x00\x00\x00\x79\x00")) +
                 b"\x5b\x80EREG\x00\x0c\x00\x00\xa0\xfe\x0a\x04" +
                 b"\x5b\x81" + pkg(b"EREG\x43ESEL\x20") +
                 b"\x14" + pkg(b"_EVT\x09\x70ESEL\x60"))
    sb = fwcf + com1 + ged + virtio(b"VR06", 6, 0xfeb00c00, 512, 22) + virtio(b"VR07", 7, 0xfeb00e00, 512, 23)
    s5 = b"\x10" + pkg(b"\x5c\x00" + name(b"_S5_", b"\x12" + pkg(b"\x04\x0a\x05\x00\x00\x00")))
    return scope(b"_SB_", sb) + s5


SEEDS = {
    "qemu-microvm": qemu_microvm(),
    "firecracker": scope(b"_SB_", virtio(b"V000", 0, 0xd0000000, 4096, 5, flags=0x03)),
    "nested": scope(b"_SB_", scope(b"PCI0", virtio(b"VR00", 0, 0xfeb00000, 512, 16)) +
                    device(b"HOST", name(b"_HID", string(b"ACPI0004")) +
                           virtio(b"VR01", 1, 0xfeb00200, 512, 17))),
    "unfollowed": scope(b"_SB_", b"\x70\x0a\x05XXXX" + virtio(b"VR00", 0, 0xfeb00000, 512, 16)),
    "crs-method": scope(b"_SB_", device(b"VR00", name(b"_HID", string(b"LNRO0005")) +
                                        b"\x14" + pkg(b"_CRS\x00\xa4" + buffer(crs(0xfeb00000, 512, 1, 5))))),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "dsdt")
    os.makedirs(out, exist_ok=True)
    for seed, data in SEEDS.items():
        with open(os.path.join(out, seed), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
