#!/usr/bin/env bash
# POSIX behaviour of the socket layer inside the guest (tests/images/sockcheck.c):
# poll() timeouts with no traffic, TCP_NODELAY round trip, connect refused,
# errno values, EMFILE and descriptor reuse. Every check must pass.
. "$(dirname "$0")/../lib/boot.sh"

boot "$ROOT/$BUILD/apps/sockcheck.elf" --net user -- 'quiet'
expect '^[0-9]+ passed, 0 failed$'
expect_not '^not ok'
expect_rc 0
expect '^ok 2 poll with a timeout returns 0 on time with no traffic$'
