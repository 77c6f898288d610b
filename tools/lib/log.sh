# tools/lib/log.sh: a script's messages on stderr, each after the script's
# name, LOG_NAME, which the script sets before its first message (default:
# its file name) (sourced; bash).
#
# Offers:
#   log MSG...    prints "LOG_NAME: MSG" on stderr
#   die MSG...    the same, then exits 2 (a bad setting, a missing tool)

log() { echo "${LOG_NAME:-${0##*/}}: $*" >&2; }

die() {
	log "$@"
	exit 2
}
