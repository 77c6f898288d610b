#!/usr/bin/env bash
# mkinitramfs.sh: build the Linux guest's initramfs (gzip'd newc cpio).
#
#   bench/linux/mkinitramfs.sh OUT KERNEL_ROOT INIT HTTPD [IPERF [IPERF3]]
#     OUT          the initramfs to write
#     KERNEL_ROOT  the unpacked linux-image package (deps/linux/root)
#     INIT         our static init (bench/linux/init.c, built)
#     HTTPD        the static httpd
#     IPERF        the static iperf3 server (apps/iperf), optional
#     IPERF3       Debian's iperf3 program (/usr/bin/iperf3), optional: packed
#                  with the shared libraries ldd names, where ldd finds them
#
# It holds /init, /bin/httpd (and /bin/iperf, /bin/iperf3: init's app= option
# picks one) and the virtio modules with the order to load them in
# (/lib/modules/load-order): Debian's kernel has no modules.dep in the
# package, and virtio, virtio_pci and virtio_net are modules there.
set -euo pipefail

[ $# -ge 4 ] && [ $# -le 6 ] || { sed -n '2,/^set /p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2; }
out=$1 kroot=$2 init=$3 httpd=$4 iperf=${5:-} iperf3=${6:-}

# Dependencies first; virtio_pci needs the legacy helper even with
# disable-legacy=on (its symbols are linked in).
MODULES="virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio virtio_pci \
failover net_failover virtio_net"

moddir=$(ls -d "$kroot"/lib/modules/*/ 2>/dev/null | head -n1)
[ -n "$moddir" ] || { echo "mkinitramfs: no lib/modules in $kroot (run mk/deps.sh linux)" >&2; exit 1; }
for f in "$init" "$httpd" $iperf $iperf3; do
	[ -x "$f" ] || { echo "mkinitramfs: $f missing or not executable" >&2; exit 1; }
done

stage=$(mktemp -d "${out}.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,lib/modules}
install -m 0755 "$init" "$stage/init"
install -m 0755 "$httpd" "$stage/bin/httpd"
[ -z "$iperf" ] || install -m 0755 "$iperf" "$stage/bin/iperf"
if [ -n "$iperf3" ]; then
	# A dynamic program: the libraries and the loader go where ldd finds them
	# on this machine (the guest's loader searches the same built-in paths).
	install -m 0755 "$iperf3" "$stage/bin/iperf3"
	mkdir -m 1777 "$stage/tmp" # iperf3 keeps each stream's buffer in a file there
	libs=$(ldd "$iperf3" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
	[ -n "$libs" ] || { echo "mkinitramfs: ldd found no libraries for $iperf3" >&2; exit 1; }
	for lib in $libs; do
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
fi
: >"$stage/lib/modules/load-order"
for m in $MODULES; do
	ko=$(find "$moddir" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" | head -n1)
	[ -n "$ko" ] || { echo "mkinitramfs: module $m not found under $moddir" >&2; exit 1; }
	case "$ko" in
	*.ko) cp "$ko" "$stage/lib/modules/$m.ko" ;;
	*.xz) xz -dc "$ko" >"$stage/lib/modules/$m.ko" ;;
	*) echo "mkinitramfs: cannot unpack $ko" >&2; exit 1 ;;
	esac
	echo "$m" >>"$stage/lib/modules/load-order"
done

# Sorted names and fixed owners keep the archive the same from run to run.
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc --owner=0:0 --reproducible) | gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: $out ($(stat -c %s "$out") bytes)"
