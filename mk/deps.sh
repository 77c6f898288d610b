#!/usr/bin/env bash
# deps.sh: install and fetch what the build needs, idempotently.
#
#   mk/deps.sh packages   Debian packages (apt-get, only those missing)
#   mk/deps.sh lwip       lwIP 2.1.3 source from Debian's `lwip` source package
#   mk/deps.sh newlib     newlib 3.3.0 from `newlib-source`, built for bare-metal x86_64
#   mk/deps.sh linux      Debian's linux-image-amd64, downloaded and unpacked (not installed)
#   mk/deps.sh fuzz       clang and libFuzzer (for make fuzz)
#   mk/deps.sh qemu10     QEMU 10 from bookworm-backports, unpacked into deps/qemu10
#                         (never installed: the system's QEMU 7.2 stays the default)
#   mk/deps.sh qemu-plugin   the TCG plugin header (include/qemu/qemu-plugin.h) of
#                         the system's QEMU, from Debian's `qemu` source package
#   mk/deps.sh qemu10-plugin the same for deps/qemu10, from bookworm-backports
#   mk/deps.sh all        packages, lwip and newlib
#
# Everything third-party lands under $DEPS (default: deps/, ignored by git).
# Each step leaves a stamp file; a second run with the stamp present does nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEPS=${DEPS:-$ROOT/deps}
mkdir -p "$DEPS"

PACKAGES="gcc make binutils qemu-system-x86 apache2-utils libcmocka-dev newlib-source \
cpio xz-utils gzip curl iproute2 gnuplot-nox procps gdb dpkg-dev \
libc6-dev python3 wrk util-linux iperf3 slowhttptest nginx busybox-static passt nghttp2-client"

log() { echo "deps: $*" >&2; }

apt_ready=0
apt_update_once() {
	[ $apt_ready = 1 ] && return
	log "apt-get update"
	apt-get update -qq
	apt_ready=1
}

need_root() {
	if [ "$(id -u)" != 0 ]; then
		log "missing packages ($*) and not root: install them, or run as root"
		exit 1
	fi
}

# Install those of the named Debian packages that are missing.
install_missing() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return
	need_root "${missing[*]}"
	apt_update_once
	log "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# shellcheck disable=SC2086 # PACKAGES is a list
packages() { install_missing $PACKAGES; }

# A private apt configuration with deb-src entries, so `apt-get source` works
# without touching the system's own source lists.
private_apt_src() {
	local dir=$DEPS/apt
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	if [ ! -f "$dir/sources.list" ]; then
		local f
		: >"$dir/sources.list.tmp"
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			sed -e 's/^Types:.*/Types: deb-src/' "$f" >>"$dir/sources.list.tmp"
			echo >>"$dir/sources.list.tmp"
		done
		mv "$dir/sources.list.tmp" "$dir/debian-src.sources"
		: >"$dir/sources.list"
		if [ -f /etc/apt/sources.list ]; then
			sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"$dir/sources.list"
		fi
	fi
	APT_SRC_OPTS=(-o APT::Sandbox::User=root -o "Dir::Etc::sourcelist=$dir/sources.list"
		-o "Dir::Etc::sourceparts=$dir"
		-o "Dir::State::lists=$dir/lists"
		-o "Dir::Cache::archives=$dir/archives")
	if [ ! -f "$dir/updated" ]; then
		log "apt-get update (private deb-src lists)"
		apt-get "${APT_SRC_OPTS[@]}" update -qq
		touch "$dir/updated"
	fi
}

lwip() {
	[ -f "$DEPS/lwip/.stamp" ] && return
	private_apt_src
	local work=$DEPS/lwip-src
	rm -rf "$work" && mkdir -p "$work"
	log "fetching lwip source package"
	(cd "$work" && apt-get "${APT_SRC_OPTS[@]}" source --download-only -qq lwip >/dev/null)
	local tarball
	tarball=$(ls "$work"/lwip_*.orig.tar.* | head -n1)
	rm -rf "$DEPS/lwip"
	mkdir -p "$DEPS/lwip"
	tar -xf "$tarball" -C "$DEPS/lwip" --strip-components=1
	grep -q '"2.1.3"' "$DEPS/lwip/src/include/lwip/init.h" ||
		grep -q 'LWIP_VERSION_REVISION *3' "$DEPS/lwip/src/include/lwip/init.h" ||
		{ log "unexpected lwIP version"; exit 1; }
	rm -rf "$work"
	touch "$DEPS/lwip/.stamp"
}

