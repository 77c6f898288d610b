# tools/lib/guests.sh: the table of guests the benchmark knows how to boot;
# the tests of those guests boot them from it too (sourced; bash).
#
# A guest spec is one of
#   linux            the Linux guest (build/linux/vmlinux + initrd.img)
#   linux-tuned      the same image with idle=poll mitigations=off on its
#                    command line and busy_poll=50, which its init turns into
#                    net.core.busy_poll and net.core.busy_read (bench/linux/init.c)
#   linux-epoll      the same image running httpd-epoll (app=httpd-epoll):
#                    httpd with epoll behind its loop's wait (apps/httpd/ready.h)
#   linux-nginx      the same kernel with initrd-nginx.img running Debian's
#                    nginx through bench/nginx/nginx-run (app=nginx-run)
#   native           the same httpd run on the host: no VM, the ceiling
#   native-nginx     nginx-run and Debian's nginx on the host, with the
#                    configuration linux-nginx has
#   uk               the unikernel's benchmark build, $UK_HTTPD (default
#                    build/apps/httpd-all.elf: the `all` variant, a release build)
#   floor            the floor: $UK_FLOOR (default build/apps/floor-all.elf, the
#                    `all` variant's release build, as uk's), a minimal HTTP
#                    responder on the virtio-net driver, no TCP/IP stack
#                    (apps/floor/floor.c): each request answered with the least
#                    work the VMM path allows, the reference every ratio can be
#                    read against (docs/benchmarks.md, "The floor"); prints its
#                    counters on Ctrl-T
#   uk:IMAGE         a unikernel app image, booted by the loader
#   NAME=uk:IMAGE    the same, reported under NAME
#   NAME=uk:IMAGE+OPT[+OPT...]   the same with kernel options on its command
#                    line (e.g. norepair=uk:build/apps/httpd-all.elf+vnet_repair=0)
#   NAME=linux:KERNEL:INITRD   another Linux kernel/initramfs pair
# Its images are under GUESTS_BUILD (default $BUILD, else build).
# guest_resolve SPEC sets
#   GUEST_NAME       the name in results (letters, digits, - _ . only)
#   GUEST_KIND       native | linux | uk (the last two boot under QEMU)
#   GUEST_KERNEL     qemu-run's KERNEL argument
#   GUEST_INITRD     qemu-run's second argument (initramfs, or the app image)
#   GUEST_PREFIX     command-line words before the network options
#   GUEST_BYTES      image size: kernel plus initramfs/app, or the server binary
#                    (native-nginx: nginx-run and nginx, without its libraries)
#   GUEST_CTRL_T     1 when the guest prints its counters on a Ctrl-T at its
#                    console (the unikernel), else empty
#   GUEST_APP        the server program of a Linux or native guest (httpd,
#                    httpd-epoll, nginx-run): $BUILD/host/$GUEST_APP.flags
#                    says how it was built, for meta.txt; else empty
#   GUEST_SERVER     native guests: the names of the processes from the one
#                    started (under timeout) down to the one whose CPU is the
#                    server's, each a child of the one before ("httpd";
#                    "nginx-run nginx nginx": nginx's one worker, which serves
#                    every request while its master and nginx-run sleep)
# and returns 1 with a message when the spec is bad or its files are missing.
#
# image_flags FILE prints the flags in FILE (IMAGE.flags beside a unikernel
# image, written by its make rule; build/host/PROGRAM.flags for a host
# program), one line, or says they were not recorded.
# The network options (ip= gw= mask=) and `-- app args` are added by the
# caller: the unikernel and the Linux guest read the same convention.

GUESTS_BUILD=${BUILD:-build}
LOADER=${LOADER:-$GUESTS_BUILD/loader/loader.elf}
# The tuned Linux guest's kernel options: a polling idle loop, no speculation
# mitigations, and busy polling of sockets for 50 us (init writes it).
LINUX_TUNED_OPTIONS="idle=poll mitigations=off busy_poll=50"
NGINX_PROG=${NGINX_PROG:-/usr/sbin/nginx}

