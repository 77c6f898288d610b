# guests.sh: the table of guests the benchmark knows how to boot (sourced).
#
# A guest spec is one of
#   linux            the Linux guest (build/linux/vmlinux + initrd.img)
#   linux-tuned      the same image with idle=poll mitigations=off on its
#                    command line and busy_poll=50, which its init turns into
#                    net.core.busy_poll and net.core.busy_read (bench/linux/init.c)
#   native           the same httpd run on the host: no VM, the ceiling
#   uk               the unikernel's benchmark build, $UK_HTTPD (default
#                    build/apps/httpd-all.elf: the `all` variant, a release build)
#   uk:IMAGE         a unikernel app image, booted by the loader
#   NAME=uk:IMAGE    the same, reported under NAME
#   NAME=uk:IMAGE+OPT[+OPT...]   the same with kernel options on its command
#                    line (e.g. norepair=uk:build/apps/httpd-all.elf+vnet_repair=0)
#   NAME=linux:KERNEL:INITRD   another Linux kernel/initramfs pair
# guest_resolve SPEC sets
#   GUEST_NAME       the name in results (letters, digits, - _ . only)
#   GUEST_KIND       native | linux | uk (the last two boot under QEMU)
#   GUEST_KERNEL     qemu-run's KERNEL argument
#   GUEST_INITRD     qemu-run's second argument (initramfs, or the app image)
#   GUEST_PREFIX     command-line words before the network options
#   GUEST_BYTES      image size: kernel plus initramfs/app, or the httpd binary
#   GUEST_CTRL_T     1 when the guest prints its counters on a Ctrl-T at its
#                    console (the unikernel), else empty
# and returns 1 with a message when the spec is bad or its files are missing.
# The network options (ip= gw= mask=) and `-- app args` are added by the
# caller: the unikernel and the Linux guest read the same convention.

BENCH_BUILD=${BUILD:-build}
LOADER=${LOADER:-$BENCH_BUILD/loader/loader.elf}
# The tuned Linux guest's kernel options: a polling idle loop, no speculation
# mitigations, and busy polling of sockets for 50 us (init writes it).
LINUX_TUNED_OPTIONS="idle=poll mitigations=off busy_poll=50"

guest_resolve() {
	local spec=$1 name kind rest
	GUEST_NAME="" GUEST_KIND="" GUEST_KERNEL="" GUEST_INITRD="" GUEST_PREFIX="" GUEST_BYTES=0
	GUEST_CTRL_T=""
	name=${spec%%=*}
	if [ "$name" = "$spec" ]; then
		case "$spec" in
		uk:*) name=$(basename "${spec#uk:}" .elf) ;;
		*) name=$spec ;;
		esac
		rest=$spec
	else
		rest=${spec#*=}
	fi
	case "$name" in
	"" | *[!A-Za-z0-9._-]*) echo "bench: bad guest name in '$spec'" >&2; return 1 ;;
	esac
	GUEST_NAME=$name
	case "$rest" in
	native)
		GUEST_KIND=native
		GUEST_KERNEL=$BENCH_BUILD/host/httpd ;;
	linux)
		GUEST_KIND=linux
		GUEST_KERNEL=$BENCH_BUILD/linux/vmlinux GUEST_INITRD=$BENCH_BUILD/linux/initrd.img
		GUEST_PREFIX="console=ttyS0 quiet panic=-1" ;;
	linux-tuned)
		GUEST_KIND=linux
		GUEST_KERNEL=$BENCH_BUILD/linux/vmlinux GUEST_INITRD=$BENCH_BUILD/linux/initrd.img
		GUEST_PREFIX="console=ttyS0 quiet panic=-1 $LINUX_TUNED_OPTIONS" ;;
	linux:*:*)
		kind=${rest#linux:}
		GUEST_KIND=linux
		GUEST_KERNEL=${kind%%:*} GUEST_INITRD=${kind#*:}
		GUEST_PREFIX="console=ttyS0 quiet panic=-1" ;;
	uk)
		GUEST_KIND=uk
		GUEST_KERNEL=$LOADER GUEST_INITRD=${UK_HTTPD:-$BENCH_BUILD/apps/httpd-all.elf} GUEST_CTRL_T=1 ;;
	uk:?*)
		GUEST_KIND=uk
		kind=${rest#uk:}
		GUEST_KERNEL=$LOADER GUEST_INITRD=${kind%%+*} GUEST_CTRL_T=1
		[ "$kind" != "${kind%%+*}" ] && GUEST_PREFIX=$(echo "${kind#*+}" | tr '+' ' ') ;;
	*) echo "bench: unknown guest '$spec' (linux, linux-tuned, native, uk, uk:IMAGE, NAME=uk:IMAGE)" >&2; return 1 ;;
	esac
	local f
	for f in $GUEST_KERNEL $GUEST_INITRD; do
		[ -f "$f" ] || { echo "bench: guest $GUEST_NAME: $f missing" >&2; return 1; }
		GUEST_BYTES=$((GUEST_BYTES + $(stat -c %s "$f")))
	done
}
