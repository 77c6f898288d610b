#!/usr/bin/env bash
# mkl1.sh: build the base initramfs of the nested-KVM host (L1): everything
# that comes from Debian's packages and does not change with our code.
#
#   tools/nested/mkl1.sh OUT KERNEL_ROOT
#     OUT          the archive to write (gzip'd newc cpio)
#     KERNEL_ROOT  the unpacked linux-image package (deps/linux/root), whose
#                  kvm, kvm-amd, tun and vhost-net modules L1 loads
#
# It holds /init (tools/nested/l1-init), busybox-static's applets, the host's
# own qemu-system-x86_64 with its firmware, and the programs the scenarios
# drive the guests with (bash, coreutils' timeout, ab, curl, iperf3), each
# with the shared libraries ldd names, at the paths ldd gives: L1 runs the
# very binaries this machine runs. What changes with our code (the images,
# tools/qemu-run, the scenarios) goes in a second archive that
# tools/nested/run-l1 appends; Linux unpacks both.
set -euo pipefail

[ $# = 2 ] || { sed -n '2,/^set /p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2; }
out=$1 kroot=$2
here=$(cd "$(dirname "$0")" && pwd)

# Dependencies before their users (Debian's package has no modules.dep).
MODULES="virt/lib/irqbypass arch/x86/kvm/kvm drivers/crypto/ccp/ccp arch/x86/kvm/kvm-amd \
drivers/net/tun drivers/net/tap drivers/vhost/vhost_iotlb drivers/vhost/vhost drivers/vhost/vhost_net"
PROGRAMS="bash timeout qemu-system-x86_64 ab curl iperf3"
# QEMU's firmware search path on Debian (qemu-system-x86_64 -L help).
FIRMWARE="/usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu"

busybox=$(command -v busybox) || { echo "mkl1: no busybox (package busybox-static)" >&2; exit 1; }
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic executable' ||
	{ echo "mkl1: $busybox is not static (package busybox-static)" >&2; exit 1; }
moddir=$(ls -d "$kroot"/lib/modules/*/kernel 2>/dev/null | head -n1)
[ -n "$moddir" ] || { echo "mkl1: no lib/modules in $kroot (run mk/deps.sh linux)" >&2; exit 1; }

stage=$(mktemp -d "${out}.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,tmp,root,work,lib/modules,usr/bin}
install -m 0755 "$here/l1-init" "$stage/init"
install -m 0755 "$busybox" "$stage/bin/busybox"

: >"$stage/lib/modules/load-order"
for m in $MODULES; do
	[ -f "$moddir/$m.ko" ] || { echo "mkl1: no $m.ko under $moddir" >&2; exit 1; }
	cp "$moddir/$m.ko" "$stage/lib/modules/"
	basename "$m" >>"$stage/lib/modules/load-order"
done

# A program and the libraries its loader will look for.
pack() {
	local prog lib
	prog=$(command -v "$1") || { echo "mkl1: $1 is not installed" >&2; exit 1; }
	prog=$(readlink -f "$prog")
	install -D -m 0755 "$prog" "$stage/usr/bin/$1"
	for lib in $(ldd "$prog" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		[ -f "$stage$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$stage$lib"
	done
}
for p in $PROGRAMS; do pack "$p"; done
for d in $FIRMWARE; do
	[ -d "$d" ] || continue
	mkdir -p "$stage$d"
	# Dereferenced: Debian's firmware files are links into other packages.
	find "$d" -maxdepth 1 \( -type f -o -type l \) -size -4M -exec cp -L {} "$stage$d/" \;
done

(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc --owner=0:0 --reproducible) | gzip -1n >"$out.tmp"
mv "$out.tmp" "$out"

