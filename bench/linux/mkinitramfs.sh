#!/usr/bin/env bash
# mkinitramfs.sh: build the Linux guest's initramfs (gzip'd newc cpio).
#
#   bench/linux/mkinitramfs.sh OUT KERNEL_ROOT INIT HTTPD [PATH=FILE...]
#     OUT          the initramfs to write
#     KERNEL_ROOT  the unpacked linux-image package (deps/linux/root)
#     INIT         our static init (bench/linux/init.c, built)
#     HTTPD        the static httpd, packed as /bin/httpd
#     PATH=FILE    FILE packed at PATH, an absolute path in the guest (e.g.
#                  /bin/iperf=build/host/iperf, /usr/sbin/nginx=/usr/sbin/nginx):
#                  an executable FILE with mode 0755 and, when it is dynamic,
#                  the shared libraries ldd names, where ldd finds them (the
#                  guest's loader searches the same built-in paths); any other
#                  file with mode 0644
#
# It holds /init, /bin/httpd, the files named (init's app=NAME runs
# /bin/NAME), /tmp (mode 1777: iperf3 keeps each stream's buffer in a file
# there, nginx-run makes nginx's directory there) and the virtio modules with
# the order to load them in (/lib/modules/load-order): Debian's kernel has no
# modules.dep in the package, and virtio, virtio_pci and virtio_net are
# modules there.
set -euo pipefail

[ $# -ge 4 ] || { sed -n '2,/^set /p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2; }
out=$1 kroot=$2 init=$3 httpd=$4
shift 4

# Dependencies first; virtio_pci needs the legacy helper even with
# disable-legacy=on (its symbols are linked in). virtio_mmio, for QEMU's
# microvm, loads only where ACPI names a virtio-mmio transport (LNRO0005,
# microvm's DSDT): init skips a module whose condition path is absent.
MODULES="virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio virtio_pci \
virtio_mmio failover net_failover virtio_net"
MMIO_PRESENT=/sys/bus/acpi/devices/LNRO0005:00

moddir=$(ls -d "$kroot"/lib/modules/*/ 2>/dev/null | head -n1)
[ -n "$moddir" ] || { echo "mkinitramfs: no lib/modules in $kroot (run mk/deps.sh linux)" >&2; exit 1; }
for f in "$init" "$httpd"; do
	[ -x "$f" ] || { echo "mkinitramfs: $f missing or not executable" >&2; exit 1; }
done
for item in "$@"; do
	case "$item" in
	/?*=?*) [ -f "${item#*=}" ] || { echo "mkinitramfs: ${item#*=} missing" >&2; exit 1; } ;;
	*) echo "mkinitramfs: '$item' is not PATH=FILE with an absolute PATH" >&2; exit 2 ;;
	esac
done

stage=$(mktemp -d "${out}.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,lib/modules}
install -m 0755 "$init" "$stage/init"
install -m 0755 "$httpd" "$stage/bin/httpd"
mkdir -m 1777 "$stage/tmp"
for item in "$@"; do
	dest=${item%%=*} file=${item#*=}
	mkdir -p "$stage$(dirname "$dest")"
	if [ ! -x "$file" ]; then
		install -m 0644 "$file" "$stage$dest"
		continue
	fi
	install -m 0755 "$file" "$stage$dest"
	# ldd fails ("not a dynamic executable") for a static program.
	deps=$(ldd "$file" 2>/dev/null) || continue
	libs=$(echo "$deps" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
	[ -n "$libs" ] || { echo "mkinitramfs: ldd found no libraries for $file" >&2; exit 1; }
	for lib in $libs; do
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
done
: >"$stage/lib/modules/load-order"
for m in $MODULES; do
	ko=$(find "$moddir" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" | head -n1)
	[ -n "$ko" ] || { echo "mkinitramfs: module $m not found under $moddir" >&2; exit 1; }
	case "$ko" in
	*.ko) cp "$ko" "$stage/lib/modules/$m.ko" ;;
	*.xz) xz -dc "$ko" >"$stage/lib/modules/$m.ko" ;;
	*) echo "mkinitramfs: cannot unpack $ko" >&2; exit 1 ;;
	esac
	case "$m" in
	virtio_mmio) echo "$m $MMIO_PRESENT" >>"$stage/lib/modules/load-order" ;;
	*) echo "$m" >>"$stage/lib/modules/load-order" ;;
	esac
done

# Sorted names and fixed owners keep the archive the same from run to run.
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc --owner=0:0 --reproducible) | gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: $out ($(stat -c %s "$out") bytes)"