# newlib: configured for x86_64-elf with the host gcc. The flags must match the
# kernel's: no red zone (interrupts run on the same stack), no PIC, small code
# model (the image is linked below 2 GiB), no stack protector (there is no TLS
# canary before the kernel sets one up).
NEWLIB_CFLAGS="-ffreestanding -mno-red-zone -fno-pic -fno-pie -mcmodel=small -fno-stack-protector -fno-omit-frame-pointer -g -O2"

# Configure options; a change of these or of the flags rebuilds newlib.
NEWLIB_CONFIG="--target=x86_64-elf --disable-multilib --disable-newlib-supplied-syscalls \
--enable-newlib-reent-small --disable-nls --enable-newlib-io-c99-formats \
--enable-newlib-io-long-long"

newlib() {
	local stamp=$DEPS/newlib/.stamp want="$NEWLIB_CONFIG $NEWLIB_CFLAGS"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		touch "$stamp"
		return
	fi
	local tarball=/usr/src/newlib/newlib-3.3.0.tar.xz
	[ -f "$tarball" ] || { log "$tarball missing (package newlib-source)"; exit 1; }
	local src=$DEPS/newlib-src build=$DEPS/newlib-build
	rm -rf "$src" "$build" "$DEPS/newlib"
	mkdir -p "$src" "$build"
	log "unpacking newlib 3.3.0"
	tar -xf "$tarball" -C "$src" --strip-components=1
	log "building newlib (about a minute)"
	# shellcheck disable=SC2086 # NEWLIB_CONFIG is a list of options
	(cd "$build" && "$src/configure" $NEWLIB_CONFIG --prefix="$DEPS/newlib" \
		CC_FOR_TARGET="gcc $NEWLIB_CFLAGS" CFLAGS_FOR_TARGET="$NEWLIB_CFLAGS" \
		AR_FOR_TARGET=ar RANLIB_FOR_TARGET=ranlib AS_FOR_TARGET=as \
		LD_FOR_TARGET=ld NM_FOR_TARGET=nm >"$build/configure.log" 2>&1 &&
		make -j"$(nproc)" all-target-newlib >"$build/make.log" 2>&1 &&
		make install-target-newlib >"$build/install.log" 2>&1) ||
		{ log "newlib build failed, see $build/*.log"; exit 1; }
	rm -rf "$src" "$build"
	echo "$want" >"$stamp"
}

linux() {
	[ -f "$DEPS/linux/.stamp" ] && return
	local work=$DEPS/linux-dl
	rm -rf "$work" "$DEPS/linux" && mkdir -p "$work" "$DEPS/linux"
	apt_update_once
	local meta image
	meta=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
	[ -n "$meta" ] || { log "cannot resolve linux-image-amd64"; exit 1; }
	log "downloading $meta"
	(cd "$work" && apt-get -o APT::Sandbox::User=root download -qq "$meta" >/dev/null)
	image=$(ls "$work"/linux-image-*.deb 2>/dev/null | head -n1)
	[ -n "$image" ] || { log "download of $meta failed"; exit 1; }
	dpkg-deb -x "$image" "$DEPS/linux/root"
	ls "$DEPS"/linux/root/boot/vmlinuz-* >/dev/null 2>&1 || { log "$meta holds no vmlinuz"; exit 1; }
	echo "$meta" >"$DEPS/linux/package"
	rm -rf "$work"
	touch "$DEPS/linux/.stamp"
}

# QEMU 10 (tools/qemu-run QEMU=10): qemu-system-x86, -common and -data from
# Debian's bookworm-backports suite, fetched through a private sources file
# (the system's own lists are left alone) and unpacked with dpkg-deb -x into
# $DEPS/qemu10/root, never installed. Its binary runs with the system's
# libraries; tools/qemu-run gives it its own firmware (-L) and module
# directory (QEMU_MODULE_DIR). QEMU looks for a module there first and then
# in the system's directory, where 7.2's modules refuse to load into 10
# ("Only modules from the same build can be loaded", and qemu-run then reads
# QEMU's own failure). 7.2 ships the OpenGL and SPICE modules in
# qemu-system-common, 10 in packages of their own: fetching those too puts a
# module of the same build in front of every module name 7.2 has. Their
# libraries are those 7.2's qemu-system-common already depends on.
QEMU10_SUITE=bookworm-backports
QEMU10_PACKAGES="qemu-system-x86 qemu-system-common qemu-system-data \
qemu-system-modules-opengl qemu-system-modules-spice"