guest_resolve() {
	local spec=$1 name kind rest
	local sized=()
	GUEST_NAME="" GUEST_KIND="" GUEST_KERNEL="" GUEST_INITRD="" GUEST_PREFIX="" GUEST_BYTES=0
	GUEST_CTRL_T="" GUEST_APP="" GUEST_SERVER=""
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
		GUEST_KIND=native GUEST_APP=httpd GUEST_SERVER=httpd
		GUEST_KERNEL=$GUESTS_BUILD/host/httpd ;;
	native-nginx)
		GUEST_KIND=native GUEST_APP=nginx-run GUEST_SERVER="nginx-run nginx nginx"
		GUEST_KERNEL=$GUESTS_BUILD/host/nginx-run sized=("$NGINX_PROG") ;;
	linux)
		GUEST_KIND=linux GUEST_APP=httpd
		GUEST_KERNEL=$GUESTS_BUILD/linux/vmlinux GUEST_INITRD=$GUESTS_BUILD/linux/initrd.img
		GUEST_PREFIX="console=ttyS0 quiet panic=-1" ;;
	linux-tuned)
		GUEST_KIND=linux GUEST_APP=httpd
		GUEST_KERNEL=$GUESTS_BUILD/linux/vmlinux GUEST_INITRD=$GUESTS_BUILD/linux/initrd.img
		GUEST_PREFIX="console=ttyS0 quiet panic=-1 $LINUX_TUNED_OPTIONS" ;;
	linux-epoll)
		GUEST_KIND=linux GUEST_APP=httpd-epoll
		GUEST_KERNEL=$GUESTS_BUILD/linux/vmlinux GUEST_INITRD=$GUESTS_BUILD/linux/initrd.img
		GUEST_PREFIX="console=ttyS0 quiet panic=-1 app=httpd-epoll" ;;
	linux-nginx)
		GUEST_KIND=linux GUEST_APP=nginx-run
		GUEST_KERNEL=$GUESTS_BUILD/linux/vmlinux GUEST_INITRD=$GUESTS_BUILD/linux/initrd-nginx.img
		GUEST_PREFIX="console=ttyS0 quiet panic=-1 app=nginx-run" ;;
	linux:*:*)
		kind=${rest#linux:}
		GUEST_KIND=linux GUEST_APP=httpd
		GUEST_KERNEL=${kind%%:*} GUEST_INITRD=${kind#*:}
		GUEST_PREFIX="console=ttyS0 quiet panic=-1" ;;
	uk)
		GUEST_KIND=uk
		GUEST_KERNEL=$LOADER GUEST_INITRD=${UK_HTTPD:-$GUESTS_BUILD/apps/httpd-all.elf} GUEST_CTRL_T=1 ;;
	floor)
		GUEST_KIND=uk
		GUEST_KERNEL=$LOADER GUEST_INITRD=${UK_FLOOR:-$GUESTS_BUILD/apps/floor-all.elf} GUEST_CTRL_T=1 ;;
	uk:?*)
		GUEST_KIND=uk
		kind=${rest#uk:}
		GUEST_KERNEL=$LOADER GUEST_INITRD=${kind%%+*} GUEST_CTRL_T=1
		[ "$kind" != "${kind%%+*}" ] && GUEST_PREFIX=$(echo "${kind#*+}" | tr '+' ' ') ;;
	*) echo "bench: unknown guest '$spec' (linux, linux-tuned, linux-epoll, linux-nginx, native," \
		"native-nginx, uk, floor, uk:IMAGE, NAME=uk:IMAGE)" >&2; return 1 ;;
	esac
	local f
	for f in $GUEST_KERNEL $GUEST_INITRD "${sized[@]}"; do
		[ -f "$f" ] || { echo "bench: guest $GUEST_NAME: $f missing" >&2; return 1; }
		GUEST_BYTES=$((GUEST_BYTES + $(stat -c %s "$f")))
	done
}

image_flags() {
	local f=$1
	[ -f "$f" ] && tr '\n' ' ' <"$f" | sed 's/ *$//' && return
	echo "not recorded (no $f)"
}
