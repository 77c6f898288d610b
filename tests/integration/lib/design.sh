# lib/design.sh: which build of an image a test boots, and on how many CPUs
# (sourced by lib/boot.sh and lib/net.sh; `make test-smp` sets SMP_DESIGN).
#
# With SMP_DESIGN empty (every other run) nothing changes: each test boots
# the image it names on one vCPU. With SMP_DESIGN a design's name (one of
# SMP_DESIGNS in mk/variants.mk, e.g. smp-lock), the helpers that start an
# image (lib/boot.sh's boot, lib/machine.sh's serve, lib/net.sh's uk_test and
# uk_tap_start, lib/hostile.sh, lib/iperf.sh, and the tests that boot by
# hand) boot the design's build of it instead, apps/NAME-DESIGN.elf beside
# apps/NAME.elf (`make smp-designs` builds them), on two vCPUs (qemu-run --smp 2, MTTCG)
# with the kernel option smp=2, the way the designs run (docs/design/smp.md).
# A test whose image the design does not build is skipped, saying so.
#
# Offers:
#   design_image PATH    sets DESIGN_IMAGE, the image to boot for PATH (an
#                        apps/NAME.elf), DESIGN_QEMU (an array: qemu-run's
#                        options for the design, empty without one),
#                        DESIGN_KOPTS (its kernel options, empty without
#                        one) and DESIGN_SMP (its vCPUs: 1 without one).
#                        Under a design with no build of PATH's app it ends
#                        the test as skipped (exit 77), a line saying which
#                        image is missing its last. PATH already a design's
#                        build (tests 73, 74, 76 name theirs): left as it
#                        is, and booted as the test boots it (nothing added:
#                        it gives the CPUs and options itself)
#   smp_designs          prints the designs, one a line: SMP_DESIGN when set,
#                        else SMP_DESIGNS (make passes it), else the list in
#                        mk/variants.mk

# The design's boot: two vCPUs and the option that starts the second.
DESIGN_CPUS=2
DESIGN_IMAGE="" DESIGN_QEMU=() DESIGN_KOPTS="" DESIGN_SMP=1

design_image() {
	local path=$1 design=${SMP_DESIGN:-} base d
	DESIGN_IMAGE=$path DESIGN_QEMU=() DESIGN_KOPTS="" DESIGN_SMP=1
	[ -n "$design" ] || return 0
	base=${path##*/}
	case $base in
	*.elf) ;;
	*) echo "design $design: '$path' is not an image (NAME.elf)"; exit 1 ;;
	esac
	for d in $design $(SMP_DESIGN="" smp_designs); do
		case $base in *-"$d".elf) return 0 ;; esac
	done
	DESIGN_IMAGE=${path%.elf}-$design.elf
	DESIGN_QEMU=(--smp "$DESIGN_CPUS") DESIGN_KOPTS="smp=$DESIGN_CPUS" DESIGN_SMP=$DESIGN_CPUS
	if [ ! -f "$DESIGN_IMAGE" ]; then
		echo "design $design: no ${DESIGN_IMAGE##*/} beside ${base}: the design does not build this app" \
			"(VARIANT_APPS_$design in mk/variants.mk), so this test is not run at -smp $DESIGN_CPUS"
		exit 77
	fi
	echo "design $design: booting ${DESIGN_IMAGE##*/} for $base, ${DESIGN_QEMU[*]}, kernel option $DESIGN_KOPTS"
}

smp_designs() {
	local list
	if [ -n "${SMP_DESIGN:-}" ]; then
		list=$SMP_DESIGN
	elif [ -n "${SMP_DESIGNS:-}" ]; then
		list=$SMP_DESIGNS
	else
		list=$(sed -n 's/^SMP_DESIGNS[ :]*= *//p' "${ROOT:-.}/mk/variants.mk")
	fi
	printf '%s\n' $list
}