# A private apt configuration for the backports suite: binary packages
# (`deb`, the default; in $DEPS/apt-backports) or, with the argument deb-src,
# source packages (in $DEPS/apt-backports-src).
private_apt_backports() {
	local types=${1:-deb} dir=$DEPS/apt-backports
	[ "$types" = deb-src ] && dir=$DEPS/apt-backports-src
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	if [ ! -f "$dir/backports.sources" ]; then
		# The system's Debian archive entries (not the security archive,
		# which has no backports suite), with the one suite we want.
		local f
		: >"$dir/backports.sources.tmp"
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk -v suite="$QEMU10_SUITE" -v types="$types" '
				function flush() { if (block != "" && block ~ /\nURIs:[^\n]*\/debian\/?(\n|$)/) printf "%s\n", block; block = "" }
				/^[ \t]*$/ { flush(); next }
				/^Types:/ { $0 = "Types: " types }
				/^Suites:/ { $0 = "Suites: " suite }
				{ block = block "\n" $0 }
				END { flush() }' "$f" >>"$dir/backports.sources.tmp"
		done
		if [ -f /etc/apt/sources.list ]; then
			sed -n "s|^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*/debian/\{0,1\}\) [^ ]* \(.*\)|$types \1\2 $QEMU10_SUITE \3|p" \
				/etc/apt/sources.list >"$dir/sources.list.tmp"
		else
			: >"$dir/sources.list.tmp"
		fi
		[ -s "$dir/backports.sources.tmp" ] || [ -s "$dir/sources.list.tmp" ] ||
			{ log "no Debian archive in the system's apt sources: cannot reach $QEMU10_SUITE"; exit 1; }
		mv "$dir/sources.list.tmp" "$dir/sources.list"
		mv "$dir/backports.sources.tmp" "$dir/backports.sources"
	fi
	APT_BP_OPTS=(-o APT::Sandbox::User=root -o "Dir::Etc::sourcelist=$dir/sources.list"
		-o "Dir::Etc::sourceparts=$dir"
		-o "Dir::State::lists=$dir/lists"
		-o "Dir::Cache::archives=$dir/archives")
	if [ ! -f "$dir/updated" ]; then
		log "apt-get update (private $QEMU10_SUITE lists)"
		apt-get "${APT_BP_OPTS[@]}" update -qq
		touch "$dir/updated"
	fi
}

qemu10() {
	local dest=$DEPS/qemu10 want
	want=$(echo $QEMU10_SUITE $QEMU10_PACKAGES)
	[ -f "$dest/.stamp" ] && [ "$(sed -n 2p "$dest/.stamp")" = "$want" ] && return
	private_apt_backports
	local work=$DEPS/qemu10-dl p deb
	rm -rf "$work" "$dest" && mkdir -p "$work" "$dest/root"
	for p in $QEMU10_PACKAGES; do
		log "downloading $p/$QEMU10_SUITE"
		(cd "$work" && apt-get "${APT_BP_OPTS[@]}" download -qq "$p/$QEMU10_SUITE" >/dev/null) ||
			{ log "download of $p from $QEMU10_SUITE failed"; exit 1; }
	done
	for deb in "$work"/*.deb; do
		dpkg-deb -x "$deb" "$dest/root"
		dpkg-deb -f "$deb" Package Version | paste -sd' ' >>"$dest/packages"
	done
	local bin=$dest/root/usr/bin/qemu-system-x86_64 version
	[ -x "$bin" ] || { log "no qemu-system-x86_64 in the $QEMU10_SUITE packages"; exit 1; }
	version=$("$bin" --version | sed -n '1s/^QEMU emulator version \([0-9][0-9.]*\).*/\1/p')
	case "$version" in
	10.*) ;;
	*) log "$QEMU10_SUITE holds QEMU '${version:-?}', not 10.x (see $dest/packages)"; exit 1 ;;
	esac
	rm -rf "$work"
	printf '%s\n%s\n' "$version" "$want" >"$dest/.stamp"
	log "QEMU $version in $dest/root (tools/qemu-run QEMU=10)"
}

