#!/usr/bin/env python3
"""extract-vmlinux.py: unpack the ELF kernel inside a bzImage.

    bench/linux/extract-vmlinux.py BZIMAGE OUT

Why: under TCG, the bzImage's own decompressor takes seconds of every boot
(about half of the Linux guest's boot on this machine). Debian's kernel has
CONFIG_PVH, so QEMU's -kernel boots the uncompressed ELF directly through its
PVH entry: the same kernel code, the same QEMU flags, minus that delay.
Finds the first xz or gzip stream in the image that decompresses to an ELF
file. Standard library only.
"""
import gzip
import lzma
import os
import sys
import zlib

# Stream magic numbers and how to decompress from there (trailing data is ignored).
FORMATS = [
    (b"\xfd7zXZ\x00", lambda d: lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(d)),
    (b"\x1f\x8b\x08", lambda d: zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(d)),
]


def extract(image):
    for magic, unpack in FORMATS:
        at = image.find(magic)
        while at >= 0:
            try:
                out = unpack(image[at:])
            except (lzma.LZMAError, zlib.error, gzip.BadGzipFile, EOFError):
                out = b""
            if out.startswith(b"\x7fELF"):
                return out
            at = image.find(magic, at + 1)
    return None


def main(argv):
    if len(argv) != 2:
        print("usage: extract-vmlinux.py BZIMAGE OUT", file=sys.stderr)
        return 2
    try:
        with open(argv[0], "rb") as f:
            image = f.read()
    except OSError as e:
        print(f"extract-vmlinux: {argv[0]}: {e.strerror}", file=sys.stderr)
        return 1
    elf = extract(image)
    if elf is None:
        print(f"extract-vmlinux: no xz or gzip ELF payload in {argv[0]}", file=sys.stderr)
        return 1
    with open(argv[1] + ".tmp", "wb") as f:
        f.write(elf)
    os.replace(argv[1] + ".tmp", argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