# The TCG plugin API (tools/plugin/insncount.c) is one header, in no binary
# package: include/qemu/qemu-plugin.h of the `qemu` source package. A plugin
# must be built against the header of the QEMU that loads it (each QEMU
# accepts only plugins whose qemu_plugin_version it supports), so the source
# package is the one the emulator's binary package was built from, at its
# version. Only the header leaves the orig tarball (it unpacks in about two
# seconds); the Debian tarball is read to check that no Debian patch touches
# it. Lands in $DEPS/qemu-plugin/NAME/qemu-plugin.h, with the source version
# in .stamp.
#   plugin_header NAME SOURCE-VERSION APT-OPTIONS...
plugin_header() {
	local name=$1 version=$2 dest=$DEPS/qemu-plugin/$1
	shift 2
	[ -f "$dest/.stamp" ] && [ "$(cat "$dest/.stamp")" = "$version" ] && return
	local work=$DEPS/qemu-plugin-src
	rm -rf "$work" "$dest" && mkdir -p "$work" "$dest"
	log "fetching the qemu source package $version (for its plugin header)"
	# Lists older than the installed QEMU lack its version: refresh them once.
	# What matters is the orig tarball: a mirror has been seen to serve it
	# and not the backports' .dsc and Debian tarball.
	(cd "$work" && apt-get "$@" source --download-only -qq "qemu=$version" >/dev/null 2>&1) ||
		{ apt-get "$@" update -qq; (cd "$work" && apt-get "$@" source --download-only -qq "qemu=$version" >/dev/null 2>&1) || true; }
	local orig debian header
	orig=$(ls "$work"/qemu_*.orig.tar.* 2>/dev/null | head -n1) || true
	debian=$(ls "$work"/qemu_*.debian.tar.* 2>/dev/null | head -n1) || true
	[ -n "$orig" ] || { log "cannot fetch the qemu source package at version $version"; exit 1; }
	tar -xf "$orig" -C "$work" --wildcards --no-anchored 'include/qemu/qemu-plugin.h'
	header=$(find "$work" -path '*/include/qemu/qemu-plugin.h' | head -n1)
	[ -n "$header" ] || { log "$orig holds no include/qemu/qemu-plugin.h"; exit 1; }
	# (grep reads to the end: an early exit would kill tar, and pipefail fail the test.)
	if [ -z "$debian" ]; then
		log "warning: qemu $version's Debian tarball could not be fetched: its patches are unchecked (the header is upstream's)"
	elif tar -xOf "$debian" --wildcards --no-anchored 'patches/*' | grep '^+++ .*include/qemu/qemu-plugin\.h' >/dev/null; then
		log "a Debian patch of qemu $version changes qemu-plugin.h: apply it before building a plugin"
		exit 1
	fi
	cp "$header" "$dest/qemu-plugin.h"
	rm -rf "$work"
	echo "$version" >"$dest/.stamp"
	log "qemu-plugin.h of qemu $version in $dest ($(sed -n 's/^#define QEMU_PLUGIN_VERSION /plugin API version /p' "$dest/qemu-plugin.h"))"
}

# The system's QEMU (7.2): the source version of its installed binary package.
qemu_plugin() {
	local version
	version=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) ||
		{ log "qemu-system-x86 is not installed (mk/deps.sh packages)"; exit 1; }
	private_apt_src
	plugin_header 7.2 "$version" "${APT_SRC_OPTS[@]}"
}

# deps/qemu10: the source version of the qemu-system-x86 it unpacked (a
# binary-only rebuild's +bN suffix is not the source's), from the backports
# suite's deb-src lists. Its header includes glib's.
qemu10_plugin() {
	qemu10
	install_missing libglib2.0-dev pkg-config
	local version
	version=$(sed -n 's/^Package: qemu-system-x86 Version: //p' "$DEPS/qemu10/packages" | sed 's/+b[0-9]*$//')
	[ -n "$version" ] || { log "no qemu-system-x86 in $DEPS/qemu10/packages"; exit 1; }
	private_apt_backports deb-src
	plugin_header 10 "$version" "${APT_BP_OPTS[@]}"
}

# Fuzzing (make fuzz only): clang and its libFuzzer runtime.
fuzz() { install_missing clang libclang-rt-14-dev; }

case "${1:-all}" in
packages) packages ;;
lwip) lwip ;;
newlib) newlib ;;
linux) linux ;;
fuzz) fuzz ;;
qemu10) qemu10 ;;
qemu-plugin) qemu_plugin ;;
qemu10-plugin) qemu10_plugin ;;
all) packages; lwip; newlib ;;
*) echo "usage: $0 packages|lwip|newlib|linux|fuzz|qemu10|qemu-plugin|qemu10-plugin|all" >&2; exit 2 ;;
esac
